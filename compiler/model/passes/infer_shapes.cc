// InferShapes: one pass over the nodes in topological order; each operator's inference and
// constant folding come from the operator registry (compiler/operators/).
#include "compiler/model/passes/infer_shapes.h"

#include <algorithm>

#include "compiler/graph/graph_util.h"
#include "compiler/operators/constant_eval.h"
#include "compiler/operators/infer_context.h"
#include "compiler/operators/registry.h"

namespace tunefarm::graph {
namespace {

using operators::ShapeStr;

// Evaluates the node when every input is a constant and the result is small: shape arithmetic
// (Shape -> Gather -> Div -> Concat -> Reshape/Slice) becomes constants that later nodes read.
Status FoldIfConstant(const operators::OperatorDef& def, operators::InferContext& cx) {
  const Node& n = cx.node();
  if (!def.fold || n.outputs.empty()) return Status::OK();
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    if (cx.HasInput(i) && !cx.In(i).constant) return Status::OK();
  }
  for (size_t k = 0; k < n.outputs.size(); ++k) {
    if (n.outputs[k] < 0) continue;
    const Value& v = cx.Out(k);
    if (v.constant || !v.shape_known) return Status::OK();
    if (!def.fold_any_size && operators::Product(v.shape) > operators::kMaxInferenceFoldElements) return Status::OK();
  }
  auto values = def.fold(cx);
  if (!values.ok()) {
    // Unimplemented: this form is left to the kernel; anything else is a real error (division by zero).
    return values.status().code() == StatusCode::kUnimplemented ? Status::OK() : values.status();
  }
  for (size_t k = 0; k < values->size() && k < n.outputs.size(); ++k) cx.SetConstOut(k, std::move((*values)[k]));
  return Status::OK();
}

Status InferNode(Graph* g, Node* n) {
  const operators::OperatorDef* def = operators::FindOperator(n->op_type);
  if (!def) return Status::InvalidArgument(g->Describe(*n) + ": no shape rule for this operator");
  operators::InferContext cx(g, n);
  for (size_t i = 0; i < n->inputs.size(); ++i) {
    if (!cx.HasInput(i) || cx.In(i).shape_known) continue;
    // An If's input from the branch a constant condition does not take: never read.
    const int producer = cx.In(i).producer;
    if (producer >= 0 && NeverRuns(*g, g->nodes[size_t(producer)])) continue;
    return cx.Fail("input '" + cx.In(i).name + "' has an unknown shape");
  }
  const int required = n->op_type == "Constant" ? 0 : def->required_inputs;
  for (int i = 0; i < required; ++i) {
    if (!cx.HasInput(size_t(i))) return cx.Fail("missing required input " + std::to_string(i));
  }
  if (n->outputs.empty() || n->outputs[0] < 0) return cx.Fail("has no output");
  TUNEFARM_RETURN_IF_ERROR(def->infer(cx));
  for (size_t k = 0; k < n->outputs.size(); ++k) {
    if (n->outputs[k] < 0 || !cx.Out(k).shape_known) continue;
    if (!operators::CheckedElements(cx.Out(k).shape)) {
      return cx.Fail("output " + std::to_string(k) + " shape " + ShapeStr(cx.Out(k).shape) +
                     " has a negative dimension or more than 2^40 elements");
    }
  }
  return FoldIfConstant(*def, cx);
}

}  // namespace

Status InferShapes(Graph* g) {
  for (int idx : g->inputs) {
    const Value& v = g->values[size_t(idx)];
    if (!v.shape_known) {
      return Status::InvalidArgument("graph input '" + v.name + "' has a symbolic or missing shape " +
                                     ShapeStr(v.shape) + "; give it a fixed shape");
    }
  }
  for (Node& n : g->nodes) {
    if (NeverRuns(*g, n)) continue;  // the branch a constant condition does not take
    TUNEFARM_RETURN_IF_ERROR(InferNode(g, &n));
  }
  return Status::OK();
}

}  // namespace tunefarm::graph
