// Element-wise operators: activations, broadcasting arithmetic, inference batch normalization.
#include <algorithm>
#include <cmath>
#include <limits>

#include "compiler/compute/ops.h"
#include "compiler/ir/ir_operators.h"
#include "tunefarm/runtime/check.h"

namespace tunefarm::compute {
namespace {

Expr F(float v) { return Expr(v); }

Expr Intrinsic(const char* name, const Expr& x) { return ir::Call::Make(x.type(), name, {x}); }

// erf by Abramowitz & Stegun 7.1.26 (|error| <= 1.5e-7): exp is the only transcendental, so
// it vectorizes like the other activations.
Expr Erf(const Expr& x) {
  Expr a = Intrinsic("fabs", x);
  Expr t = F(1.0f) / (F(1.0f) + F(0.3275911f) * a);
  Expr poly = t * (F(0.254829592f) +
                   t * (F(-0.284496736f) + t * (F(1.421413741f) + t * (F(-1.453152027f) + t * F(1.061405429f)))));
  Expr y = F(1.0f) - poly * Intrinsic("exp", F(0.0f) - a * a);
  return ir::select(x < F(0.0f), F(0.0f) - y, y);
}

Expr Tanh(const Expr& x) { return ir::Call::Make(x.type(), "tanh", {x}); }

Expr IsTrue(const Expr& x) { return x.type().is_float() ? x != F(0.0f) : x != ir::cast(x.type(), Expr(int64_t(0))); }
Expr AsBool(const Expr& c) {
  return ir::select(c, ir::cast(ir::Type{ir::Type::kUInt, 8, 1}, Expr(int64_t(1))),
                    ir::cast(ir::Type{ir::Type::kUInt, 8, 1}, Expr(int64_t(0))));
}

// log(1 + e^x) without overflow: max(x, 0) + log(1 + e^-|x|).
Expr Softplus(const Expr& x) {
  return ir::max(x, F(0.0f)) + Intrinsic("log", F(1.0f) + Intrinsic("exp", F(0.0f) - Intrinsic("fabs", x)));
}

Expr Sigmoid(const Expr& x) { return F(1.0f) / (F(1.0f) + ir::Call::Make(x.type(), "exp", {F(0.0f) - x})); }

// Index of an operand of shape `in` read at output indices `out_idx` under numpy broadcasting.
std::vector<Expr> BroadcastIndex(const std::vector<int64_t>& in, const std::vector<Expr>& out_idx) {
  std::vector<Expr> idx;
  size_t offset = out_idx.size() - in.size();
  for (size_t d = 0; d < in.size(); ++d) idx.push_back(in[d] == 1 ? Expr(0) : out_idx[offset + d]);
  return idx;
}

// The magnitude bits of a float32 (its bits with the sign cleared) as int64, and whether the sign
// is set: NaN and infinity read from the bits, which no simplification of x != x can touch.
Expr MagnitudeBits(const Expr& x) {
  Expr bits = ir::reinterpret(ir::Type::Int(32).with_lanes(x.type().lanes), x);
  Expr wide = ir::cast(ir::Type::Int(64).with_lanes(x.type().lanes), bits);
  return ir::select(bits < ir::cast(bits.type(), Expr(int64_t(0))), wide + Expr(int64_t(2147483648LL)), wide);
}
Expr SignBit(const Expr& x) {
  Expr bits = ir::reinterpret(ir::Type::Int(32).with_lanes(x.type().lanes), x);
  return bits < ir::cast(bits.type(), Expr(int64_t(0)));
}
constexpr int64_t kInfBits = 0x7f800000;

// sinh by its Taylor series below |x| = 0.5 (e^x - e^-x cancels there), else (e^x - e^-x) / 2.
Expr Sinh(const Expr& x) {
  Expr x2 = x * x;
  Expr series =
      x * (F(1.0f) + x2 * (F(1.0f / 6) + x2 * (F(1.0f / 120) + x2 * (F(1.0f / 5040) + x2 * F(1.0f / 362880)))));
  Expr big = F(0.5f) * (Intrinsic("exp", x) - Intrinsic("exp", F(0.0f) - x));
  return ir::select(Intrinsic("fabs", x) < F(0.5f), series, big);
}

// sin and cos from arithmetic alone (floor, multiply-add), so that every target computes them
// alike and the GPU needs no math library: x reduced by pi/2 in three parts (Cody-Waite: exact
// while |x| < 2^15), then the quadrant's polynomial on [-pi/4, pi/4] (Cephes' sinf/cosf
// coefficients; within 2 ulp of float64 there). cos(x) is sin of the next quadrant.
Expr SinQuadrant(const Expr& x, int shift) {
  Expr j = Intrinsic("floor", x * F(0.636619772367581343f) + F(0.5f));
  Expr y = ((x - j * F(1.5703125f)) - j * F(4.837512969970703125e-4f)) - j * F(7.54978995489188216e-8f);
  Expr z = y * y;
  Expr s = y + y * z * (F(-1.6666654611e-1f) + z * (F(8.3321608736e-3f) + z * F(-1.9515295891e-4f)));
  Expr c = F(1.0f) - F(0.5f) * z +
           z * z * (F(4.166664568298827e-2f) + z * (F(-1.388731625493765e-3f) + z * F(2.443315711809948e-5f)));
  Expr q = j + F(float(shift));
  q = q - F(4.0f) * Intrinsic("floor", q * F(0.25f));  // the quadrant, 0..3
  return ir::select(q < F(0.5f), s, ir::select(q < F(1.5f), c, ir::select(q < F(2.5f), F(0.0f) - s, F(0.0f) - c)));
}

// atan: |x| reduced to [0, tan(pi/8)] through atan(x) = pi/2 - atan(1/x) and pi/4 + atan((x-1)/(x+1)),
// then Cephes' atanf polynomial.
Expr Atan(const Expr& x) {
  Expr a = Intrinsic("fabs", x);
  Expr big = a > F(2.414213562373095f), mid = a > F(0.4142135623730950f);
  Expr r = ir::select(big, F(-1.0f) / a, ir::select(mid, (a - F(1.0f)) / (a + F(1.0f)), a));
  Expr base = ir::select(big, F(1.5707963267948966f), ir::select(mid, F(0.7853981633974483f), F(0.0f)));
  Expr z = r * r;
  Expr p = (((F(8.05374449538e-2f) * z - F(1.38776856032e-1f)) * z + F(1.99777106478e-1f)) * z - F(3.33329491539e-1f)) *
               z * r +
           r;
  Expr m = base + p;
  return ir::select(x < F(0.0f), F(0.0f) - m, m);
}

// asin(x) = atan(x / sqrt(1 - x^2)): +-1 give +-inf, and atan(+-inf) = +-pi/2.
Expr Asin(const Expr& x) { return Atan(x / Intrinsic("sqrt", F(1.0f) - x * x)); }

}  // namespace

Expr ApplyUnary(const Expr& x, const UnaryParams& p) {
  switch (p.kind) {
    case UnaryKind::kIdentity:
      return x;
    case UnaryKind::kRelu:
      return ir::max(x, F(0.0f));
    case UnaryKind::kLeakyRelu:
      return ir::select(x < F(0.0f), x * F(p.alpha), x);
    case UnaryKind::kSigmoid:
      return Sigmoid(x);
    case UnaryKind::kHardSigmoid:
      return ir::min(ir::max(x * F(p.alpha) + F(p.beta), F(0.0f)), F(1.0f));
    case UnaryKind::kHardSwish:
      return x * ir::min(ir::max(x * F(1.0f / 6.0f) + F(0.5f), F(0.0f)), F(1.0f));
    case UnaryKind::kTanh:
      return Tanh(x);
    case UnaryKind::kExp:
      return Intrinsic("exp", x);
    case UnaryKind::kLog:
      return Intrinsic("log", x);
    case UnaryKind::kSqrt:
      return Intrinsic("sqrt", x);
    case UnaryKind::kReciprocal:
      return F(1.0f) / x;
    case UnaryKind::kNeg:
      return x.type().is_float() ? F(0.0f) - x : ir::cast(x.type(), Expr(int64_t(0))) - x;
    case UnaryKind::kAbs:
      return x.type().is_float() ? Intrinsic("fabs", x) : ir::max(x, ir::cast(x.type(), Expr(int64_t(0))) - x);
    case UnaryKind::kFloor:
      return Intrinsic("floor", x);
    case UnaryKind::kErf:
      return Erf(x);
    case UnaryKind::kGelu:
      return F(0.5f) * x * (F(1.0f) + Erf(x * F(0.70710678118654752f)));
    case UnaryKind::kGeluTanh:
      return F(0.5f) * x * (F(1.0f) + Tanh(F(0.79788456080286536f) * (x + F(0.044715f) * x * x * x)));
    case UnaryKind::kNot:
      return AsBool(!IsTrue(x));
    case UnaryKind::kCeil:
      return F(0.0f) - Intrinsic("floor", F(0.0f) - x);
    case UnaryKind::kRound:
      // Half to even (ONNX Round, C's nearbyint): llvm.roundeven, one instruction on every target
      // (vrndscaleps/roundps $8, frintn, vrintn, cvt.rni). The floor-based form it replaced took
      // ten, and ran int8 ResNet-50's requantizing epilogues at half speed.
      return Intrinsic("roundeven", x);
    case UnaryKind::kSign:
      return ir::select(x > F(0.0f), F(1.0f), ir::select(x < F(0.0f), F(-1.0f), x));  // 0 and NaN stay
    case UnaryKind::kSoftplus:
      return Softplus(x);
    case UnaryKind::kSoftsign:
      return x / (F(1.0f) + Intrinsic("fabs", x));
    case UnaryKind::kElu:
      return ir::select(x < F(0.0f), F(p.alpha) * (Intrinsic("exp", x) - F(1.0f)), x);
    case UnaryKind::kSelu:
      return F(p.beta) * ir::select(x <= F(0.0f), F(p.alpha) * Intrinsic("exp", x) - F(p.alpha), x);
    case UnaryKind::kCelu:
      return ir::max(x, F(0.0f)) + ir::min(F(0.0f), F(p.alpha) * (Intrinsic("exp", x / F(p.alpha)) - F(1.0f)));
    case UnaryKind::kThresholdedRelu:
      return ir::select(x > F(p.alpha), x, F(0.0f));
    case UnaryKind::kMish:
      return x * Tanh(Softplus(x));
    case UnaryKind::kSinh:
      return Sinh(x);
    case UnaryKind::kCosh:
      return F(0.5f) * (Intrinsic("exp", x) + Intrinsic("exp", F(0.0f) - x));
    case UnaryKind::kAsinh: {
      // sign(x) log(|x| + sqrt(x^2 + 1)); below 1/4 its Taylor series (the log's argument is
      // 1 + ~|x| there, and the rounding of that sum would cost ~100 ulp near 0); past 1e18,
      // where x^2 + 1 overflows, log(2|x|).
      Expr a = Intrinsic("fabs", x);
      Expr z = a * a;
      Expr series =
          a * (F(1.0f) + z * (F(-1.0f / 6) +
                              z * (F(3.0f / 40) +
                                   z * (F(-15.0f / 336) + z * (F(105.0f / 3456) +
                                                               z * (F(-945.0f / 42240) + z * F(10395.0f / 599040)))))));
      Expr m = ir::select(a < F(0.25f), series,
                          ir::select(a > F(1.0e18f), Intrinsic("log", a) + F(0.693147180559945f),
                                     Intrinsic("log", a + Intrinsic("sqrt", z + F(1.0f)))));
      return ir::select(x < F(0.0f), F(0.0f) - m, m);
    }
    case UnaryKind::kAcosh:
      return ir::select(x > F(1.0e18f), Intrinsic("log", x) + F(0.693147180559945f),
                        Intrinsic("log", x + Intrinsic("sqrt", x * x - F(1.0f))));
    case UnaryKind::kAtanh:
      return F(0.5f) * Intrinsic("log", (F(1.0f) + x) / (F(1.0f) - x));
    case UnaryKind::kSin:
      return SinQuadrant(x, 0);
    case UnaryKind::kCos:
      return SinQuadrant(x, 1);
    case UnaryKind::kTan:
      return SinQuadrant(x, 0) / SinQuadrant(x, 1);
    case UnaryKind::kAsin:
      return Asin(x);
    case UnaryKind::kAcos:
      return F(1.5707963267948966f) - Asin(x);
    case UnaryKind::kAtan:
      return Atan(x);
    case UnaryKind::kIsNaN:
      return AsBool(MagnitudeBits(x) > Expr(kInfBits));
    case UnaryKind::kIsInf: {
      Expr inf = MagnitudeBits(x) == Expr(kInfBits);
      Expr negative = SignBit(x);
      const bool minus = p.alpha != 0.0f, plus = p.beta != 0.0f;
      if (minus && plus) return AsBool(inf);
      if (minus || plus) return AsBool(inf && (minus ? negative : !negative));
      return AsBool(MagnitudeBits(x) < Expr(int64_t(0)));  // detects neither: false everywhere
    }
    case UnaryKind::kShrink:
      return ir::select(x < F(-p.alpha), x + F(p.beta), ir::select(x > F(p.alpha), x - F(p.beta), F(0.0f)));
    case UnaryKind::kPowScalar: {
      // Pow by a constant: small integral exponents multiply (exact, and defined for negative
      // bases), 0.5 is sqrt; anything else goes through exp/log.
      const float e = p.alpha;
      if (e == 0.5f) return Intrinsic("sqrt", x);
      if (e == std::floor(e) && std::fabs(e) <= 8) {
        Expr r = F(1.0f);
        for (int k = 0; k < int(std::fabs(e)); ++k) r = k == 0 ? x : r * x;
        return e < 0 ? F(1.0f) / r : r;
      }
      return ApplyBinary(x, F(e), BinaryKind::kPow);
    }
    case UnaryKind::kClip: {
      if (x.type().is_float()) return ir::min(ir::max(x, F(p.lo)), F(p.hi));
      // Integer tensors: the bounds clamped to the type's range, as integers of its type.
      const ir::Type t = x.type().element_of();
      const double lo_t = t.code == ir::Type::kUInt ? 0.0 : -std::ldexp(1.0, t.bits - 1);
      const double hi_t = std::ldexp(1.0, t.code == ir::Type::kUInt ? t.bits : t.bits - 1) - 1;
      auto bound = [&](float v) { return ir::IntImm::Make(t, int64_t(std::max(lo_t, std::min(hi_t, double(v))))); };
      return ir::min(ir::max(x, bound(p.lo)), bound(p.hi));
    }
  }
  return x;
}

Tensor Unary(const Tensor& x, const UnaryParams& p) {
  return te::Compute(x->name + ".act", x->shape,
                     [&](const std::vector<Expr>& i) { return ApplyUnary(te::Read(x, i), p); });
}

std::vector<int64_t> BroadcastShape(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  size_t rank = std::max(a.size(), b.size());
  std::vector<int64_t> out(rank, 1);
  for (size_t d = 0; d < rank; ++d) {
    int64_t da = d + a.size() >= rank ? a[d + a.size() - rank] : 1;
    int64_t db = d + b.size() >= rank ? b[d + b.size() - rank] : 1;
    TUNEFARM_CHECK(da == db || da == 1 || db == 1);
    out[d] = da == 1 ? db : da;
  }
  return out;
}

// Integer division traps (SIGFPE on x86) for a zero divisor and for INT_MIN / -1; ONNX leaves both
// undefined. The kernels divide by 1 in their place, so no lane ever traps, and give 0 for a zero
// divisor (the remainder too) and, for a signed x / -1, -x wrapped (INT_MIN / -1 is INT_MIN) with
// remainder 0.
Expr IsSignedMinusOne(const Expr& y) {
  if (y.type().code != ir::Type::kInt) return Expr(int64_t(0)) != Expr(int64_t(0));  // false
  return y == ir::cast(y.type(), Expr(int64_t(-1)));
}
Expr SafeDivisor(const Expr& y) {
  return ir::select(y == ZeroOf(y.type()) || IsSignedMinusOne(y), ir::cast(y.type(), Expr(int64_t(1))), y);
}
// ONNX's integer Div truncates toward zero; the IR's integer division floors.
Expr TruncatedDivide(const Expr& x, const Expr& y) {
  const Expr q = x / y, zero = ZeroOf(x.type());
  return ir::select(x % y != zero && ((x < zero) != (y < zero)), q + ir::cast(x.type(), Expr(int64_t(1))), q);
}

Expr ApplyBinary(Expr x, Expr y, BinaryKind kind) {
  const bool integer_division =
      !x.type().is_float() && (kind == BinaryKind::kDiv || kind == BinaryKind::kMod || kind == BinaryKind::kFmod);
  if (integer_division) {
    const Expr zero_divisor = y == ZeroOf(y.type()), minus_one = IsSignedMinusOne(y);
    y = SafeDivisor(y);  // the remainders below need no other guard: x % 1 is 0
    if (kind == BinaryKind::kDiv) {
      return ir::select(zero_divisor, ZeroOf(x.type()),
                        ir::select(minus_one, ZeroOf(x.type()) - x, TruncatedDivide(x, y)));
    }
  }
  switch (kind) {
    case BinaryKind::kAdd:
      return x + y;
    case BinaryKind::kSub:
      return x - y;
    case BinaryKind::kMul:
      return x * y;
    case BinaryKind::kDiv:
      return x / y;  // floats; integers divide through the guard above
    case BinaryKind::kPow: {
      if (!y.type().is_float()) y = ir::cast(x.type(), y);  // integer exponents of float bases
      // exp(y log|x|), negated for a negative base with an odd integral exponent; a negative base
      // with a fractional exponent has no real power (NaN, as in C's powf).
      Expr magnitude = Intrinsic("exp", y * Intrinsic("log", Intrinsic("fabs", x)));
      Expr integral = Intrinsic("floor", y) == y;
      Expr odd = Intrinsic("floor", y * F(0.5f)) * F(2.0f) != y;
      Expr negative = ir::select(integral, ir::select(odd, F(0.0f) - magnitude, magnitude), F(NAN));
      // x ** 0 is 1 for every x, 0 and NaN included (C's powf).
      return ir::select(y == F(0.0f), F(1.0f), ir::select(x < F(0.0f), negative, magnitude));
    }
    case BinaryKind::kMax:
      return ir::max(x, y);
    case BinaryKind::kMin:
      return ir::min(x, y);
    case BinaryKind::kEqual:
      return AsBool(x == y);
    case BinaryKind::kLess:
      return AsBool(x < y);
    case BinaryKind::kGreater:
      return AsBool(x > y);
    case BinaryKind::kGreaterOrEqual:
      return AsBool(x >= y);
    case BinaryKind::kLessOrEqual:
      return AsBool(x <= y);
    case BinaryKind::kPRelu: {
      const Expr zero = x.type().is_float() ? F(0.0f) : ir::cast(x.type(), Expr(int64_t(0)));
      return ir::select(x < zero, x * y, x);
    }
    case BinaryKind::kAnd:
      return AsBool(IsTrue(x) && IsTrue(y));
    case BinaryKind::kOr:
      return AsBool(IsTrue(x) || IsTrue(y));
    case BinaryKind::kXor: {
      Expr a = IsTrue(x), b = IsTrue(y);
      return AsBool((a && !b) || (!a && b));
    }
    case BinaryKind::kShiftLeft:
    case BinaryKind::kShiftRight: {
      // LLVM's shifts are poison from the width on: shift by at most width - 1, select 0 beyond.
      const Expr zero = ir::cast(x.type(), Expr(int64_t(0)));
      const Expr last = ir::cast(x.type(), Expr(int64_t(x.type().bits - 1)));
      const Expr shifted = ir::Call::Make(x.type(), kind == BinaryKind::kShiftLeft ? "shift_left" : "shift_right",
                                          {x, ir::min(y, last)});
      return ir::select(y > last, zero, shifted);
    }
    case BinaryKind::kMod:
      if (!x.type().is_float()) return x % y;  // the IR's integer modulo floors: the divisor's sign
      return x - y * Intrinsic("floor", x / y);
    case BinaryKind::kFmod: {
      if (!x.type().is_float()) {
        Expr m = x % y, zero = ir::cast(x.type(), Expr(int64_t(0)));
        return ir::select(m != zero && ((x < zero) != (y < zero)), m - y, m);
      }
      return x % y;  // the IR's float modulo is C's fmod (LLVM frem): exact, as the fold's std::fmod
    }
  }
  return x;
}

Tensor Binary(const Tensor& a, const Tensor& b, BinaryKind kind) {
  std::vector<int64_t> shape = BroadcastShape(a->shape, b->shape);
  return te::Compute(a->name + ".bin", shape, [&](const std::vector<Expr>& i) {
    return ApplyBinary(te::Read(a, BroadcastIndex(a->shape, i)), te::Read(b, BroadcastIndex(b->shape, i)), kind);
  });
}

Tensor Where(const Tensor& cond, const Tensor& x, const Tensor& y) {
  std::vector<int64_t> shape = BroadcastShape(BroadcastShape(cond->shape, x->shape), y->shape);
  return te::Compute(x->name + ".where", shape, [&](const std::vector<Expr>& i) {
    return ir::select(IsTrue(te::Read(cond, BroadcastIndex(cond->shape, i))), te::Read(x, BroadcastIndex(x->shape, i)),
                      te::Read(y, BroadcastIndex(y->shape, i)));
  });
}

Tensor Cast(const Tensor& x, ir::Type t, bool to_bool) {
  return te::Compute(x->name + ".cast", x->shape, [&](const std::vector<Expr>& i) {
    Expr v = te::Read(x, i);
    return to_bool ? AsBool(IsTrue(v)) : ir::cast(t, v);
  });
}

Tensor RoundToNarrowFloat(const Tensor& x, NarrowFloat to) {
  // Rounding to m mantissa bits is a rounding to a multiple of x's ulp in that type, 2^(e - m) for
  // x in [2^e, 2^(e + 1)): x / ulp and back are exact power-of-two scalings, and kRound rounds half
  // to even as IEEE conversions do. e comes from x's float32 exponent bits; below the type's
  // smallest normal the ulp stays at its subnormal spacing.
  const bool half = to == NarrowFloat::kFloat16;
  const int mantissa_bits = half ? 10 : 7;
  const float smallest_ulp = half ? 5.9604645e-8f /* 2^-24 */ : 9.1835496e-41f /* 2^-133 */;
  const ir::Type i32 = ir::Type::Int(32), f32 = ir::Type::Float(32);
  const Expr one_exponent(int64_t(1) << 23);
  return te::Compute(x->name + (half ? ".to_float16" : ".to_bfloat16"), x->shape, [&](const std::vector<Expr>& i) {
    const Expr v = te::Read(x, i);
    const Expr biased_exponent = ir::reinterpret(i32, ir::Call::Make(f32, "fabs", {v})) / ir::cast(i32, one_exponent);
    const Expr ulp_bits = (biased_exponent - ir::cast(i32, Expr(int64_t(mantissa_bits)))) * ir::cast(i32, one_exponent);
    const Expr ulp = ir::max(ir::reinterpret(f32, ulp_bits), Expr(smallest_ulp));
    Expr rounded = ApplyUnary(v / ulp, {UnaryKind::kRound}) * ulp;
    if (!half) return rounded;  // bfloat16 has float32's range: overflow is already infinity
    const Expr largest(65504.0f), inf(std::numeric_limits<float>::infinity());
    return ir::select(rounded > largest, inf, ir::select(rounded < Expr(-65504.0f), Expr(0.0f) - inf, rounded));
  });
}

Tensor Expand(const Tensor& x, const std::vector<int64_t>& shape) {
  std::vector<int64_t> out = BroadcastShape(x->shape, shape);
  return te::Compute(x->name + ".expand", out,
                     [&](const std::vector<Expr>& i) { return te::Read(x, BroadcastIndex(x->shape, i)); });
}

Tensor BatchNorm(const Tensor& x, const Tensor& scale, const Tensor& bias, const Tensor& mean, const Tensor& var,
                 float epsilon) {
  return te::Compute(x->name + ".bn", x->shape, [&](const std::vector<Expr>& i) {
    const Expr& c = i[1];
    Expr inv = ir::Call::Make(ir::Type::Float(32), "sqrt", {te::Read(var, {c}) + F(epsilon)});
    return (te::Read(x, i) - te::Read(mean, {c})) / inv * te::Read(scale, {c}) + te::Read(bias, {c});
  });
}

}  // namespace tunefarm::compute
