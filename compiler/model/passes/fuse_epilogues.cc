#include "compiler/model/passes/fuse_epilogues.h"

#include <map>
#include <utility>

#include "compiler/graph/graph_util.h"
#include "compiler/operators/node_workload.h"

namespace tunefarm::graph {
namespace {

// Output channels of a fusable producer; 0 when not fusable. The producers are the nodes that are
// conv2d or dense tasks, as node_workload recognizes them (one recognizer: Gemm's alpha and beta
// are folded into the packed parameters there, so a Gemm with either fuses like any other).
int64_t OutputChannels(const Graph& g, const Node& n) {
  compiler::Workload w;
  if (!compiler::NodeWorkload(g, n, &w) || w.is_batch_matmul()) return 0;
  return w.is_dense() ? w.dense.out_features : w.conv.out_channels;
}

// The per-channel values of a constant that broadcasts along `channel_axis` of an output of `rank`
// (axis 1 for convs, the last axis for dense layers), or empty.
std::vector<float> PerChannel(const Value& c, int64_t channels, size_t rank, size_t channel_axis) {
  if (!c.constant || c.constant->dtype != DataType::kFloat32) return {};
  const auto& s = c.shape;
  if (c.constant->num_elements() != channels && c.constant->num_elements() != 1) return {};
  if (s.size() > rank) return {};
  // Right-aligned: the channel extent must sit on the channel axis, ones elsewhere.
  for (size_t i = 0; i < s.size(); ++i) {
    size_t axis = rank - s.size() + i;
    if (s[i] != 1 && axis != channel_axis) return {};
  }
  std::vector<float> out(static_cast<size_t>(channels));
  for (int64_t k = 0; k < channels; ++k)
    out[size_t(k)] = c.constant->f32[c.constant->num_elements() == 1 ? 0 : size_t(k)];
  return out;
}

bool HasActivation(const Node& n) { return n.epilogue.activation != FusedActivation::kNone; }

}  // namespace

int FuseEpilogues(Graph* g) {
  int absorbed = 0;
  for (size_t ni = 0; ni < g->nodes.size(); ++ni) {
    const int64_t channels = OutputChannels(*g, g->nodes[ni]);
    if (channels == 0 || HasActivation(g->nodes[ni])) continue;
    const size_t rank = g->values[size_t(g->nodes[ni].outputs[0])].shape.size();
    const size_t channel_axis = g->nodes[ni].op_type == "Conv" ? 1 : rank - 1;
    std::vector<int> uses = CountUses(*g);
    std::map<int, std::vector<size_t>> readers;
    for (size_t k = ni + 1; k < g->nodes.size(); ++k) {
      for (int in : g->nodes[k].inputs) {
        if (in >= 0) readers[in].push_back(k);
      }
    }
    bool has_residual = g->nodes[ni].inputs.size() > 3 && g->nodes[ni].inputs[3] >= 0;
    size_t last = ni;  // the position of the last absorbed node
    while (true) {
      int out = g->nodes[ni].outputs[0];
      if (uses[size_t(out)] != 1 || IsGraphOutput(*g, out) || readers[out].size() != 1) break;
      Node& next = g->nodes[readers[out][0]];
      bool absorbed_next = false;
      if (next.op_type == "Add" && next.inputs.size() == 2) {
        int other = next.inputs[0] == out ? next.inputs[1] : next.inputs[0];
        const Value& ov = g->values[size_t(other)];
        std::vector<float> bias = PerChannel(ov, channels, rank, channel_axis);
        if (!bias.empty() && !has_residual && !HasActivation(g->nodes[ni])) {
          Node& n = g->nodes[ni];
          if (n.inputs.size() > 2 && n.inputs[2] >= 0) {
            // A Gemm's C is scaled by its beta; the added bias is not: beta goes into the merged
            // bias and the node's beta becomes 1.
            const float beta = n.op_type == "Gemm" ? n.GetFloat("beta", 1.0f) : 1.0f;
            const auto& old = g->values[size_t(n.inputs[2])].constant;
            for (int64_t k = 0; k < channels; ++k) {
              bias[size_t(k)] += beta * old->f32[old->num_elements() == 1 ? 0 : size_t(k)];
            }
            if (n.Has("beta")) n.attrs["beta"].f = 1.0f;
          }
          ConstantData data{DataType::kFloat32, {channels}, std::move(bias), {}};
          int b = g->AddConstant(g->values[size_t(next.outputs[0])].name + ".bias", std::move(data));
          Node& n2 = g->nodes[ni];  // AddConstant does not touch nodes, but keep the pattern explicit
          if (n2.inputs.size() < 3) n2.inputs.resize(3, -1);
          n2.inputs[2] = b;
          absorbed_next = true;
        } else if (!ov.constant && ov.shape == g->values[size_t(out)].shape && !has_residual && other != out) {
          Node& n = g->nodes[ni];
          if (n.inputs.size() < 3) n.inputs.resize(3, -1);
          n.inputs.resize(4, -1);
          n.inputs[3] = other;
          has_residual = true;
          absorbed_next = true;
        }
      } else if (next.op_type == "PRelu" && next.inputs.size() == 2 && next.inputs[0] == out) {
        // Per-channel (or one) slopes: kept as input 4, shaped to broadcast over the output so the
        // untuned form applies it as the PRelu did.
        std::vector<float> slope = PerChannel(g->values[size_t(next.inputs[1])], channels, rank, channel_axis);
        if (!slope.empty()) {
          std::vector<int64_t> shape(rank - channel_axis, 1);
          shape[0] = channels;
          ConstantData data{DataType::kFloat32, std::move(shape), std::move(slope), {}};
          const int s = g->AddConstant(g->values[size_t(next.outputs[0])].name + ".slope", std::move(data));
          Node& n = g->nodes[ni];
          n.inputs.resize(5, -1);
          n.inputs[4] = s;
          n.epilogue.activation = FusedActivation::kPRelu;
          absorbed_next = true;
        }
      } else if (next.op_type == "Relu") {
        g->nodes[ni].epilogue.activation = FusedActivation::kRelu;
        absorbed_next = true;
      } else if (next.op_type == "Gelu") {
        const bool tanh = next.GetString("approximate", "none") == "tanh";
        g->nodes[ni].epilogue.activation = tanh ? FusedActivation::kGeluTanh : FusedActivation::kGelu;
        absorbed_next = true;
      } else if (next.op_type == "Clip") {
        float lo = next.GetFloat("min", -3.4e38f), hi = next.GetFloat("max", 3.4e38f);
        bool constant_bounds = true;
        for (size_t i = 1; i < next.inputs.size() && i < 3; ++i) {
          if (next.inputs[i] < 0) continue;
          const auto& c = g->values[size_t(next.inputs[i])].constant;
          if (!c || c->f32.size() != 1) {
            constant_bounds = false;
            continue;
          }
          (i == 1 ? lo : hi) = c->f32[0];
        }
        if (constant_bounds) {
          g->nodes[ni].epilogue = NodeEpilogue{FusedActivation::kClip, lo, hi};
          absorbed_next = true;
        }
      }
      if (!absorbed_next) break;
      // The fused node now writes next's output; next is left dead.
      last = readers[out][0];
      int new_out = next.outputs[0];
      g->values[size_t(new_out)].producer = int(ni);
      g->nodes[ni].outputs[0] = new_out;
      next.op_type = "Identity";
      next.inputs = {out};
      next.outputs.clear();
      ++absorbed;
      uses = CountUses(*g);
      if (HasActivation(g->nodes[ni])) break;
    }
    // The fused node runs where its last absorbed node ran: a residual may be computed between
    // the conv and the add (ResNet's downsample branch).
    if (last != ni) {
      std::swap(g->nodes[ni], g->nodes[last]);
      for (int o : g->nodes[last].outputs) g->values[size_t(o)].producer = int(last);
    }
  }
  return absorbed;
}

}  // namespace tunefarm::graph
