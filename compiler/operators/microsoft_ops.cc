// The com.microsoft family: the ONNX Runtime contrib operators its quantizers write into real models
// (rows named "com.microsoft.<op>", registry.h), with the semantics of ONNX Runtime's
// docs/ContribOperators.md:
//   QLinearAdd, QLinearMul        C = quantize(dequantize(A) op dequantize(B)), numpy broadcasting
//   QLinearSigmoid, QLinearLeakyRelu, QLinearGlobalAveragePool, QLinearAveragePool, QLinearSoftmax,
//   QLinearConcat
//                                 Y = quantize(f(dequantize(X...))) with Y's scale and zero point
//   QGemm                         (A - a_zp)(B - b_zp) in int32 plus an int32 C, scaled by
//                                 alpha * a_scale * b_scale: float out, or quantized with y_scale
//   MatMulIntegerToFloat          (A - a_zp)(B - b_zp) in int32, times a_scale * b_scale, plus bias
//   DynamicQuantizeMatMul         A quantized as DynamicQuantizeLinear does, then the same
// Scales and zero points are per tensor; B's may be per column (QGemm, the two MatMuls). Float
// steps compute in float32 as ONNX Runtime's reference kernels do (its lookup tables for the
// activations hold the same float values), so results agree to a quantization step.
#include <string>
#include <vector>

#include "compiler/compute/ops.h"
#include "compiler/ir/ir_operators.h"
#include "compiler/operators/infer_context.h"
#include "compiler/operators/kernel_inputs.h"
#include "compiler/operators/linear_shapes.h"
#include "compiler/operators/lower_api.h"
#include "compiler/operators/registry.h"
#include "compiler/operators/template_lowering.h"

namespace tunefarm::operators {
namespace {

using graph::DataType;
using graph::Node;

bool Is8Bit(DataType t) { return t == DataType::kUInt8 || t == DataType::kInt8; }

// Input i, if present, is one float32 value (a scale) or one value of type `zero_type` (a zero
// point); with `per_column` > 0 also [per_column].
Status CheckParameter(const NodeView& v, size_t i, const char* role, DataType type, int64_t per_column = 0) {
  if (!v.HasInput(i)) return Status::OK();
  if (v.In(i).dtype != type) {
    return v.Fail(std::string(role) + " must be " + graph::DataTypeName(type) + ", got " +
                  graph::DataTypeName(v.In(i).dtype));
  }
  const std::vector<int64_t>& s = v.Shape(i);
  if (Product(s) == 1 || (per_column > 0 && s.size() == 1 && s[0] == per_column)) return Status::OK();
  return v.Fail(std::string(role) + " " + ShapeStr(s) + " must be a single value" +
                (per_column > 0 ? " or [" + std::to_string(per_column) + "] (one per column)" : std::string()));
}

// An 8-bit input and its scale and zero point at (x, x + 1, x + 2).
Status CheckQuantizedInput(const NodeView& v, size_t x, const char* what) {
  if (!v.HasInput(x) || !v.HasInput(x + 1)) return v.Fail(std::string(what) + " or its scale is missing");
  if (!Is8Bit(v.In(x).dtype)) {
    return v.Fail(std::string(what) + " must be uint8 or int8, got " + graph::DataTypeName(v.In(x).dtype));
  }
  TUNEFARM_RETURN_IF_ERROR(CheckParameter(v, x + 1, "a scale", DataType::kFloat32));
  return CheckParameter(v, x + 2, "a zero point", v.In(x).dtype);
}

// The output scale at `scale` and zero point at scale + 1: the output's type is the zero point's
// (uint8 without one).
Result<DataType> QuantizedOutputType(const NodeView& v, size_t scale) {
  if (!v.HasInput(scale)) return v.Fail("the output's scale is missing");
  TUNEFARM_RETURN_IF_ERROR(CheckParameter(v, scale, "the output's scale", DataType::kFloat32));
  if (!v.HasInput(scale + 1)) return DataType::kUInt8;
  const DataType t = v.In(scale + 1).dtype;
  if (!Is8Bit(t))
    return v.Fail(std::string("the output's zero point must be uint8 or int8, got ") + graph::DataTypeName(t));
  TUNEFARM_RETURN_IF_ERROR(CheckParameter(v, scale + 1, "the output's zero point", t));
  return t;
}

ir::Tensor DequantizedInput(const KernelInputs& k, const std::vector<ir::Tensor>& t, size_t x) {
  return compute::Dequantize(k.Of(t, x), k.Of(t, x + 1), k.Of(t, x + 2), -1);
}
ir::Tensor QuantizedOutput(const KernelInputs& k, const std::vector<ir::Tensor>& t, size_t scale,
                           const ir::Tensor& value, ir::Type out) {
  return compute::Quantize(value, k.Of(t, scale), k.Of(t, scale + 1), -1, out);
}

// --- QLinearAdd, QLinearMul: (A, A_scale, A_zp, B, B_scale, B_zp, C_scale, C_zp) -----------------
Status InferQLinearBinary(InferContext& cx) {
  TUNEFARM_RETURN_IF_ERROR(CheckQuantizedInput(cx, 0, "A"));
  TUNEFARM_RETURN_IF_ERROR(CheckQuantizedInput(cx, 3, "B"));
  TUNEFARM_ASSIGN_OR_RETURN(DataType out, QuantizedOutputType(cx, 6));
  auto shape = BroadcastShapes(cx.Shape(0), cx.Shape(3));
  if (!shape.ok())
    return cx.Fail("A " + ShapeStr(cx.Shape(0)) + " and B " + ShapeStr(cx.Shape(3)) + " do not broadcast");
  cx.SetOut(0, out, *shape);
  return Status::OK();
}

Status LowerQLinearBinary(LowerApi& cx, const Node& n) {
  const compute::BinaryKind kind =
      n.op_type == "com.microsoft.QLinearMul" ? compute::BinaryKind::kMul : compute::BinaryKind::kAdd;
  const KernelInputs k(n);
  const ir::Type out = ToIRType(cx.OutType(n));
  return cx.EmitPlain(n, k.inputs(), [=](const std::vector<ir::Tensor>& t) {
    const ir::Tensor sum = compute::Binary(DequantizedInput(k, t, 0), DequantizedInput(k, t, 3), kind);
    return ClampToFusedActivation(QuantizedOutput(k, t, 6, sum, out), n);
  });
}

// --- QLinearSigmoid, QLinearLeakyRelu: (X, X_scale, X_zp, Y_scale, Y_zp) --------------------------
Status InferQLinearUnary(InferContext& cx) {
  TUNEFARM_RETURN_IF_ERROR(CheckQuantizedInput(cx, 0, "X"));
  TUNEFARM_ASSIGN_OR_RETURN(DataType out, QuantizedOutputType(cx, 3));
  cx.SetOut(0, out, cx.Shape(0));
  return Status::OK();
}

Status LowerQLinearUnary(LowerApi& cx, const Node& n) {
  compute::UnaryParams p;
  if (n.op_type == "com.microsoft.QLinearSigmoid") {
    p.kind = compute::UnaryKind::kSigmoid;
  } else {
    p.kind = compute::UnaryKind::kLeakyRelu;
    p.alpha = n.GetFloat("alpha", 0.01f);
  }
  const KernelInputs k(n);
  const ir::Type out = ToIRType(cx.OutType(n));
  return cx.EmitPlain(n, k.inputs(), [=](const std::vector<ir::Tensor>& t) {
    return QuantizedOutput(k, t, 3, compute::Unary(DequantizedInput(k, t, 0), p), out);
  });
}

// --- QLinearGlobalAveragePool: (X, x_scale, x_zp, y_scale, y_zp), channels_last -----------------
std::vector<int64_t> SpatialAxes(const Node& n, size_t rank) {
  const bool channels_last = n.GetInt("channels_last", 0) != 0;
  std::vector<int64_t> axes;
  for (size_t d = channels_last ? 1 : 2; d < (channels_last ? rank - 1 : rank); ++d) axes.push_back(int64_t(d));
  return axes;
}

Status InferQLinearGlobalAveragePool(InferContext& cx) {
  TUNEFARM_RETURN_IF_ERROR(CheckQuantizedInput(cx, 0, "X"));
  TUNEFARM_ASSIGN_OR_RETURN(DataType out, QuantizedOutputType(cx, 3));
  if (cx.Shape(0).size() < 3)
    return cx.Fail("X must be N, C and at least one spatial axis, got " + ShapeStr(cx.Shape(0)));
  std::vector<int64_t> shape = cx.Shape(0);
  for (int64_t d : SpatialAxes(cx.node(), shape.size())) shape[size_t(d)] = 1;
  cx.SetOut(0, out, shape);
  return Status::OK();
}

// Channels first at rank 4, the pool reads X in the layout its producer left it (NCHW[b]c: the
// same two spatial axes) and writes [N, C/b, 1, 1, b], so the end of a ResNet changes the layout
// of C values rather than of C x H x W.
Status LowerQLinearGlobalAveragePool(LowerApi& cx, const Node& n) {
  const size_t rank = cx.V(n.inputs[0]).shape.size();
  const std::vector<int64_t> axes = SpatialAxes(n, rank);
  const KernelInputs k(n);
  const ir::Type out = ToIRType(cx.OutType(n));
  const TensorFn fn = [=](const std::vector<ir::Tensor>& t) {
    return QuantizedOutput(k, t, 3, compute::GlobalAveragePool(DequantizedInput(k, t, 0), axes), out);
  };
  const int64_t block = rank == 4 && n.GetInt("channels_last", 0) == 0 ? cx.Preferred(n.inputs[0]) : 0;
  if (block == 0) return cx.EmitPlain(n, k.inputs(), fn);
  std::vector<int> tensors;
  for (size_t i : k.inputs()) {
    TUNEFARM_ASSIGN_OR_RETURN(int t, cx.Get(n.inputs[i], i == 0 ? block : 0));
    tensors.push_back(t);
  }
  cx.Define(n.outputs[0], cx.Emit(n.op_type, tensors, fn, cx.OutType(n), cx.V(n.outputs[0]).name), block);
  return Status::OK();
}

// --- QLinearAveragePool: (X, x_scale, x_zp, y_scale, y_zp), AveragePool's attributes --------------
Status InferQLinearAveragePool(InferContext& cx) {
  TUNEFARM_RETURN_IF_ERROR(CheckQuantizedInput(cx, 0, "X"));
  TUNEFARM_ASSIGN_OR_RETURN(DataType out, QuantizedOutputType(cx, 3));
  if (cx.node().GetInt("channels_last", 0) != 0) {
    return cx.Fail("channels_last 1 is not supported (the channels-first form QOperator models use is)");
  }
  const std::vector<int64_t>& x = cx.Shape(0);
  if (x.size() < 3) return cx.Fail("X must be N, C and at least one spatial axis, got " + ShapeStr(x));
  TUNEFARM_ASSIGN_OR_RETURN(std::vector<int64_t> spatial, InferWindow(cx, cx.node().GetInts("kernel_shape"), false,
                                                                      cx.node().GetInt("ceil_mode", 0) != 0));
  std::vector<int64_t> shape = {x[0], x[1]};
  shape.insert(shape.end(), spatial.begin(), spatial.end());
  cx.SetOut(0, out, shape);
  return Status::OK();
}

Status LowerQLinearAveragePool(LowerApi& cx, const Node& n) {
  std::vector<int64_t> axes;
  for (size_t d = 2; d < cx.V(n.inputs[0]).shape.size(); ++d) axes.push_back(int64_t(d));
  const compute::PoolParams window = PoolWindow(n, axes, /*is_max=*/false);
  const std::vector<int64_t> shape = cx.V(n.outputs[0]).shape;
  const KernelInputs k(n);
  const ir::Type out = ToIRType(cx.OutType(n));
  return cx.EmitPlain(n, k.inputs(), [=](const std::vector<ir::Tensor>& t) {
    return QuantizedOutput(k, t, 3, compute::Pool(DequantizedInput(k, t, 0), window, shape), out);
  });
}

// --- QLinearSoftmax: (X, X_scale, x_zp, y_scale, y_zp), axis, opset --------------------------------
// `opset` names the Softmax semantics: before 13 over the flattened axes from `axis` on, from 13 over
// `axis` alone.
Status InferQLinearSoftmax(InferContext& cx) {
  TUNEFARM_RETURN_IF_ERROR(CheckQuantizedInput(cx, 0, "X"));
  TUNEFARM_ASSIGN_OR_RETURN(DataType out, QuantizedOutputType(cx, 3));
  TUNEFARM_RETURN_IF_ERROR(cx.Axis(cx.node().GetInt("axis", -1), cx.Shape(0).size()).status());
  cx.SetOut(0, out, cx.Shape(0));
  return Status::OK();
}

Status LowerQLinearSoftmax(LowerApi& cx, const Node& n) {
  const int64_t rank = int64_t(cx.V(n.inputs[0]).shape.size());
  int64_t axis = n.GetInt("axis", -1);
  if (axis < 0) axis += rank;
  const int64_t last = n.GetInt("opset", 13) < 13 ? rank - 1 : axis;
  const KernelInputs k(n);
  const ir::Type out = ToIRType(cx.OutType(n));
  return cx.EmitPlain(n, k.inputs(), [=](const std::vector<ir::Tensor>& t) {
    return QuantizedOutput(k, t, 3, compute::Softmax(DequantizedInput(k, t, 0), axis, last), out);
  });
}

// --- QLinearConcat: (Y_scale, Y_zp, then X, X_scale, X_zp per input), axis ----------------------
Status InferQLinearConcat(InferContext& cx) {
  TUNEFARM_ASSIGN_OR_RETURN(DataType out, QuantizedOutputType(cx, 0));
  if (cx.num_inputs() < 5 || (cx.num_inputs() - 2) % 3 != 0) {
    return cx.Fail("takes Y_scale, Y_zero_point and then (X, X_scale, X_zero_point) per input, got " +
                   std::to_string(cx.num_inputs()) + " inputs");
  }
  if (!cx.HasInput(2)) return cx.Fail("the first input is missing");
  const std::vector<int64_t>& first = cx.Shape(2);
  TUNEFARM_ASSIGN_OR_RETURN(int64_t axis, cx.Axis(cx.node().GetInt("axis", 0), first.size()));
  std::vector<int64_t> shape = first;
  shape[size_t(axis)] = 0;
  for (size_t x = 2; x < cx.num_inputs(); x += 3) {
    TUNEFARM_RETURN_IF_ERROR(CheckQuantizedInput(cx, x, "an input"));
    const std::vector<int64_t>& s = cx.Shape(x);
    for (size_t d = 0; d < first.size(); ++d) {
      if (s.size() != first.size() || (int64_t(d) != axis && s[d] != first[d])) {
        return cx.Fail("input " + ShapeStr(s) + " does not match " + ShapeStr(first) + " outside axis " +
                       std::to_string(axis));
      }
    }
    shape[size_t(axis)] += s[size_t(axis)];
  }
  cx.SetOut(0, out, shape);
  return Status::OK();
}

Status LowerQLinearConcat(LowerApi& cx, const Node& n) {
  const int64_t rank = int64_t(cx.V(n.inputs[2]).shape.size());
  int64_t axis = n.GetInt("axis", 0);
  if (axis < 0) axis += rank;
  const KernelInputs k(n);
  const size_t count = n.inputs.size();
  const ir::Type out = ToIRType(cx.OutType(n));
  return cx.EmitPlain(n, k.inputs(), [=](const std::vector<ir::Tensor>& t) {
    std::vector<ir::Tensor> parts;
    for (size_t x = 2; x < count; x += 3) parts.push_back(DequantizedInput(k, t, x));
    return QuantizedOutput(k, t, 0, compute::Concat(parts, axis), out);
  });
}

// --- the products ----------------------------------------------------------------------------
// float(acc) * a_scale * b_scale[column] (+ bias[column]) over the int32 accumulator of a product;
// b_scale (and bias) per tensor or per column (the accumulator's last axis).
ir::Tensor ScaleProduct(const ir::Tensor& acc, const ir::Tensor& a_scale, const ir::Tensor& b_scale,
                        const ir::Tensor& bias) {
  const int64_t last = int64_t(acc->shape.size()) - 1;
  return te::Compute(acc->name + ".to_float", acc->shape, [&](const std::vector<ir::Expr>& idx) {
    ir::Expr v = ir::cast(ir::Type::Float(32), te::Read(acc, idx)) *
                 (compute::ReadQuantParameter(a_scale, idx, -1) * compute::ReadQuantParameter(b_scale, idx, last));
    if (bias) v = v + compute::ReadQuantParameter(bias, idx, last);
    return v;
  });
}

int64_t ColumnsOf(const NodeView& v, size_t b, bool transposed = false) {
  const std::vector<int64_t>& s = v.Shape(b);
  if (s.size() < 2) return 0;
  return transposed ? s[s.size() - 2] : s.back();
}

// The two products scaled to float: where their inputs are. DynamicQuantizeMatMul's A is float32,
// quantized in the kernel (no a_scale or a_zero_point input).
constexpr size_t kNoInput = 99;
struct ScaledProduct {
  size_t a, b, a_scale, b_scale, a_zero, b_zero, bias;
  bool a_is_float;
};
// MatMulIntegerToFloat: (A, B, a_scale, b_scale, a_zero_point, b_zero_point, bias).
constexpr ScaledProduct kMatMulIntegerToFloat = {0, 1, 2, 3, 4, 5, 6, false};
// DynamicQuantizeMatMul: (A float, B, b_scale, b_zero_point, bias).
constexpr ScaledProduct kDynamicQuantizeMatMul = {0, 1, kNoInput, 2, kNoInput, 3, 4, true};

const ScaledProduct& ScaledProductOf(const Node& n) {
  return n.op_type == "com.microsoft.DynamicQuantizeMatMul" ? kDynamicQuantizeMatMul : kMatMulIntegerToFloat;
}

Status InferScaledProduct(InferContext& cx) {
  const ScaledProduct& p = ScaledProductOf(cx.node());
  if (p.a_is_float ? cx.In(p.a).dtype != DataType::kFloat32 : !Is8Bit(cx.In(p.a).dtype)) {
    return cx.Fail(std::string("A must be ") + (p.a_is_float ? "float32" : "uint8 or int8") + ", got " +
                   graph::DataTypeName(cx.In(p.a).dtype));
  }
  if (!Is8Bit(cx.In(p.b).dtype)) {
    return cx.Fail(std::string("B must be uint8 or int8, got ") + graph::DataTypeName(cx.In(p.b).dtype));
  }
  TUNEFARM_ASSIGN_OR_RETURN(std::vector<int64_t> out, InferMatMulShape(cx, p.a, p.b));
  const int64_t columns = ColumnsOf(cx, p.b);
  if ((!p.a_is_float && !cx.HasInput(p.a_scale)) || !cx.HasInput(p.b_scale)) return cx.Fail("a scale is missing");
  if (!p.a_is_float) {
    TUNEFARM_RETURN_IF_ERROR(CheckParameter(cx, p.a_scale, "a_scale", DataType::kFloat32));
    TUNEFARM_RETURN_IF_ERROR(CheckParameter(cx, p.a_zero, "a_zero_point", cx.In(p.a).dtype));
  }
  TUNEFARM_RETURN_IF_ERROR(CheckParameter(cx, p.b_scale, "b_scale", DataType::kFloat32, columns));
  TUNEFARM_RETURN_IF_ERROR(CheckParameter(cx, p.b_zero, "b_zero_point", cx.In(p.b).dtype, columns));
  TUNEFARM_RETURN_IF_ERROR(CheckParameter(cx, p.bias, "bias", DataType::kFloat32, columns));
  cx.SetOut(0, DataType::kFloat32, out);
  return Status::OK();
}

Status LowerScaledProduct(LowerApi& cx, const Node& n) {
  const ScaledProduct p = ScaledProductOf(n);
  const int64_t b_last = int64_t(cx.V(n.inputs[p.b]).shape.size()) - 1;
  const KernelInputs k(n);
  return cx.EmitPlain(n, k.inputs(), [=](const std::vector<ir::Tensor>& t) {
    ir::Tensor a, a_scale;
    if (p.a_is_float) {  // quantized as DynamicQuantizeLinear does
      const compute::DynamicParameters q = compute::DynamicQuantizationParameters(k.Of(t, p.a));
      a = compute::SubtractZeroPoint(compute::QuantizeDynamically(k.Of(t, p.a), q.scale, q.zero_point), q.zero_point,
                                     -1);
      a_scale = q.scale;
    } else {
      a = compute::SubtractZeroPoint(k.Of(t, p.a), k.Of(t, p.a_zero), -1);
      a_scale = k.Of(t, p.a_scale);
    }
    const ir::Tensor b = compute::SubtractZeroPoint(k.Of(t, p.b), k.Of(t, p.b_zero), b_last);
    return ScaleProduct(compute::MatMul(a, b), a_scale, k.Of(t, p.b_scale), k.Of(t, p.bias));
  });
}

// QGemm: (A, a_scale, a_zp, B, b_scale, b_zp, C, y_scale, y_zp), alpha, transA, transB.
Status InferQGemm(InferContext& cx) {
  TUNEFARM_RETURN_IF_ERROR(CheckQuantizedInput(cx, 0, "A"));
  if (!cx.HasInput(3) || !cx.HasInput(4)) return cx.Fail("B or its scale is missing");
  TUNEFARM_RETURN_IF_ERROR(cx.NeedRank(0, 2, "QGemm"));
  TUNEFARM_RETURN_IF_ERROR(cx.NeedRank(3, 2, "QGemm B"));
  const bool ta = cx.node().GetInt("transA", 0) != 0, tb = cx.node().GetInt("transB", 0) != 0;
  const int64_t columns = ColumnsOf(cx, 3, tb);
  if (!Is8Bit(cx.In(3).dtype))
    return cx.Fail(std::string("B must be uint8 or int8, got ") + graph::DataTypeName(cx.In(3).dtype));
  TUNEFARM_RETURN_IF_ERROR(CheckParameter(cx, 4, "b_scale", DataType::kFloat32, columns));
  TUNEFARM_RETURN_IF_ERROR(CheckParameter(cx, 5, "b_zero_point", cx.In(3).dtype, columns));
  std::vector<int64_t> a = cx.Shape(0), b = cx.Shape(3);
  if (ta) std::swap(a[0], a[1]);
  if (tb) std::swap(b[0], b[1]);
  if (a[1] != b[0]) return cx.Fail("inner dimensions differ: " + ShapeStr(a) + " x " + ShapeStr(b));
  const std::vector<int64_t> mn = {a[0], b[1]};
  if (cx.HasInput(6)) {
    if (cx.In(6).dtype != DataType::kInt32) return cx.Fail("C must be int32 (a bias with scale a_scale * b_scale)");
    auto s = cx.Shape(6).size() <= 2 ? BroadcastShapes(cx.Shape(6), mn)
                                     : Result<std::vector<int64_t>>(Status::InvalidArgument(""));
    if (!s.ok() || *s != mn) return cx.Fail("C " + ShapeStr(cx.Shape(6)) + " does not broadcast to " + ShapeStr(mn));
  }
  DataType out = DataType::kFloat32;
  if (cx.HasInput(7)) {
    TUNEFARM_ASSIGN_OR_RETURN(out, QuantizedOutputType(cx, 7));
  }
  cx.SetOut(0, out, mn);
  return Status::OK();
}

Status LowerQGemm(LowerApi& cx, const Node& n) {
  const std::vector<compiler::Workload> implementations = TunableImplementations(cx, n);
  if (!implementations.empty()) return LowerInt8Task(cx, n, implementations);
  const bool ta = n.GetInt("transA", 0) != 0, tb = n.GetInt("transB", 0) != 0;
  const float alpha = n.GetFloat("alpha", 1.0f);
  const bool quantized = n.inputs.size() > 7 && n.inputs[7] >= 0;
  const KernelInputs k(n);
  const ir::Type out = ToIRType(cx.OutType(n));
  const ir::Type product = quantized ? ProductType(cx, n, 8) : out;  // the sum's type is out's
  return cx.EmitPlain(n, k.inputs(), [=](const std::vector<ir::Tensor>& t) {
    const ir::Tensor a = compute::SubtractZeroPoint(k.Of(t, 0), k.Of(t, 2), -1);
    // B's per-column parameters run along its axis 1, or 0 when it is transposed.
    const ir::Tensor b = compute::SubtractZeroPoint(k.Of(t, 3), k.Of(t, 5), tb ? 0 : 1);
    ir::Tensor acc = compute::Gemm(a, b, ir::Tensor(), ta, tb, 1.0f, 0.0f);
    if (const ir::Tensor c = k.Of(t, 6)) acc = compute::Binary(acc, c, compute::BinaryKind::kAdd);
    const ir::Tensor scale = k.Of(t, 4), a_scale = k.Of(t, 1), y_scale = k.Of(t, 7), y_zero = k.Of(t, 8);
    const ir::Tensor scaled = te::Compute(acc->name + ".scaled", acc->shape, [&](const std::vector<ir::Expr>& idx) {
      ir::Expr multiplier = compute::ReadQuantParameter(a_scale, idx, -1) * compute::ReadQuantParameter(scale, idx, 1);
      if (alpha != 1.0f) multiplier = multiplier * ir::Expr(alpha);
      const ir::Expr v = ir::cast(ir::Type::Float(32), te::Read(acc, idx));
      if (!quantized) return v * multiplier;
      multiplier = multiplier / compute::ReadQuantParameter(y_scale, idx, -1);
      return compute::RoundAndSaturate(v * multiplier,
                                       y_zero ? compute::ReadQuantParameter(y_zero, idx, -1) : ir::Expr(), product);
    });
    return quantized ? ClampToFusedActivation(AddFusedResidual(scaled, n, t, 7, out), n) : scaled;
  });
}

}  // namespace

std::vector<OperatorDef> MicrosoftOperators() {
  const char* family = kMicrosoftDomain;
  return {
      {"com.microsoft.QLinearAdd",
       family,
       {},
       InferQLinearBinary,
       nullptr,
       LowerQLinearBinary,
       "uint8/int8, per-tensor scales and zero points, numpy broadcasting",
       false,
       2},
      {"com.microsoft.QLinearMul",
       family,
       {},
       InferQLinearBinary,
       nullptr,
       LowerQLinearBinary,
       "uint8/int8, per-tensor scales and zero points, numpy broadcasting",
       false,
       2},
      {"com.microsoft.QLinearSigmoid",
       family,
       {},
       InferQLinearUnary,
       nullptr,
       LowerQLinearUnary,
       "uint8/int8, per tensor",
       false,
       2},
      {"com.microsoft.QLinearLeakyRelu",
       family,
       {{"alpha", kFloat}},
       InferQLinearUnary,
       nullptr,
       LowerQLinearUnary,
       "uint8/int8, per tensor",
       false,
       2},
      {"com.microsoft.QLinearGlobalAveragePool",
       family,
       {{"channels_last", kInt}},
       InferQLinearGlobalAveragePool,
       nullptr,
       LowerQLinearGlobalAveragePool,
       "uint8/int8, per tensor; channels first or last",
       false,
       2},
      {"com.microsoft.QLinearAveragePool",
       family,
       {{"auto_pad", kString},
        {"ceil_mode", kInt},
        {"channels_last", kInt},
        {"count_include_pad", kInt},
        {"kernel_shape", kInts, true},
        {"pads", kInts},
        {"strides", kInts}},
       InferQLinearAveragePool,
       nullptr,
       LowerQLinearAveragePool,
       "uint8/int8, per tensor; channels first",
       false,
       2},
      {"com.microsoft.QLinearSoftmax",
       family,
       {{"axis", kInt}, {"opset", kInt, true}},
       InferQLinearSoftmax,
       nullptr,
       LowerQLinearSoftmax,
       "uint8/int8, per tensor; the Softmax of opset `opset` (flattened before 13)",
       false,
       2},
      {"com.microsoft.QLinearConcat",
       family,
       {{"axis", kInt, true}},
       InferQLinearConcat,
       nullptr,
       LowerQLinearConcat,
       "uint8/int8, per tensor; each input requantized to the output's scale",
       false,
       1},
      {"com.microsoft.QGemm",
       family,
       {{"alpha", kFloat}, {"transA", kInt}, {"transB", kInt}},
       InferQGemm,
       nullptr,
       LowerQGemm,
       "uint8/int8; B per tensor or per column; int32 C; float output without y_scale",
       false,
       2},
      {"com.microsoft.MatMulIntegerToFloat",
       family,
       {},
       InferScaledProduct,
       nullptr,
       LowerScaledProduct,
       "uint8/int8; B's scale, zero point and bias per tensor or per column",
       false,
       4},
      {"com.microsoft.DynamicQuantizeMatMul",
       family,
       {},
       InferScaledProduct,
       nullptr,
       LowerScaledProduct,
       "A quantized to uint8 as DynamicQuantizeLinear does; B per tensor or per column",
       false,
       3},
  };
}

}  // namespace tunefarm::operators
