// Reductions: ReduceMean, ReduceSum, ReduceMax, ReduceMin, ReduceSumSquare, ReduceL2. Axes are an
// attribute until the operator's opset-18 form (ReduceSum: 13), an optional input after.
#include <algorithm>

#include "compiler/operators/infer_context.h"
#include "compiler/operators/lower_context.h"
#include "compiler/operators/registry.h"
#include "compiler/ops/ops.h"

namespace tunefarm::operators {
namespace {

using graph::DataType;
using graph::Node;

struct ReduceEntry {
  const char* op;
  ops::ReduceOp kind;
  int64_t axes_input_since;  // the opset whose form takes axes as an input
};
constexpr ReduceEntry kReduce[] = {
    {"ReduceMean", ops::ReduceOp::kMean, 18}, {"ReduceSum", ops::ReduceOp::kSum, 13},
    {"ReduceMax", ops::ReduceOp::kMax, 18},   {"ReduceMin", ops::ReduceOp::kMin, 18},
    {"ReduceSumSquare", ops::ReduceOp::kSumSquare, 18}, {"ReduceL2", ops::ReduceOp::kL2, 18},
};

const ReduceEntry& ReduceFor(const std::string& op) {
  return *std::find_if(std::begin(kReduce), std::end(kReduce), [&](const ReduceEntry& e) { return op == e.op; });
}

struct ReduceArgs {
  std::vector<int64_t> axes;  // sorted, non-negative; empty with noop: the identity
  bool keepdims = true;
  bool identity = false;
};

Result<ReduceArgs> ParseReduce(const NodeView& v) {
  const ReduceEntry& e = ReduceFor(v.node().op_type);
  const size_t rank = v.Shape(0).size();
  std::vector<int64_t> axes;
  if (v.opset() >= e.axes_input_since) {
    if (v.node().Has("axes")) return v.Fail("axes is an input from opset " + std::to_string(e.axes_input_since) + ", not an attribute");
    TUNEFARM_ASSIGN_OR_RETURN(auto input, v.OptionalConstInts(1, "axes"));
    if (input) axes = *input;
  } else {
    axes = v.node().GetInts("axes");
  }
  ReduceArgs a;
  a.keepdims = v.node().GetInt("keepdims", 1) != 0;
  if (axes.empty()) {
    if (v.node().GetInt("noop_with_empty_axes", 0) != 0) {
      a.identity = true;
      return a;
    }
    for (size_t i = 0; i < rank; ++i) a.axes.push_back(int64_t(i));
    return a;
  }
  for (int64_t x : axes) {
    TUNEFARM_ASSIGN_OR_RETURN(int64_t axis, v.Axis(x, rank));
    if (std::count(a.axes.begin(), a.axes.end(), axis)) return v.Fail("axis " + std::to_string(x) + " repeats");
    a.axes.push_back(axis);
  }
  std::sort(a.axes.begin(), a.axes.end());
  return a;
}

Status InferReduce(InferContext& cx) {
  TUNEFARM_ASSIGN_OR_RETURN(ReduceArgs a, ParseReduce(cx));
  if (ReduceFor(cx.node().op_type).kind == ops::ReduceOp::kL2 && cx.In(0).dtype != DataType::kFloat32) {
    return cx.Fail(std::string("ReduceL2 takes float32 tensors, got ") + graph::DataTypeName(cx.In(0).dtype));
  }
  const auto& in = cx.Shape(0);
  std::vector<int64_t> out;
  for (size_t i = 0; i < in.size(); ++i) {
    const bool reduced = !a.identity && std::count(a.axes.begin(), a.axes.end(), int64_t(i));
    if (reduced && in[i] == 0 && (ReduceFor(cx.node().op_type).kind == ops::ReduceOp::kMax ||
                                  ReduceFor(cx.node().op_type).kind == ops::ReduceOp::kMin)) {
      return cx.Fail("reducing the empty axis " + std::to_string(i) + " has no value");
    }
    if (!reduced) out.push_back(in[i]);
    else if (a.keepdims) out.push_back(1);
  }
  cx.SetOut(0, cx.In(0).dtype, out);
  return Status::OK();
}

Status LowerReduce(LowerContext& cx, const Node& n) {
  TUNEFARM_ASSIGN_OR_RETURN(ReduceArgs a, ParseReduce(NodeView(cx.graph(), n)));
  if (a.identity && ReduceFor(n.op_type).kind == ops::ReduceOp::kL2) {  // |x|, reduced over nothing
    ops::UnaryParams abs;
    abs.kind = ops::UnaryKind::kAbs;
    return cx.EmitPlain(n, {0}, [abs](const std::vector<ir::Tensor>& i) { return ops::Unary(i[0], abs); });
  }
  if (a.identity && ReduceFor(n.op_type).kind == ops::ReduceOp::kSumSquare) {  // the square, reduced over nothing
    ops::UnaryParams square;
    square.kind = ops::UnaryKind::kPowScalar;
    square.alpha = 2.0f;
    return cx.EmitPlain(n, {0}, [square](const std::vector<ir::Tensor>& i) { return ops::Unary(i[0], square); });
  }
  if (a.identity) {
    TUNEFARM_ASSIGN_OR_RETURN(int x, cx.Get(n.inputs[0], 0));
    cx.Define(n.outputs[0], cx.View(x, cx.V(n.outputs[0]).shape, cx.V(n.outputs[0]).name), 0);
    return Status::OK();
  }
  const ops::ReduceOp kind = ReduceFor(n.op_type).kind;
  return cx.EmitPlain(n, {0}, [a, kind](const std::vector<ir::Tensor>& i) { return ops::Reduce(i[0], a.axes, a.keepdims, kind); });
}

}  // namespace

std::vector<OperatorDef> ReduceOperators() {
  std::vector<OperatorDef> ops;
  for (const ReduceEntry& e : kReduce) {
    ops.push_back({e.op,
                   "reduce",
                   {{"axes", kInts}, {"keepdims", kInt}, {"noop_with_empty_axes", kInt}},
                   InferReduce,
                   nullptr,
                   LowerReduce,
                   nullptr,
                   e.axes_input_since == 13 ? "axes: attribute before opset 13, input from 13"
                                            : "axes: attribute before opset 18, input from 18"});
  }
  return ops;
}

}  // namespace tunefarm::operators
