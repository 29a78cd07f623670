// InferShapes: one pass over the nodes in topological order; each operator's inference and
// constant folding come from the operator registry (compiler/operators/).
#include "compiler/model/passes/infer_shapes.h"

#include <algorithm>
#include <string>
#include <unordered_map>

#include "compiler/graph/graph_util.h"
#include "compiler/model/passes/remove_dead_nodes.h"
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

// Whether a condition read at run time guards the node: an inference error then means its If
// branch cannot run at these shapes, which is an error only for a run that takes the branch.
bool UnderRuntimeCondition(const Graph& g, const Node& n) {
  return std::any_of(n.guards.begin(), n.guards.end(),
                     [&](const NodeGuard& guard) { return !ConstantCondition(g, guard.cond); });
}

using CutValues = std::unordered_map<int, std::string>;  // value -> why its branch cannot run

// The reason an If node's branch (0 then, 1 else) cannot run: one of its outputs was cut; or "".
std::string CutReason(const Node& n, size_t branch, const CutValues& cut) {
  const size_t outputs = n.outputs.size();
  for (size_t k = 0; k < outputs; ++k) {
    const size_t input = 1 + branch * outputs + k;
    if (input >= n.inputs.size()) break;
    auto it = cut.find(n.inputs[input]);
    if (it != cut.end()) return it->second;
  }
  return "";
}

// InferNode, unless the node reads a value of a cut branch (the error is then that branch's). An If
// with one branch cut keeps the other (control_ops.cc); with both cut it cannot run either.
Status InferOrCut(Graph* g, Node* n, const CutValues& cut) {
  const bool is_if = n->op_type == "If";
  for (size_t i = 0; i < (is_if ? std::min<size_t>(1, n->inputs.size()) : n->inputs.size()); ++i) {
    auto it = cut.find(n->inputs[i]);
    if (it != cut.end()) return Status::InvalidArgument(it->second);
  }
  if (!is_if) return InferNode(g, n);
  const std::string then_reason = CutReason(*n, 0, cut), else_reason = CutReason(*n, 1, cut);
  if (!then_reason.empty() && !else_reason.empty()) {
    return Status::InvalidArgument(g->Describe(*n) + ": neither branch can run at these input shapes; then_branch: " +
                                   then_reason + "; else_branch: " + else_reason);
  }
  if (!then_reason.empty() || !else_reason.empty()) {
    const size_t branch = then_reason.empty() ? 1 : 0, outputs = n->outputs.size();
    for (size_t k = 0; k < outputs && 1 + branch * outputs + k < n->inputs.size(); ++k) {
      n->inputs[1 + branch * outputs + k] = -1;
    }
    Attribute which, why;
    which.kind = Attribute::kInt;
    which.i = int64_t(branch);
    why.kind = Attribute::kString;
    why.s = branch == 0 ? then_reason : else_reason;
    n->attrs[operators::kCutBranchAttr] = std::move(which);
    n->attrs[operators::kCutReasonAttr] = std::move(why);
  }
  return InferNode(g, n);
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
  CutValues cut;
  for (Node& n : g->nodes) {
    if (NeverRuns(*g, n)) continue;  // the branch a constant condition does not take
    Status inferred = InferOrCut(g, &n, cut);
    if (inferred.ok()) continue;
    // Only a shape that does not fit cuts a branch: anything else is refused as if it ran.
    if (inferred.code() != StatusCode::kInvalidArgument || !UnderRuntimeCondition(*g, n)) return inferred;
    for (int o : n.outputs) {
      if (o < 0) continue;
      cut[o] = inferred.message();
      g->values[size_t(o)].shape_known = false;
    }
  }
  // The cut branches' nodes now feed nothing: no later pass sees a value of unknown shape.
  if (!cut.empty()) RemoveDeadNodes(g);
  return Status::OK();
}

}  // namespace tunefarm::graph
