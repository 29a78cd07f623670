// Indexed reads and writes: GatherND, ScatterElements (and opset 9's Scatter), OneHot, TopK, and
// EyeLike (a constant: its values depend only on the input's shape). Compute definitions in
// compiler/compute/index.cc; every index a kernel reads is normalized and clamped into its axis, and
// ScatterElements' constant indices out of range are refused here, naming the node.
#include "compiler/compute/ops.h"
#include "compiler/operators/constant_eval.h"
#include "compiler/operators/infer_context.h"
#include "compiler/operators/lower_context.h"
#include "compiler/operators/registry.h"

namespace tunefarm::operators {
namespace {

using graph::ConstantData;
using graph::DataType;
using graph::Node;

bool IsIndexType(DataType t) { return t == DataType::kInt64 || t == DataType::kInt32; }

// Constant indices in [-extent, extent), or an error naming the one that is not.
Status CheckConstantIndices(const NodeView& v, size_t input, int64_t extent) {
  if (!v.In(input).constant) return Status::OK();
  for (int64_t i : v.In(input).constant->i64) {
    if (i < -extent || i >= extent) {
      return v.Fail("index " + std::to_string(i) + " is outside [" + std::to_string(-extent) + ", " +
                    std::to_string(extent) + ")");
    }
  }
  return Status::OK();
}

// --- GatherND -------------------------------------------------------------------------------
Status InferGatherND(InferContext& cx) {
  const auto& data = cx.Shape(0);
  const auto& idx = cx.Shape(1);
  const int64_t b = cx.node().GetInt("batch_dims", 0);
  if (!IsIndexType(cx.In(1).dtype)) return cx.Fail("indices must be int64 or int32");
  if (data.empty() || idx.empty()) return cx.Fail("data and indices must have rank 1 or more");
  const int64_t m = idx.back();
  if (b < 0 || b >= int64_t(std::min(data.size(), idx.size())))
    return cx.Fail("batch_dims " + std::to_string(b) + " is out of range");
  if (m < 1 || b + m > int64_t(data.size())) {
    return cx.Fail("the last dimension of indices " + ShapeStr(idx) + " must be in [1, " +
                   std::to_string(int64_t(data.size()) - b) + "]");
  }
  for (int64_t d = 0; d < b; ++d) {
    if (data[size_t(d)] != idx[size_t(d)])
      return cx.Fail("the batch dimensions of data " + ShapeStr(data) + " and indices " + ShapeStr(idx) + " differ");
  }
  std::vector<int64_t> out(idx.begin(), idx.end() - 1);
  out.insert(out.end(), data.begin() + b + m, data.end());
  cx.SetOut(0, cx.In(0).dtype, out);
  return Status::OK();
}

Status LowerGatherND(LowerContext& cx, const Node& n) {
  const int64_t b = n.GetInt("batch_dims", 0);
  return cx.EmitPlain(n, {0, 1}, [b](const std::vector<ir::Tensor>& i) { return compute::GatherND(i[0], i[1], b); });
}

// --- ScatterElements, Scatter ---------------------------------------------------------------
Result<compute::ScatterReduction> ScatterReductionOf(const NodeView& v) {
  const std::string r = v.node().GetString("reduction", "none");
  if (r == "none") return compute::ScatterReduction::kNone;
  if (r == "add") return compute::ScatterReduction::kAdd;
  if (r == "mul") return compute::ScatterReduction::kMul;
  if (r == "max") return compute::ScatterReduction::kMax;
  if (r == "min") return compute::ScatterReduction::kMin;
  return v.Fail("reduction '" + r + "' is not one of none, add, mul, max, min");
}

Status InferScatterElements(InferContext& cx) {
  const auto& data = cx.Shape(0);
  TUNEFARM_ASSIGN_OR_RETURN(int64_t axis, cx.Axis(cx.node().GetInt("axis", 0), data.size()));
  TUNEFARM_RETURN_IF_ERROR(ScatterReductionOf(cx).status());
  if (!IsIndexType(cx.In(1).dtype)) return cx.Fail("indices must be int64 or int32");
  if (cx.Shape(1) != cx.Shape(2) || cx.Shape(1).size() != data.size()) {
    return cx.Fail("indices " + ShapeStr(cx.Shape(1)) + " and updates " + ShapeStr(cx.Shape(2)) +
                   " must have one shape, of data's rank " + std::to_string(data.size()));
  }
  if (cx.In(2).dtype != cx.In(0).dtype) return cx.Fail("updates must have data's type");
  for (size_t d = 0; d < data.size(); ++d) {
    if (int64_t(d) != axis && cx.Shape(1)[d] > data[d])
      return cx.Fail("indices " + ShapeStr(cx.Shape(1)) + " exceed data " + ShapeStr(data));
  }
  TUNEFARM_RETURN_IF_ERROR(CheckConstantIndices(cx, 1, data[size_t(axis)]));
  cx.SetOut(0, cx.In(0).dtype, data);
  return Status::OK();
}

Status LowerScatterElements(LowerContext& cx, const Node& n) {
  const NodeView v(cx.graph(), n);
  TUNEFARM_ASSIGN_OR_RETURN(int64_t axis, v.Axis(n.GetInt("axis", 0), v.Shape(0).size()));
  TUNEFARM_ASSIGN_OR_RETURN(compute::ScatterReduction reduction, ScatterReductionOf(v));
  return cx.EmitPlain(n, {0, 1, 2}, [axis, reduction](const std::vector<ir::Tensor>& i) {
    return compute::ScatterElements(i[0], i[1], i[2], axis, reduction);
  });
}

// --- OneHot ---------------------------------------------------------------------------------
Result<int64_t> OneHotDepth(const NodeView& v) {
  if (!v.HasInput(1) || !v.In(1).constant || v.In(1).constant->num_elements() != 1)
    return v.Fail("depth must be a constant scalar");
  const double depth = ElementAt(*v.In(1).constant, 0);
  if (depth < 1 || depth > double(kMaxTensorElements))
    return v.Fail("depth " + std::to_string(depth) + " is out of range");
  return int64_t(depth);
}

Status InferOneHot(InferContext& cx) {
  TUNEFARM_ASSIGN_OR_RETURN(int64_t depth, OneHotDepth(cx));
  if (!cx.HasInput(2) || cx.Shape(2) != std::vector<int64_t>{2}) return cx.Fail("values must be [off, on], shape [2]");
  std::vector<int64_t> out = cx.Shape(0);
  TUNEFARM_ASSIGN_OR_RETURN(int64_t axis, cx.Axis(cx.node().GetInt("axis", -1), out.size() + 1));
  out.insert(out.begin() + axis, depth);
  if (!CheckedElements(out)) return cx.Fail("the output " + ShapeStr(out) + " is too large");
  cx.SetOut(0, cx.In(2).dtype, out);
  return Status::OK();
}

Status LowerOneHot(LowerContext& cx, const Node& n) {
  const NodeView v(cx.graph(), n);
  TUNEFARM_ASSIGN_OR_RETURN(int64_t depth, OneHotDepth(v));
  TUNEFARM_ASSIGN_OR_RETURN(int64_t axis, v.Axis(n.GetInt("axis", -1), v.Shape(0).size() + 1));
  return cx.EmitPlain(
      n, {0, 2}, [depth, axis](const std::vector<ir::Tensor>& i) { return compute::OneHot(i[0], i[1], depth, axis); });
}

// --- TopK -----------------------------------------------------------------------------------
// k: input 1 from opset 10, the attribute before.
Result<int64_t> TopKCount(const NodeView& v) {
  int64_t k = v.node().GetInt("k", -1);
  if (v.opset() >= 10 || v.HasInput(1)) {
    TUNEFARM_ASSIGN_OR_RETURN(std::vector<int64_t> ks, v.ConstInts(1, "K"));
    if (ks.size() != 1) return v.Fail("K must hold one value");
    k = ks[0];
  }
  return k;
}

Status InferTopK(InferContext& cx) {
  const auto& x = cx.Shape(0);
  TUNEFARM_ASSIGN_OR_RETURN(int64_t axis, cx.Axis(cx.node().GetInt("axis", -1), x.size()));
  TUNEFARM_ASSIGN_OR_RETURN(int64_t k, TopKCount(cx));
  if (k < 0 || k > x[size_t(axis)])
    return cx.Fail("K " + std::to_string(k) + " is outside [0, " + std::to_string(x[size_t(axis)]) + "]");
  if (cx.In(0).dtype == DataType::kBool) return cx.Fail("TopK takes numbers, got bool");
  std::vector<int64_t> out = x;
  out[size_t(axis)] = k;
  cx.SetOut(0, cx.In(0).dtype, out);
  if (cx.num_outputs() > 1) cx.SetOut(1, DataType::kInt64, out);
  return Status::OK();
}

Status LowerTopK(LowerContext& cx, const Node& n) {
  const NodeView v(cx.graph(), n);
  TUNEFARM_ASSIGN_OR_RETURN(int64_t axis, v.Axis(n.GetInt("axis", -1), v.Shape(0).size()));
  TUNEFARM_ASSIGN_OR_RETURN(int64_t k, TopKCount(v));
  const bool largest = n.GetInt("largest", 1) != 0;
  TUNEFARM_ASSIGN_OR_RETURN(int x, cx.Get(n.inputs[0], 0));
  const std::string base = cx.V(n.outputs[0]).name;
  // The indices, then the values they name (sorted: sorted=0 allows any order, this one included).
  const int indices = cx.Emit(
      n.op_type, {x},
      [axis, k, largest](const std::vector<ir::Tensor>& i) { return compute::TopK(i[0], axis, k, largest).indices; },
      ElementType::kInt64, n.outputs.size() > 1 && n.outputs[1] >= 0 ? cx.V(n.outputs[1]).name : base + ".indices");
  const int values = cx.Emit(
      n.op_type, {x, indices},
      [axis](const std::vector<ir::Tensor>& i) { return compute::GatherElements(i[0], i[1], axis); }, cx.OutType(n),
      base);
  cx.Define(n.outputs[0], values, 0);
  if (n.outputs.size() > 1 && n.outputs[1] >= 0) cx.Define(n.outputs[1], indices, 0);
  return Status::OK();
}

// --- EyeLike --------------------------------------------------------------------------------
Status InferEyeLike(InferContext& cx) {
  const auto& shape = cx.Shape(0);
  if (shape.size() != 2) return cx.Fail("takes a 2-D input, got " + ShapeStr(shape));
  DataType dtype = cx.In(0).dtype;
  if (cx.node().Has("dtype")) {
    const auto t = graph::OnnxElementType(cx.node().GetInt("dtype", 1));
    if (!t) {
      return cx.Fail("dtype " + std::to_string(cx.node().GetInt("dtype", 1)) + " is not supported (" +
                     graph::SupportedElementTypes() + ")");
    }
    dtype = graph::StorageDataType(*t);
  }
  const auto n = CheckedElements(shape);
  if (!n || *n > kMaxInferenceFoldElements)
    return cx.Fail("the output " + ShapeStr(shape) + " is too large to build at compile time");
  const int64_t k = cx.node().GetInt("k", 0);
  ConstantData out = EmptyConstant(dtype, shape);
  for (int64_t i = 0; i < shape[0]; ++i) {
    for (int64_t j = 0; j < shape[1]; ++j) {
      const bool one = j - i == k;
      if (dtype == DataType::kFloat32) {
        out.f32.push_back(one ? 1.0f : 0.0f);
      } else {
        out.i64.push_back(one ? 1 : 0);
      }
    }
  }
  cx.SetConstOut(0, std::move(out));
  return Status::OK();
}

// --- NonZero --------------------------------------------------------------------------------
// The output's shape is the count of its input's nonzero elements: known at compile time only
// when the input is a constant (folded here, as the shape arithmetic of exporters needs);
// kernels have static shapes, so a runtime input is refused naming the node.
Status InferNonZero(InferContext& cx) {
  const graph::Value& x = cx.In(0);
  if (!x.constant) {
    return cx.Fail(
        "its output's shape depends on the values of '" + x.name +
        "', which are known only at run time; tunefarm compiles static shapes, so NonZero needs a constant input");
  }
  const auto n = CheckedElements(x.shape);
  if (!n || *n > kMaxInferenceFoldElements)
    return cx.Fail("the input " + ShapeStr(x.shape) + " is too large to fold at compile time");
  std::vector<int64_t> nonzero;  // flat indices, row-major
  for (int64_t i = 0; i < *n; ++i) {
    if (ElementAt(*x.constant, i) != 0) nonzero.push_back(i);
  }
  const int64_t rank = int64_t(x.shape.size()), count = int64_t(nonzero.size());
  ConstantData out = EmptyConstant(DataType::kInt64, {rank, count});
  out.i64.assign(size_t(rank * count), 0);
  for (int64_t k = 0; k < count; ++k) {
    int64_t rest = nonzero[size_t(k)];
    for (int64_t d = rank - 1; d >= 0; --d) {
      out.i64[size_t(d * count + k)] = rest % x.shape[size_t(d)];
      rest /= x.shape[size_t(d)];
    }
  }
  cx.SetConstOut(0, std::move(out));
  return Status::OK();
}

}  // namespace

std::vector<OperatorDef> IndexOperators() {
  return {
      {"GatherND",
       "index",
       {{"batch_dims", kInt}},
       InferGatherND,
       nullptr,
       LowerGatherND,
       nullptr,
       "indices int64/int32; an index outside its axis is clamped into it",
       false,
       2},
      {"ScatterElements",
       "index",
       {{"axis", kInt}, {"reduction", kString}},
       InferScatterElements,
       nullptr,
       LowerScatterElements,
       nullptr,
       "reduction none/add/mul/max/min; duplicate indices without a reduction add",
       false,
       3},
      {"Scatter",
       "index",
       {{"axis", kInt}},
       InferScatterElements,
       nullptr,
       LowerScatterElements,
       nullptr,
       "opset 9-10: ScatterElements without a reduction",
       false,
       3},
      {"OneHot",
       "index",
       {{"axis", kInt}},
       InferOneHot,
       nullptr,
       LowerOneHot,
       nullptr,
       "depth must be a constant",
       false,
       3},
      {"TopK",
       "index",
       {{"axis", kInt}, {"largest", kInt}, {"sorted", kInt}, {"k", kInt}},
       InferTopK,
       nullptr,
       LowerTopK,
       nullptr,
       "K must be a constant; always sorted, ties by index",
       false,
       1},
      {"EyeLike",
       "index",
       {{"dtype", kInt}, {"k", kInt}},
       InferEyeLike,
       nullptr,
       nullptr,
       nullptr,
       "a constant (its values depend only on the shape)"},
      {"NonZero",
       "index",
       {},
       InferNonZero,
       nullptr,
       nullptr,
       nullptr,
       "a constant input only (folded at compile time): the output's shape depends on the values"},
  };
}

}  // namespace tunefarm::operators
