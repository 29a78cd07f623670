#include "compiler/model/passes/recurrent_input_projections.h"

#include <string>
#include <utility>
#include <vector>

#include "compiler/graph/graph_util.h"
#include "compiler/operators/recurrent_inputs.h"

namespace tunefarm::graph {
namespace {

using graph::Attribute;
using graph::ConstantData;
using graph::DataType;
using graph::Node;

// A Reshape of `from` to `shape`, written as the graph's opset reads it (an attribute before 5).
Node MakeReshape(graph::Graph* g, const std::string& name, int from, const std::vector<int64_t>& shape, int to) {
  Node r;
  r.name = name;
  r.op_type = "Reshape";
  r.inputs = {from};
  if (g->opset > 0 && g->opset < 5) {
    Attribute a;
    a.kind = Attribute::kInts;
    a.ints = shape;
    r.attrs["shape"] = a;
  } else {
    r.inputs.push_back(
        g->AddConstant(name + ".shape", ConstantData{DataType::kInt64, {int64_t(shape.size())}, {}, shape}));
  }
  r.outputs = {to};
  return r;
}

int GatesOf(const std::string& op) { return op == "LSTM" ? 4 : op == "GRU" ? 3 : op == "RNN" ? 1 : 0; }

// The nodes that replace node `index` (its projections, then the node itself), or none.
std::vector<Node> Rewrite(graph::Graph* g, size_t index) {
  Node n = g->nodes[index];
  const int gates = GatesOf(n.op_type);
  if (gates == 0 || n.inputs.size() < 3 || int(n.inputs.size()) > operators::kRecurrentProjectionInput ||
      n.GetInt("layout", 0) != 0)
    return {};
  const std::vector<int64_t> x = g->values[size_t(n.inputs[0])].shape;  // a copy: AddValue grows g->values
  const auto w = g->values[size_t(n.inputs[1])].constant;
  const bool has_bias = n.inputs.size() > 3 && n.inputs[3] >= 0;
  const auto bias = has_bias ? g->values[size_t(n.inputs[3])].constant : nullptr;
  if (x.size() != 3 || g->values[size_t(n.inputs[0])].dtype != DataType::kFloat32 || !w ||
      w->dtype != DataType::kFloat32 || w->shape.size() != 3 || w->shape[2] != x[2] || w->shape[1] % gates != 0 ||
      (has_bias && !bias)) {
    return {};
  }
  const int64_t T = x[0], B = x[1], I = x[2], D = w->shape[0], GH = w->shape[1], H = GH / gates;
  if (has_bias && bias->num_elements() != D * 2 * GH) return {};
  const bool gru_h_inside = n.op_type == "GRU" && n.GetInt("linear_before_reset", 0) != 0;
  const std::string base = n.name.empty() ? g->values[size_t(n.outputs[0])].name : n.name;

  std::vector<Node> nodes;
  const int rows = graph::AddFloatValue(g, base + ".x_rows", {T * B, I});
  nodes.push_back(MakeReshape(g, base + ".x_rows", n.inputs[0], {T * B, I}, rows));
  n.inputs.resize(size_t(operators::kRecurrentProjectionInput), -1);
  for (int64_t d = 0; d < D; ++d) {
    const std::string dir = base + ".d" + std::to_string(d);
    ConstantData wd{DataType::kFloat32, {GH, I}, {}, {}};
    wd.f32.assign(w->f32.begin() + d * GH * I, w->f32.begin() + (d + 1) * GH * I);
    ConstantData cd{DataType::kFloat32, {GH}, std::vector<float>(size_t(GH), 0.0f), {}};
    for (int64_t j = 0; has_bias && j < GH; ++j) {
      const float wb = bias->f32[size_t(d * 2 * GH + j)], rb = bias->f32[size_t(d * 2 * GH + GH + j)];
      cd.f32[size_t(j)] = wb + (gru_h_inside && j >= 2 * H ? 0.0f : rb);
    }
    Node gemm;
    gemm.name = dir + ".input_projection";
    gemm.op_type = "Gemm";
    gemm.inputs = {rows, g->AddConstant(dir + ".w", std::move(wd)), g->AddConstant(dir + ".b", std::move(cd))};
    Attribute trans_b;
    trans_b.kind = Attribute::kInt;
    trans_b.i = 1;
    gemm.attrs["transB"] = trans_b;
    gemm.outputs = {graph::AddFloatValue(g, dir + ".projected_rows", {T * B, GH})};
    const int projected = graph::AddFloatValue(g, dir + ".projected", {T, B, GH});
    nodes.push_back(gemm);
    nodes.push_back(MakeReshape(g, dir + ".projected", gemm.outputs[0], {T, B, GH}, projected));
    n.inputs.push_back(projected);
  }
  nodes.push_back(std::move(n));
  return nodes;
}

}  // namespace

Result<int> RecurrentInputProjections(graph::Graph* g) { return graph::RewriteNodes(g, Rewrite); }

}  // namespace tunefarm::graph
