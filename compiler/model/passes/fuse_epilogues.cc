#include "compiler/model/passes/fuse_epilogues.h"

#include <map>
#include <utility>

#include "compiler/graph/graph_util.h"

namespace tunefarm::graph {
namespace {

// Output channels of a fusable producer and the rank of its output; 0 when not fusable.
int64_t OutputChannels(const Graph& g, const Node& n) {
  auto value = [&](size_t i) -> const Value& { return g.values[size_t(n.inputs[i])]; };
  if (n.op_type == "Conv" && n.inputs.size() >= 2 && value(1).constant && value(0).shape.size() == 4) return value(1).shape[0];
  bool gemm = n.op_type == "Gemm", matmul = n.op_type == "MatMul";
  // MatMul of any rank by a constant matrix: a dense layer over its leading dimensions' rows
  // (compiler/operators/node_workload.cc), its channels on the last axis.
  if (!(gemm || matmul) || n.inputs.size() < 2 || n.inputs[0] < 0 || n.inputs[1] < 0) return 0;
  const size_t rank_a = value(0).shape.size();
  if (value(1).constant && (rank_a == 2 || (matmul && rank_a > 2)) && value(1).shape.size() == 2) {
    if (gemm && n.GetInt("transA", 0)) return 0;
    if (gemm && (n.GetFloat("alpha", 1.0f) != 1.0f || n.GetFloat("beta", 1.0f) != 1.0f)) return 0;
    if (gemm && n.inputs.size() > 2 && n.inputs[2] >= 0) {
      const Value& c = value(2);
      if (!c.constant || c.constant->num_elements() != c.shape.back() || c.shape.size() > 2) return 0;
    }
    return (gemm && n.GetInt("transB", 0)) ? value(1).shape[0] : value(1).shape[1];
  }
  return 0;
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
  for (int64_t k = 0; k < channels; ++k) out[size_t(k)] = c.constant->f32[c.constant->num_elements() == 1 ? 0 : size_t(k)];
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
            const auto& old = g->values[size_t(n.inputs[2])].constant;
            for (int64_t k = 0; k < channels; ++k) bias[size_t(k)] += old->f32[old->num_elements() == 1 ? 0 : size_t(k)];
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
