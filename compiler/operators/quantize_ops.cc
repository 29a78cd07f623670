// The quantization family: QuantizeLinear and DequantizeLinear (opsets 10, 13, 19, 21), per tensor
// and per axis, uint8 and int8, and DynamicQuantizeLinear (opset 11), as the ONNX spec computes them:
//   QuantizeLinear    y = saturate(round_half_to_even(x / y_scale) + y_zero_point)
//   DequantizeLinear  y = (x - x_zero_point) * x_scale
// These rows compute in float32 and integers (the graph's own element types). What they do not take
// is refused naming the node: float8 and int4 types, blocked quantization (opset 21 block_size),
// output_dtype other than the zero point's.
#include <string>
#include <vector>

#include "compiler/compute/ops.h"
#include "compiler/ir/ir_operators.h"
#include "compiler/operators/infer_context.h"
#include "compiler/operators/lower_api.h"
#include "compiler/operators/registry.h"
#include "compiler/te/tensor.h"

namespace tunefarm::operators {
namespace {

using graph::DataType;
using graph::Node;

// The types QuantizeLinear writes (compute::RoundAndSaturate saturates to their ranges).
bool IsQuantizedType(DataType t) { return t == DataType::kUInt8 || t == DataType::kInt8; }

// The scale's (and zero point's) shape: a scalar (or [1]) per tensor, or [C] along `axis`. Returns
// the axis, or -1 for per tensor.
Result<int64_t> ScaleAxis(InferContext& cx) {
  if (cx.node().GetInt("block_size", 0) != 0) {
    return cx.Fail("blocked quantization (block_size " + std::to_string(cx.node().GetInt("block_size", 0)) +
                   ") is not supported; quantize per tensor or per axis");
  }
  if (cx.In(1).dtype != DataType::kFloat32) return cx.Fail("the scale must be float32");
  const std::vector<int64_t>& scale = cx.Shape(1);
  int64_t count = 1;
  for (int64_t d : scale) count *= d;
  if (scale.size() > 1) return cx.Fail("the scale must be a scalar or 1-D, got rank " + std::to_string(scale.size()));
  if (cx.HasInput(2) && cx.Shape(2) != scale) return cx.Fail("the zero point's shape differs from the scale's");
  if (scale.empty() || count == 1) return int64_t(-1);
  TUNEFARM_ASSIGN_OR_RETURN(int64_t axis, cx.Axis(cx.node().GetInt("axis", 1), cx.Shape(0).size()));
  if (cx.Shape(0)[size_t(axis)] != count) {
    return cx.Fail("a per-axis scale has " + std::to_string(count) + " values and axis " + std::to_string(axis) +
                   " of the input " + std::to_string(cx.Shape(0)[size_t(axis)]));
  }
  return axis;
}

Status InferQuantize(InferContext& cx) {
  if (cx.In(0).dtype != DataType::kFloat32) return cx.Fail("the input must be float32 (float16 graphs: Cast first)");
  DataType out = cx.HasInput(2) ? cx.In(2).dtype : DataType::kUInt8;
  if (const int64_t to = cx.node().GetInt("output_dtype", 0); to != 0) {
    const auto t = graph::OnnxElementType(to);
    const DataType wanted = t == runtime::ElementType::kInt8 ? DataType::kInt8 : DataType::kUInt8;
    if ((t != runtime::ElementType::kInt8 && t != runtime::ElementType::kUInt8) || (cx.HasInput(2) && wanted != out)) {
      return cx.Fail("output_dtype " + std::to_string(to) +
                     " is not supported here (uint8 or int8, as the zero point)");
    }
    out = wanted;
  }
  if (!IsQuantizedType(out)) {
    return cx.Fail(std::string("quantizing to ") + graph::DataTypeName(out) +
                   " is not supported (uint8 and int8 are; float8, int4, 16- and 32-bit types are not)");
  }
  TUNEFARM_RETURN_IF_ERROR(ScaleAxis(cx).status());
  cx.SetOut(0, out, cx.Shape(0));
  return Status::OK();
}

Status InferDequantize(InferContext& cx) {
  if (!IsQuantizedType(cx.In(0).dtype) && cx.In(0).dtype != DataType::kInt32) {
    return cx.Fail(std::string("dequantizing ") + graph::DataTypeName(cx.In(0).dtype) +
                   " is not supported (uint8, int8 and int32 are; float8 and int4 are not)");
  }
  if (cx.HasInput(2) && cx.In(2).dtype != cx.In(0).dtype) return cx.Fail("the zero point's type differs from x's");
  TUNEFARM_RETURN_IF_ERROR(ScaleAxis(cx).status());
  cx.SetOut(0, DataType::kFloat32, cx.Shape(0));
  return Status::OK();
}

// The axis a per-axis scale runs along, or -1 (inference checked the shapes).
int64_t LoweredAxis(const LowerApi& cx, const Node& n) {
  const std::vector<int64_t>& scale = cx.V(n.inputs[1]).shape;
  int64_t count = 1;
  for (int64_t d : scale) count *= d;
  if (scale.empty() || count == 1) return -1;
  const int64_t rank = int64_t(cx.V(n.inputs[0]).shape.size());
  const int64_t axis = n.GetInt("axis", 1);
  return axis < 0 ? axis + rank : axis;
}

Status LowerQuantize(LowerApi& cx, const Node& n) {
  const bool has_zero = n.inputs.size() > 2 && n.inputs[2] >= 0;
  const int64_t axis = LoweredAxis(cx, n);
  const ir::Type out_type = ToIRType(cx.OutType(n));
  std::vector<size_t> inputs = {0, 1};
  if (has_zero) inputs.push_back(2);
  return cx.EmitPlain(n, inputs, [=](const std::vector<ir::Tensor>& in) {
    return compute::Quantize(in[0], in[1], has_zero ? in[2] : ir::Tensor(), axis, out_type);
  });
}

Status LowerDequantize(LowerApi& cx, const Node& n) {
  const bool has_zero = n.inputs.size() > 2 && n.inputs[2] >= 0;
  const int64_t axis = LoweredAxis(cx, n);
  std::vector<size_t> inputs = {0, 1};
  if (has_zero) inputs.push_back(2);
  return cx.EmitPlain(n, inputs, [=](const std::vector<ir::Tensor>& in) {
    return compute::Dequantize(in[0], in[1], has_zero ? in[2] : ir::Tensor(), axis);
  });
}

// --- DynamicQuantizeLinear -------------------------------------------------------------------
// uint8 with the scale and zero point the input's own range gives (the range always holding 0):
//   scale = (max(0, max x) - min(0, min x)) / 255,  zero_point = saturate(round(-min(0, min x) / scale))
//   y = saturate(round(x / scale) + zero_point)
// An all-zero input has scale 0; y and the zero point are then 0 (the spec divides by it).
Status InferDynamicQuantize(InferContext& cx) {
  if (cx.In(0).dtype != DataType::kFloat32) return cx.Fail("the input must be float32");
  cx.SetOut(0, DataType::kUInt8, cx.Shape(0));
  cx.SetOut(1, DataType::kFloat32, {});  // SetOut skips outputs the node omits
  cx.SetOut(2, DataType::kUInt8, {});
  return Status::OK();
}

Status LowerDynamicQuantize(LowerApi& cx, const Node& n) {
  TUNEFARM_ASSIGN_OR_RETURN(int x, cx.Get(n.inputs[0], 0));
  const std::string base = cx.V(n.outputs[0]).name;
  auto name_of = [&](size_t k, const char* fallback) {
    return n.outputs.size() > k && n.outputs[k] >= 0 ? cx.V(n.outputs[k]).name : base + fallback;
  };
  // Three kernels, one per output; each parameter kernel reads the range itself (two reductions,
  // cheap beside the products these models quantize for).
  const int scale = cx.Emit(
      n.op_type, {x},
      [](const std::vector<ir::Tensor>& i) { return compute::DynamicQuantizationParameters(i[0]).scale; },
      ElementType::kFloat32, name_of(1, ".scale"));
  const int zero_point = cx.Emit(
      n.op_type, {x},
      [](const std::vector<ir::Tensor>& i) { return compute::DynamicQuantizationParameters(i[0]).zero_point; },
      ElementType::kUInt8, name_of(2, ".zero_point"));
  const int y = cx.Emit(
      n.op_type, {x, scale, zero_point},
      [](const std::vector<ir::Tensor>& i) { return compute::QuantizeDynamically(i[0], i[1], i[2]); },
      ElementType::kUInt8, base);
  cx.Define(n.outputs[0], y, 0);
  if (n.outputs.size() > 1 && n.outputs[1] >= 0) cx.Define(n.outputs[1], scale, 0);
  if (n.outputs.size() > 2 && n.outputs[2] >= 0) cx.Define(n.outputs[2], zero_point, 0);
  return Status::OK();
}

}  // namespace

std::vector<OperatorDef> QuantizeOperators() {
  return {
      {"QuantizeLinear",
       "quantize",
       {{"axis", kInt}, {"saturate", kInt}, {"block_size", kInt}, {"output_dtype", kInt}},
       InferQuantize,
       nullptr,
       LowerQuantize,
       "uint8/int8, per tensor or per axis; round half to even, saturating",
       false,
       2},
      {"DequantizeLinear",
       "quantize",
       {{"axis", kInt}, {"block_size", kInt}},
       InferDequantize,
       nullptr,
       LowerDequantize,
       "uint8/int8/int32 to float32, per tensor or per axis",
       false,
       2},
      {"DynamicQuantizeLinear",
       "quantize",
       {},
       InferDynamicQuantize,
       nullptr,
       LowerDynamicQuantize,
       "float32 to uint8 with the scale and zero point of the input's range (holding 0)"},
  };
}

}  // namespace tunefarm::operators
