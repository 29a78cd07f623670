// Indexed reads and writes: Gather, GatherElements, GatherND, ScatterND, ScatterElements (and
// opset 9's Scatter), OneHot, TopK, and EyeLike (a constant: its values depend only on the input's
// shape). Compute definitions in
// compiler/compute/index.cc; every index a kernel reads is normalized and clamped into its axis, and
// ScatterElements' constant indices out of range are refused here, naming the node.
#include "compiler/compute/ops.h"
#include "compiler/ir/ir_operators.h"
#include "compiler/operators/constant_eval.h"
#include "compiler/operators/infer_context.h"
#include "compiler/operators/lower_api.h"
#include "compiler/operators/registry.h"

namespace tunefarm::operators {
namespace {

using graph::ConstantData;
using graph::DataType;
using graph::Node;
using Fold = Result<std::vector<ConstantData>>;

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

// Runtime indices into axes of these extents (GatherND's rows cycle through several): an axis of
// length 0 has no index in range (its kernel's clamp would have nothing to clamp to), and constant
// indices are checked here, where the error names the node (the executor checks runtime ones).
Status CheckIndexedExtents(const NodeView& v, size_t input, const std::vector<int64_t>& extents) {
  const auto elements = CheckedElements(v.Shape(input));
  if (!elements || *elements == 0) return Status::OK();
  for (int64_t e : extents) {
    if (e == 0) return v.Fail("indexes an axis of length 0: no index is in range");
  }
  if (!v.In(input).constant) return Status::OK();
  const auto& values = v.In(input).constant->i64;
  for (size_t k = 0; k < values.size(); ++k) {
    const int64_t e = extents[k % extents.size()];
    if (values[k] < -e || values[k] >= e) {
      return v.Fail("index " + std::to_string(values[k]) + " at position " + std::to_string(k) + " is outside [" +
                    std::to_string(-e) + ", " + std::to_string(e) + ")");
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
  TUNEFARM_RETURN_IF_ERROR(CheckIndexedExtents(cx, 1, std::vector<int64_t>(data.begin() + b, data.begin() + b + m)));
  std::vector<int64_t> out(idx.begin(), idx.end() - 1);
  out.insert(out.end(), data.begin() + b + m, data.end());
  cx.SetOut(0, cx.In(0).dtype, out);
  return Status::OK();
}

Status LowerGatherND(LowerApi& cx, const Node& n) {
  const int64_t b = n.GetInt("batch_dims", 0);
  // Each innermost row of indices names len(row) axes of data after the batch dims.
  const auto& data = cx.V(n.inputs[0]).shape;
  const auto& indices = cx.V(n.inputs[1]).shape;
  const size_t depth = indices.empty() ? 0 : size_t(indices.back());
  std::vector<int64_t> extents;
  for (size_t d = 0; d < depth && size_t(b) + d < data.size(); ++d) extents.push_back(data[size_t(b) + d]);
  if (extents.empty()) {
    return cx.EmitPlain(n, {0, 1}, [b](const std::vector<ir::Tensor>& i) { return compute::GatherND(i[0], i[1], b); });
  }
  return cx.EmitIndexed(
      n, {0, 1}, [b](const std::vector<ir::Tensor>& i) { return compute::GatherND(i[0], i[1], b); }, 1, extents);
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
  TUNEFARM_RETURN_IF_ERROR(CheckIndexedExtents(cx, 1, {data[size_t(axis)]}));
  cx.SetOut(0, cx.In(0).dtype, data);
  return Status::OK();
}

Status LowerScatterElements(LowerApi& cx, const Node& n) {
  const NodeView v(cx.graph(), n);
  TUNEFARM_ASSIGN_OR_RETURN(int64_t axis, v.Axis(n.GetInt("axis", 0), v.Shape(0).size()));
  TUNEFARM_ASSIGN_OR_RETURN(compute::ScatterReduction reduction, ScatterReductionOf(v));
  return cx.EmitIndexed(n, {0, 1, 2},
                        [axis, reduction](const std::vector<ir::Tensor>& i) {
                          return compute::ScatterElements(i[0], i[1], i[2], axis, reduction);
                        },
                        1, {v.Shape(0)[size_t(axis)]});
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

Status LowerOneHot(LowerApi& cx, const Node& n) {
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

Status LowerTopK(LowerApi& cx, const Node& n) {
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

// --- Gather ---------------------------------------------------------------------------------
Status InferGather(InferContext& cx) {
  const auto& data = cx.Shape(0);
  TUNEFARM_ASSIGN_OR_RETURN(int64_t axis, cx.Axis(cx.node().GetInt("axis", 0), data.size()));
  if (cx.In(1).dtype == DataType::kFloat32) return cx.Fail("indices must be integers");
  const auto& idx = cx.Shape(1);
  std::vector<int64_t> out(data.begin(), data.begin() + axis);
  out.insert(out.end(), idx.begin(), idx.end());
  out.insert(out.end(), data.begin() + axis + 1, data.end());
  if (cx.In(1).constant) {
    for (int64_t i : cx.In(1).constant->i64) {
      if (i < -data[size_t(axis)] || i >= data[size_t(axis)])
        return cx.Fail("index " + std::to_string(i) + " out of range");
    }
  }
  TUNEFARM_RETURN_IF_ERROR(CheckIndexedExtents(cx, 1, {data[size_t(axis)]}));
  cx.SetOut(0, cx.In(0).dtype, out);
  return Status::OK();
}

Fold FoldGather(InferContext& cx) {
  const auto& data = cx.Shape(0);
  TUNEFARM_ASSIGN_OR_RETURN(int64_t axis, cx.Axis(cx.node().GetInt("axis", 0), data.size()));
  const auto& indices = cx.Const(1);
  const size_t index_rank = indices.shape.size();
  return std::vector<ConstantData>{Remap(cx.Const(0), cx.Out(0).shape, [&](const std::vector<int64_t>& o) {
    std::vector<int64_t> at(o.begin() + axis, o.begin() + axis + int64_t(index_rank));
    int64_t i = indices.i64[size_t(FlatIndex(indices.shape, at))];
    if (i < 0) i += data[size_t(axis)];
    std::vector<int64_t> idx(o.begin(), o.begin() + axis);
    idx.push_back(i);
    idx.insert(idx.end(), o.begin() + axis + int64_t(index_rank), o.end());
    return FlatIndex(data, idx);
  })};
}

Status LowerGather(LowerApi& cx, const Node& n) {
  const NodeView v(cx.graph(), n);
  TUNEFARM_ASSIGN_OR_RETURN(int64_t axis, v.Axis(n.GetInt("axis", 0), v.Shape(0).size()));
  // Negative indices count from the end in the kernel itself (compute::Gather).
  return cx.EmitIndexed(n, {0, 1},
                        [axis](const std::vector<ir::Tensor>& i) { return compute::Gather(i[0], i[1], axis); }, 1,
                        {v.Shape(0)[size_t(axis)]});
}

// --- GatherElements ------------------------------------------------------------------------
Status InferGatherElements(InferContext& cx) {
  const auto& data = cx.Shape(0);
  const auto& idx = cx.Shape(1);
  TUNEFARM_ASSIGN_OR_RETURN(int64_t axis, cx.Axis(cx.node().GetInt("axis", 0), data.size()));
  if (cx.In(1).dtype != DataType::kInt64 && cx.In(1).dtype != DataType::kInt32)
    return cx.Fail("indices must be int64 or int32");
  if (idx.size() != data.size()) {
    return cx.Fail("indices " + ShapeStr(idx) + " must have the rank of data " + ShapeStr(data));
  }
  for (size_t d = 0; d < data.size(); ++d) {
    if (int64_t(d) != axis && idx[d] > data[d])
      return cx.Fail("indices " + ShapeStr(idx) + " exceed data " + ShapeStr(data) + " off the axis");
  }
  if (cx.In(1).constant) {
    for (int64_t i : cx.In(1).constant->i64) {
      if (i < -data[size_t(axis)] || i >= data[size_t(axis)])
        return cx.Fail("index " + std::to_string(i) + " out of range");
    }
  }
  TUNEFARM_RETURN_IF_ERROR(CheckIndexedExtents(cx, 1, {data[size_t(axis)]}));
  cx.SetOut(0, cx.In(0).dtype, idx);
  return Status::OK();
}

Status LowerGatherElements(LowerApi& cx, const Node& n) {
  const NodeView v(cx.graph(), n);
  TUNEFARM_ASSIGN_OR_RETURN(int64_t axis, v.Axis(n.GetInt("axis", 0), v.Shape(0).size()));
  return cx.EmitIndexed(n, {0, 1},
                        [axis](const std::vector<ir::Tensor>& i) { return compute::GatherElements(i[0], i[1], axis); },
                        1, {v.Shape(0)[size_t(axis)]});
}

// --- ScatterND ------------------------------------------------------------------------------
constexpr int64_t kMaxScatterMapElements = int64_t(1) << 24;

// For each output element, the flat index of the update written there (-1: data's own value),
// from constant indices; later updates of the same element win, as in the reference.
Result<std::vector<int64_t>> ScatterSources(const NodeView& v) {
  const auto& data = v.Shape(0);
  const auto& ishape = v.Shape(1);
  if (ishape.empty()) return v.Fail("indices must have rank >= 1");
  const int64_t k = ishape.back();
  if (k < 1 || k > int64_t(data.size()))
    return v.Fail("index depth " + std::to_string(k) + " does not fit data of rank " + std::to_string(data.size()));
  std::vector<int64_t> updates(ishape.begin(), ishape.end() - 1);
  updates.insert(updates.end(), data.begin() + k, data.end());
  if (v.Shape(2) != updates) return v.Fail("updates " + ShapeStr(v.Shape(2)) + " must be " + ShapeStr(updates));
  if (v.node().GetString("reduction", "none") != "none") return v.Fail("only reduction 'none' is supported");
  TUNEFARM_ASSIGN_OR_RETURN(std::vector<int64_t> idx, v.ConstInts(1, "indices"));
  // The compile-time map has one entry per data element.
  const auto elements = CheckedElements(data);
  if (!elements || *elements > kMaxScatterMapElements) {
    return v.Fail("data " + ShapeStr(data) + " is too large for ScatterND's compile-time map (at most " +
                  std::to_string(kMaxScatterMapElements) + " elements)");
  }
  const int64_t slice = Product(data, size_t(k), data.size());
  std::vector<int64_t> source(size_t(Product(data)), -1);
  for (int64_t t = 0; t < int64_t(idx.size()) / k; ++t) {
    int64_t flat = 0;
    for (int64_t d = 0; d < k; ++d) {
      int64_t i = idx[size_t(t * k + d)];
      const int64_t dim = data[size_t(d)];
      if (i < -dim || i >= dim)
        return v.Fail("index " + std::to_string(i) + " out of range for dimension " + std::to_string(dim));
      flat = flat * dim + (i < 0 ? i + dim : i);
    }
    for (int64_t j = 0; j < slice; ++j) source[size_t(flat * slice + j)] = t * slice + j;
  }
  return source;
}

Status InferScatterND(InferContext& cx) {
  if (cx.num_inputs() != 3) return cx.Fail("takes data, indices and updates");
  if (cx.In(0).dtype != cx.In(2).dtype) return cx.Fail("data and updates have different types");
  TUNEFARM_RETURN_IF_ERROR(ScatterSources(cx).status());
  cx.SetOut(0, cx.In(0).dtype, cx.Shape(0));
  return Status::OK();
}

Fold FoldScatterND(InferContext& cx) {
  TUNEFARM_ASSIGN_OR_RETURN(std::vector<int64_t> source, ScatterSources(cx));
  ConstantData out = cx.Const(0);
  const ConstantData& updates = cx.Const(2);
  for (size_t i = 0; i < source.size(); ++i) {
    if (source[i] < 0) continue;
    if (out.dtype == DataType::kFloat32) {
      out.f32[i] = updates.f32[size_t(source[i])];
    } else {
      out.i64[i] = updates.i64[size_t(source[i])];
    }
  }
  return std::vector<ConstantData>{std::move(out)};
}

Status LowerScatterND(LowerApi& cx, const Node& n) {
  TUNEFARM_ASSIGN_OR_RETURN(std::vector<int64_t> source, ScatterSources(NodeView(cx.graph(), n)));
  const auto shape = cx.V(n.outputs[0]).shape;
  const int map =
      cx.ParamFromConstant(cx.V(n.outputs[0]).name + ".scatter_map", ConstantData{DataType::kInt64, shape, {}, source});
  TUNEFARM_ASSIGN_OR_RETURN(int data, cx.Get(n.inputs[0], 0));
  TUNEFARM_ASSIGN_OR_RETURN(int updates, cx.Get(n.inputs[2], 0));
  const int64_t total = Product(cx.V(n.inputs[2]).shape);
  const int t = cx.Emit(
      n.op_type, {data, map, updates},
      [shape, total](const std::vector<ir::Tensor>& i) {
        return te::Compute(i[0]->name + ".scatter", shape, [&](const std::vector<ir::Expr>& o) {
          const ir::Expr from = te::Read(i[1], o);
          // Updates read through a clamped flat index (the untaken branch must stay in bounds).
          const ir::Expr at = ir::min(ir::max(from, ir::Expr(int64_t(0))), ir::Expr(std::max<int64_t>(total - 1, 0)));
          std::vector<ir::Expr> uidx;
          ir::Expr rest = at;
          const auto& us = i[2]->shape;
          for (size_t d = us.size(); d-- > 0;) {
            uidx.insert(uidx.begin(), rest % ir::Expr(us[d]));
            rest = rest / ir::Expr(us[d]);
          }
          return ir::select(from >= ir::Expr(int64_t(0)), te::Read(i[2], uidx), te::Read(i[0], o));
        });
      },
      cx.OutType(n), cx.V(n.outputs[0]).name);
  cx.Define(n.outputs[0], t, 0);
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
       "indices int64/int32; an index outside its axis is clamped into it",
       false,
       2},
      {"ScatterElements",
       "index",
       {{"axis", kInt}, {"reduction", kString}},
       InferScatterElements,
       nullptr,
       LowerScatterElements,
       "reduction none/add/mul/max/min; duplicate indices without a reduction add",
       false,
       3},
      {"Scatter",
       "index",
       {{"axis", kInt}},
       InferScatterElements,
       nullptr,
       LowerScatterElements,
       "opset 9-10: ScatterElements without a reduction",
       false,
       3},
      {"OneHot", "index", {{"axis", kInt}}, InferOneHot, nullptr, LowerOneHot, "depth must be a constant", false, 3},
      {"TopK",
       "index",
       {{"axis", kInt}, {"largest", kInt}, {"sorted", kInt}, {"k", kInt}},
       InferTopK,
       nullptr,
       LowerTopK,
       "K must be a constant; always sorted, ties by index",
       false,
       1},
      {"EyeLike",
       "index",
       {{"dtype", kInt}, {"k", kInt}},
       InferEyeLike,
       nullptr,
       nullptr,
       "a constant (its values depend only on the shape)"},
      {"NonZero",
       "index",
       {},
       InferNonZero,
       nullptr,
       nullptr,
       "a constant input only (folded at compile time): the output's shape depends on the values"},
      {"Gather", "tensor", {{"axis", kInt}}, InferGather, FoldGather, LowerGather, "negative indices", false, 2},
      {"GatherElements",
       "tensor",
       {{"axis", kInt}},
       InferGatherElements,
       nullptr,
       LowerGatherElements,
       "runtime indices outside the axis are clamped into it",
       false,
       2},
      {"ScatterND",
       "tensor",
       {{"reduction", kString}},
       InferScatterND,
       FoldScatterND,
       LowerScatterND,
       "constant indices; reduction 'none'",
       false,
       3},
  };
}

}  // namespace tunefarm::operators
