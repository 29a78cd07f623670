#include "compiler/model/passes/fold_constants.h"

#include <utility>

namespace tunefarm::graph {
namespace {

// Folding a node whose output is larger than this would grow the artifact instead of shrinking the
// work (e.g. an Expand of a scalar); such nodes stay.
constexpr int64_t kMaxFoldedElements = int64_t(1) << 24;

// Evaluates the one node on constants as a graph of its own; false when it cannot be.
bool Evaluate(const graph::Graph& g, const graph::Node& n, const ConstantEvaluator& evaluate,
              std::vector<graph::ConstantData>* outputs) {
  graph::Graph mini;
  mini.opset = g.opset;
  graph::Node copy = n;
  copy.guards.clear();  // its conditions are values of the whole graph, and a constant runs anyway
  for (int& in : copy.inputs) {
    if (in < 0) continue;
    graph::Value v = g.values[size_t(in)];
    v.producer = -1;
    in = mini.AddValue(std::move(v));
  }
  for (int& out : copy.outputs) {
    graph::Value v = g.values[size_t(out)];
    v.edge_dtype.reset();  // read back as stored, not converted to the model's output type
    if (v.shape_known) {
      int64_t elements = 1;
      for (int64_t d : v.shape) elements *= d;
      if (elements > kMaxFoldedElements) return false;
    }
    v.producer = 0;
    out = mini.AddValue(std::move(v));
    mini.outputs.push_back(out);
  }
  mini.nodes.push_back(std::move(copy));
  return evaluate(std::move(mini), outputs) && outputs->size() == n.outputs.size();
}

}  // namespace

Result<int> FoldConstants(graph::Graph* g, const ConstantEvaluator& evaluate) {
  int folded = 0;
  for (graph::Node& n : g->nodes) {
    if (n.outputs.empty()) continue;
    bool inputs_constant = !n.inputs.empty(), outputs_constant = true;
    for (int in : n.inputs) inputs_constant = inputs_constant && (in < 0 || g->values[size_t(in)].constant);
    for (int out : n.outputs) outputs_constant = outputs_constant && g->values[size_t(out)].constant;
    if (!inputs_constant || outputs_constant) continue;
    std::vector<graph::ConstantData> values;
    if (!Evaluate(*g, n, evaluate, &values)) continue;
    for (size_t k = 0; k < n.outputs.size(); ++k) {
      graph::Value& v = g->values[size_t(n.outputs[k])];
      v.constant = std::make_shared<const graph::ConstantData>(std::move(values[k]));
      v.shape = v.constant->shape;
      v.shape_known = true;
    }
    ++folded;
  }
  return folded;
}

}  // namespace tunefarm::graph
