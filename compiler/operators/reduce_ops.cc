// Reductions: ReduceMean, ReduceSum, ReduceMax, ReduceMin, ReduceProd, ReduceSumSquare, ReduceL1,
// ReduceL2, ReduceLogSum, ReduceLogSumExp. Axes are an attribute until the operator's opset-18 form
// (ReduceSum: 13), an optional input after. ArgMax and ArgMin: one axis, an int64 index.
#include <algorithm>

#include "compiler/compute/ops.h"
#include "compiler/operators/infer_context.h"
#include "compiler/operators/lower_api.h"
#include "compiler/operators/registry.h"

namespace tunefarm::operators {
namespace {

using graph::DataType;
using graph::Node;

struct ReduceEntry {
  const char* op;
  compute::ReduceOp kind;
  int64_t axes_input_since;  // the opset whose form takes axes as an input
};
constexpr ReduceEntry kReduce[] = {
    {"ReduceMean", compute::ReduceOp::kMean, 18},
    {"ReduceSum", compute::ReduceOp::kSum, 13},
    {"ReduceMax", compute::ReduceOp::kMax, 18},
    {"ReduceMin", compute::ReduceOp::kMin, 18},
    {"ReduceSumSquare", compute::ReduceOp::kSumSquare, 18},
    {"ReduceL2", compute::ReduceOp::kL2, 18},
    {"ReduceL1", compute::ReduceOp::kL1, 18},
    {"ReduceLogSum", compute::ReduceOp::kLogSum, 18},
    {"ReduceLogSumExp", compute::ReduceOp::kLogSumExp, 18},
    {"ReduceProd", compute::ReduceOp::kProd, 18},
};

// Whether the reduction's value is a float whatever the input (a log or a square root).
bool FloatOnly(compute::ReduceOp op) {
  return op == compute::ReduceOp::kL2 || op == compute::ReduceOp::kLogSum || op == compute::ReduceOp::kLogSumExp;
}

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
    if (v.node().Has("axes"))
      return v.Fail("axes is an input from opset " + std::to_string(e.axes_input_since) + ", not an attribute");
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
  if (FloatOnly(ReduceFor(cx.node().op_type).kind) && cx.In(0).dtype != DataType::kFloat32) {
    return cx.Fail(cx.node().op_type + " takes float32 tensors, got " + graph::DataTypeName(cx.In(0).dtype));
  }
  const auto& in = cx.Shape(0);
  std::vector<int64_t> out;
  for (size_t i = 0; i < in.size(); ++i) {
    const bool reduced = !a.identity && std::count(a.axes.begin(), a.axes.end(), int64_t(i));
    if (reduced && in[i] == 0 &&
        (ReduceFor(cx.node().op_type).kind == compute::ReduceOp::kMax ||
         ReduceFor(cx.node().op_type).kind == compute::ReduceOp::kMin)) {
      return cx.Fail("reducing the empty axis " + std::to_string(i) + " has no value");
    }
    if (!reduced) {
      out.push_back(in[i]);
    } else if (a.keepdims) {
      out.push_back(1);
    }
  }
  cx.SetOut(0, cx.In(0).dtype, out);
  return Status::OK();
}

Status LowerReduce(LowerApi& cx, const Node& n) {
  TUNEFARM_ASSIGN_OR_RETURN(ReduceArgs a, ParseReduce(NodeView(cx.graph(), n)));
  const compute::ReduceOp op = ReduceFor(n.op_type).kind;
  if (a.identity && op == compute::ReduceOp::kLogSum) {  // log x (LogSumExp over nothing is x: a view)
    compute::UnaryParams log;
    log.kind = compute::UnaryKind::kLog;
    return cx.EmitPlain(n, {0}, [log](const std::vector<ir::Tensor>& i) { return compute::Unary(i[0], log); });
  }
  if (a.identity && (op == compute::ReduceOp::kL2 || op == compute::ReduceOp::kL1)) {  // |x|, reduced over nothing
    compute::UnaryParams abs;
    abs.kind = compute::UnaryKind::kAbs;
    return cx.EmitPlain(n, {0}, [abs](const std::vector<ir::Tensor>& i) { return compute::Unary(i[0], abs); });
  }
  if (a.identity && op == compute::ReduceOp::kSumSquare) {  // the square, reduced over nothing
    compute::UnaryParams square;
    square.kind = compute::UnaryKind::kPowScalar;
    square.alpha = 2.0f;
    return cx.EmitPlain(n, {0}, [square](const std::vector<ir::Tensor>& i) { return compute::Unary(i[0], square); });
  }
  if (a.identity) {
    TUNEFARM_ASSIGN_OR_RETURN(int x, cx.Get(n.inputs[0], 0));
    cx.Define(n.outputs[0], cx.View(x, cx.V(n.outputs[0]).shape, cx.V(n.outputs[0]).name), 0);
    return Status::OK();
  }
  return cx.EmitPlain(
      n, {0}, [a, op](const std::vector<ir::Tensor>& i) { return compute::Reduce(i[0], a.axes, a.keepdims, op); });
}

// --- ArgMax, ArgMin -----------------------------------------------------------------------
struct ArgArgs {
  int64_t axis = 0;
  bool keepdims = true, last_index = false;
};

Result<ArgArgs> ParseArg(const NodeView& v) {
  ArgArgs a;
  TUNEFARM_ASSIGN_OR_RETURN(a.axis, v.Axis(v.node().GetInt("axis", 0), v.Shape(0).size()));
  a.keepdims = v.node().GetInt("keepdims", 1) != 0;
  a.last_index = v.node().GetInt("select_last_index", 0) != 0;
  return a;
}

Status InferArg(InferContext& cx) {
  TUNEFARM_ASSIGN_OR_RETURN(ArgArgs a, ParseArg(cx));
  const auto& in = cx.Shape(0);
  if (in[size_t(a.axis)] == 0) return cx.Fail("the axis " + std::to_string(a.axis) + " is empty: no element to index");
  std::vector<int64_t> out;
  for (size_t d = 0; d < in.size(); ++d) {
    if (int64_t(d) != a.axis) {
      out.push_back(in[d]);
    } else if (a.keepdims) {
      out.push_back(1);
    }
  }
  cx.SetOut(0, DataType::kInt64, out);
  return Status::OK();
}

Status LowerArg(LowerApi& cx, const Node& n) {
  TUNEFARM_ASSIGN_OR_RETURN(ArgArgs a, ParseArg(NodeView(cx.graph(), n)));
  const bool is_max = n.op_type == "ArgMax";
  return cx.EmitPlain(n, {0}, [a, is_max](const std::vector<ir::Tensor>& i) {
    return compute::ArgReduce(i[0], a.axis, a.keepdims, is_max, a.last_index);
  });
}

}  // namespace

// --- CumSum ----------------------------------------------------------------------------------
// The axis: a constant scalar input (input 1), negative counting from the end.
Result<int64_t> CumSumAxis(const NodeView& v) {
  TUNEFARM_ASSIGN_OR_RETURN(std::vector<int64_t> axis, v.ConstInts(1, "axis"));
  if (axis.size() != 1) return v.Fail("axis must be a scalar");
  return v.Axis(axis[0], v.Shape(0).size());
}

Status InferCumSum(InferContext& cx) {
  if (cx.In(0).dtype == DataType::kBool) return cx.Fail("CumSum takes numbers, got bool");
  if (cx.Shape(0).empty()) return cx.Fail("takes a tensor of rank 1 or more");
  TUNEFARM_RETURN_IF_ERROR(CumSumAxis(cx).status());
  cx.SetOut(0, cx.In(0).dtype, cx.Shape(0));
  return Status::OK();
}

Status LowerCumSum(LowerApi& cx, const Node& n) {
  TUNEFARM_ASSIGN_OR_RETURN(int64_t axis, CumSumAxis(NodeView(cx.graph(), n)));
  const bool exclusive = n.GetInt("exclusive", 0) != 0, reverse = n.GetInt("reverse", 0) != 0;
  return cx.EmitPlain(
      n, {0}, [=](const std::vector<ir::Tensor>& i) { return compute::CumSum(i[0], axis, exclusive, reverse); });
}

std::vector<OperatorDef> ReduceOperators() {
  std::vector<OperatorDef> ops;
  for (const ReduceEntry& e : kReduce) {
    ops.push_back({e.op,
                   "reduce",
                   {{"axes", kInts}, {"keepdims", kInt}, {"noop_with_empty_axes", kInt}},
                   InferReduce,
                   nullptr,
                   LowerReduce,
                   e.axes_input_since == 13 ? "axes: attribute before opset 13, input from 13"
                                            : "axes: attribute before opset 18, input from 18"});
  }
  for (const char* op : {"ArgMax", "ArgMin"}) {
    ops.push_back({op,
                   "reduce",
                   {{"axis", kInt}, {"keepdims", kInt}, {"select_last_index", kInt}},
                   InferArg,
                   nullptr,
                   LowerArg,
                   "one axis; the first index of the extreme value, or the last with select_last_index"});
  }
  ops.push_back({"CumSum",
                 "reduce",
                 {{"exclusive", kInt}, {"reverse", kInt}},
                 InferCumSum,
                 nullptr,
                 LowerCumSum,
                 "a constant axis; exclusive and reverse",
                 false,
                 2});
  return ops;
}

}  // namespace tunefarm::operators
