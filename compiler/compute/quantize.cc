// The integer side of ONNX's quantized operators: zero points subtracted into int32, and the
// requantization of an int32 accumulator back to 8 bits, and DynamicQuantizeLinear's parameters.
// QuantizeLinear, DequantizeLinear and DynamicQuantizeLinear (compiler/operators/quantize_ops.cc), the
// integer convolutions and products (integer_ops.cc) and ONNX Runtime's com.microsoft operators
// (microsoft_ops.cc) are written with these.
#include <vector>

#include "compiler/compute/ops.h"
#include "compiler/ir/ir_operators.h"

namespace tunefarm::compute {

Expr ZeroOf(const ir::Type& t) { return t.is_float() ? Expr(0.0f) : ir::cast(t, Expr(int64_t(0))); }

Expr ReadQuantParameter(const Tensor& parameter, const std::vector<Expr>& idx, int64_t axis) {
  // A per-tensor parameter may be a scalar, [1] or [1, 1]: its only element (also when the other
  // parameter of the pair, scale or zero point, runs along an axis).
  std::vector<Expr> at(parameter->shape.size(), Expr(int64_t(0)));
  int64_t elements = 1;
  for (int64_t d : parameter->shape) elements *= d;
  if (axis >= 0 && elements > 1) at.back() = idx[size_t(axis)];
  return te::Read(parameter, at);
}

Expr RoundAndSaturate(const Expr& v, const Expr& zero_point, ir::Type out) {
  const bool is_unsigned = out.code == ir::Type::kUInt;
  const float lo = is_unsigned ? 0.0f : -float(int64_t(1) << (out.bits - 1));
  const float hi = is_unsigned ? float((int64_t(1) << out.bits) - 1) : float((int64_t(1) << (out.bits - 1)) - 1);
  Expr q = ApplyUnary(v, {UnaryKind::kRound});  // half to even, as ONNX and ONNX Runtime round
  if (zero_point.defined()) q = q + ir::cast(ir::Type::Float(32), zero_point);
  // Saturate in float, then convert: the value is integral and in range, so the conversion is exact.
  return ir::cast(out, ir::min(ir::max(q, Expr(lo)), Expr(hi)));
}

Tensor Dequantize(const Tensor& x, const Tensor& scale, const Tensor& zero_point, int64_t axis) {
  return te::Compute(x->name + ".dequantize", x->shape, [&](const std::vector<Expr>& idx) {
    // x - zero point in int64 (an int32 x minus its zero point does not overflow), then scaled.
    Expr v = ir::cast(ir::Type::Int(64), te::Read(x, idx));
    if (zero_point) v = v - ir::cast(ir::Type::Int(64), ReadQuantParameter(zero_point, idx, axis));
    return ir::cast(ir::Type::Float(32), v) * ReadQuantParameter(scale, idx, axis);
  });
}

Tensor Quantize(const Tensor& x, const Tensor& scale, const Tensor& zero_point, int64_t axis, ir::Type out) {
  return te::Compute(x->name + ".quantize", x->shape, [&](const std::vector<Expr>& idx) {
    return RoundAndSaturate(te::Read(x, idx) / ReadQuantParameter(scale, idx, axis),
                            zero_point ? ReadQuantParameter(zero_point, idx, axis) : Expr(), out);
  });
}

namespace {

// min(0, min x) or max(0, max x) over the whole tensor, as a scalar.
Tensor RangeEnd(const Tensor& x, bool is_max) {
  std::vector<int64_t> all(x->shape.size());
  for (size_t d = 0; d < all.size(); ++d) all[d] = int64_t(d);
  const Tensor r = Reduce(x, all, false, is_max ? ReduceOp::kMax : ReduceOp::kMin);
  return te::Compute(x->name + (is_max ? ".range_max" : ".range_min"), {}, [&](const std::vector<Expr>&) {
    const Expr v = te::Read(r, {});
    return is_max ? ir::max(v, Expr(0.0f)) : ir::min(v, Expr(0.0f));
  });
}

// The scale to divide by: 1 in place of 0 (x is then all zeros, and so is every quotient).
Expr DivisorOf(const Expr& scale) { return ir::select(scale == Expr(0.0f), Expr(1.0f), scale); }

}  // namespace

DynamicParameters DynamicQuantizationParameters(const Tensor& x) {
  const ir::Type u8{ir::Type::kUInt, 8, 1};
  const Tensor lo = RangeEnd(x, false), hi = RangeEnd(x, true);
  const Tensor scale = te::Compute(x->name + ".scale", {}, [&](const std::vector<Expr>&) {
    return (te::Read(hi, {}) - te::Read(lo, {})) / Expr(255.0f);
  });
  const Tensor zero_point = te::Compute(x->name + ".zero_point", {}, [&](const std::vector<Expr>&) {
    return RoundAndSaturate(Expr(0.0f) - te::Read(lo, {}) / DivisorOf(te::Read(scale, {})), Expr(), u8);
  });
  return {scale, zero_point};
}

Tensor QuantizeDynamically(const Tensor& x, const Tensor& scale, const Tensor& zero_point) {
  const ir::Type u8{ir::Type::kUInt, 8, 1};
  return te::Compute(x->name + ".quantize", x->shape, [&](const std::vector<Expr>& idx) {
    return RoundAndSaturate(te::Read(x, idx) / DivisorOf(te::Read(scale, {})), te::Read(zero_point, {}), u8);
  });
}

Tensor SubtractZeroPoint(const Tensor& x, const Tensor& zero_point, int64_t axis) {
  const ir::Type i32 = ir::Type::Int(32);
  return te::Compute(x->name + ".centered", x->shape, [&](const std::vector<Expr>& idx) {
    Expr v = ir::cast(i32, te::Read(x, idx));
    if (zero_point) v = v - ir::cast(i32, ReadQuantParameter(zero_point, idx, axis));
    return v;
  });
}

Tensor Requantize(const Tensor& acc, const Requantization& r) {
  return te::Compute(acc->name + ".requantize", acc->shape, [&](const std::vector<Expr>& idx) {
    // The multiplier as ONNX Runtime forms it: a_scale * b_scale / y_scale in float32, once per
    // output channel; then the accumulator converted to float and scaled.
    const Expr multiplier = ReadQuantParameter(r.a_scale, idx, r.a_axis) *
                            ReadQuantParameter(r.b_scale, idx, r.b_axis) / ReadQuantParameter(r.y_scale, idx, -1);
    const Expr scaled = ir::cast(ir::Type::Float(32), te::Read(acc, idx)) * multiplier;
    return RoundAndSaturate(scaled, r.y_zero_point ? ReadQuantParameter(r.y_zero_point, idx, -1) : Expr(), r.out);
  });
}

}  // namespace tunefarm::compute
