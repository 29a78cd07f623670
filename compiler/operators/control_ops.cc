// If, as the importer leaves it (compiler/frontend/onnx_importer.cc): both branches inlined as
// guarded nodes, then an "If" node with inputs [cond, then outputs..., else outputs...] that picks
// each output from the branch the condition names. A constant condition keeps only the taken
// branch (compiler/model/resolve_constant_ifs.h); at run time the CPU executor skips the kernels
// of the branch not taken (ArtifactKernel::run_if) and this node's kernels select the other's.
// A branch that cannot run at the compiled shapes (its shape inference fails under a condition read
// at run time: Silero VAD's 8 kHz branch given 16 kHz frames) is cut by InferShapes: its inputs
// here become -1 and the node says which and why (kCutBranchAttr, kCutReasonAttr). The outputs are
// then the other branch's, and a run whose condition names the cut branch fails with the reason,
// as ONNX Runtime's does, instead of computing it at shapes it cannot have.
// Loop and Scan are not in the registry: their import is an error naming the node.
#include "compiler/compute/ops.h"
#include "compiler/operators/infer_context.h"
#include "compiler/operators/lower_api.h"
#include "compiler/operators/registry.h"

namespace tunefarm::operators {
namespace {

using graph::ConstantData;
using graph::DataType;
using graph::Node;

// The taken branch (0 then, 1 else) when the condition is a constant; -1 when it is not.
int TakenBranch(const NodeView& v) {
  if (!v.In(0).constant) return -1;
  const ConstantData& c = *v.In(0).constant;
  const bool value =
      c.dtype == DataType::kFloat32 ? (!c.f32.empty() && c.f32[0] != 0) : (!c.i64.empty() && c.i64[0] != 0);
  return value ? 0 : 1;
}

// The cut branch (0 then, 1 else), or -1.
int CutBranch(const Node& n) { return int(n.GetInt(kCutBranchAttr, -1)); }

Status InferIf(InferContext& cx) {
  if (cx.num_inputs() < 1 || (cx.num_inputs() - 1) != 2 * cx.num_outputs()) {
    return cx.Fail("an If node takes the condition and each branch's outputs");
  }
  if (cx.In(0).dtype != DataType::kBool || operators::Product(cx.Shape(0)) != 1) {
    return cx.Fail("the condition must be a single bool, got " + std::string(graph::DataTypeName(cx.In(0).dtype)) +
                   " " + ShapeStr(cx.Shape(0)));
  }
  const size_t outputs = cx.num_outputs();
  const int cut = CutBranch(cx.node());
  const int taken = cut >= 0 ? 1 - cut : TakenBranch(cx);
  for (size_t k = 0; k < outputs; ++k) {
    const graph::Value& then_v = cx.In(1 + k);
    const graph::Value& else_v = cx.In(1 + outputs + k);
    if (taken >= 0) {  // the other branch is never run, or cut (its shapes need not even be known)
      const graph::Value& v = taken == 0 ? then_v : else_v;
      cx.SetOut(k, v.dtype, v.shape);
      continue;
    }
    if (then_v.dtype != else_v.dtype || then_v.shape != else_v.shape) {
      return cx.Fail("output " + std::to_string(k) + " is " + graph::DataTypeName(then_v.dtype) + " " +
                     ShapeStr(then_v.shape) + " in then_branch and " + graph::DataTypeName(else_v.dtype) + " " +
                     ShapeStr(else_v.shape) +
                     " in else_branch: tunefarm compiles static shapes, so the branches must agree unless the "
                     "condition is a constant");
    }
    cx.SetOut(k, then_v.dtype, then_v.shape);
  }
  return Status::OK();
}

// The outputs are views of the kept branch's; one kernel reads the condition and carries the check
// that fails a run taking the cut branch.
Status LowerIfWithCutBranch(LowerApi& cx, const Node& n, int cond, int cut) {
  const std::string& cond_name = cx.V(n.inputs[0]).name;
  cx.Emit(
      "If.check", {cond}, [](const std::vector<ir::Tensor>& i) { return compute::Reshape(i[0], {}); },
      ElementType::kBool, cond_name + ".checked");
  TUNEFARM_RETURN_IF_ERROR(cx.FailRunWhen(n, n.inputs[0], cut == 0,
                                          std::string("its ") + (cut == 0 ? "then" : "else") +
                                              " branch cannot run at the input shapes the model was compiled for (" +
                                              n.GetString(kCutReasonAttr, "") + ")"));
  const size_t outputs = n.outputs.size();
  for (size_t k = 0; k < outputs; ++k) {
    if (n.outputs[k] < 0) continue;
    TUNEFARM_ASSIGN_OR_RETURN(int kept, cx.Get(n.inputs[1 + (cut == 0 ? outputs : 0) + k], 0));
    const graph::Value& out = cx.V(n.outputs[k]);
    cx.Define(n.outputs[k], cx.View(kept, out.shape, out.name), 0);
  }
  return Status::OK();
}

Status LowerIf(LowerApi& cx, const Node& n) {
  const size_t outputs = n.outputs.size();
  TUNEFARM_ASSIGN_OR_RETURN(int cond_any_shape, cx.Get(n.inputs[0], 0));
  // A scalar view: ONNX allows any one-element condition ([1, 1, 1]), which must not broadcast
  // the outputs to its rank.
  const int cond = cx.View(cond_any_shape, {}, cx.V(n.inputs[0]).name + ".scalar");
  if (const int cut = CutBranch(n); cut >= 0) return LowerIfWithCutBranch(cx, n, cond, cut);
  for (size_t k = 0; k < outputs; ++k) {
    if (n.outputs[k] < 0) continue;
    TUNEFARM_ASSIGN_OR_RETURN(int then_t, cx.Get(n.inputs[1 + k], 0));
    TUNEFARM_ASSIGN_OR_RETURN(int else_t, cx.Get(n.inputs[1 + outputs + k], 0));
    const graph::Value& out = cx.V(n.outputs[k]);
    // Reads both: the branch not taken was skipped and its bytes are stale, never selected.
    const int t = cx.Emit(
        n.op_type, {cond, then_t, else_t},
        [](const std::vector<ir::Tensor>& i) { return compute::Where(i[0], i[1], i[2]); }, ToElementType(out.dtype),
        out.name);
    cx.Define(n.outputs[k], t, 0);
  }
  return Status::OK();
}

}  // namespace

std::vector<OperatorDef> ControlOperators() {
  return {{"If",
           "control",
           {},
           InferIf,
           nullptr,
           LowerIf,
           "both branches compiled; a constant condition keeps the taken one; otherwise the condition is read at run "
           "time and only its branch runs (CPU; on CUDA both run and the outputs are selected); the branches' output "
           "shapes must agree unless the condition is constant; a branch that cannot run at the given shapes is cut, "
           "and a run that takes it fails naming the shape error",
           false,
           1}};
}

}  // namespace tunefarm::operators
