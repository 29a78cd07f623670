#include "compiler/passes/lower_gpu_math.h"

#include <limits>

#include "compiler/ir/ir_mutator.h"
#include "compiler/ir/ir_operators.h"

namespace tunefarm::passes {
namespace {

using namespace ir;  // NOLINT(google-build-using-namespace)

constexpr int kMantissaBits = 23;
constexpr int64_t kMantissaScale = int64_t(1) << kMantissaBits;  // one step of the exponent field
constexpr int64_t kExponentBias = 127;
// ln 2 = kLn2Hi + kLn2Lo, kLn2Hi with 9 significant bits: n * kLn2Hi is exact for |n| < 2^15.
constexpr double kLn2Hi = 0.693359375;
constexpr double kLn2Lo = -2.12194440054690583e-4;
constexpr double kLog2E = 1.4426950408889634;

// Names each intermediate once, so a value used several times is computed once (codegen emits a
// Let's value once; Simplify keeps non-trivial Lets).
class Builder {
 public:
  explicit Builder(Type t) : f_(t), i_(Type::Int(32).with_lanes(t.lanes)) {}
  Expr Bind(const char* name, const Expr& value) {
    Var v = MakeVar(name, value.type());
    lets_.push_back({v, value});
    return AsExpr(v);
  }
  // The Lets around `body`, innermost last bound.
  Expr Wrap(Expr body) const {
    for (auto it = lets_.rbegin(); it != lets_.rend(); ++it) body = Let::Make(it->first, it->second, body);
    return body;
  }
  Expr F(double v) const { return Constant(f_, v); }
  Expr I(int64_t v) const { return Constant(i_, double(v)); }
  Expr ToBits(const Expr& x) const { return reinterpret(i_, x); }
  Expr FromBits(const Expr& bits) const { return reinterpret(f_, bits); }
  Expr ToInt(const Expr& x) const { return Cast::Make(i_, x); }
  Expr ToFloat(const Expr& x) const { return Cast::Make(f_, x); }
  // 2^k for an integer k in [-126, 127].
  Expr Pow2(const Expr& k) const { return FromBits((k + I(kExponentBias)) * I(kMantissaScale)); }
  // c[0] + x c[1] + x^2 c[2] + ... by Horner's rule (each step one fused multiply-add).
  Expr Polynomial(const Expr& x, std::initializer_list<double> c) const {
    Expr acc;
    for (auto it = std::rbegin(c); it != std::rend(c); ++it) acc = acc.defined() ? F(*it) + acc * x : F(*it);
    return acc;
  }

 private:
  static Expr Constant(Type t, double v) {
    Expr scalar = t.is_float() ? FloatImm::Make(t.element_of(), v) : IntImm::Make(t.element_of(), int64_t(v));
    return t.lanes > 1 ? Broadcast::Make(scalar, t.lanes) : scalar;
  }
  Type f_, i_;
  std::vector<std::pair<Var, Expr>> lets_;
};

constexpr double kInf = std::numeric_limits<double>::infinity();

// e^x. Clamping to [-104, 89] first keeps n an int32 (no float-to-int of NaN or inf) and lets the
// scaling overflow to inf or round to 0 by itself; NaN is put back at the end.
Expr Exp(const Expr& x) {
  Builder b(x.type());
  Expr xc = b.Bind("exp_x", min(max(x, b.F(-104.0)), b.F(89.0)));
  Expr n = b.Bind("exp_n", Call::Make(x.type(), "floor", {xc * b.F(kLog2E) + b.F(0.5)}));
  Expr r = b.Bind("exp_r", (xc - n * b.F(kLn2Hi)) - n * b.F(kLn2Lo));
  // e^r = 1 + r + r^2 (1/2! + r/3! + ... + r^5/7!), |r| <= ln2/2: truncation below 1e-8 relative.
  Expr tail = b.Polynomial(r, {1.0 / 2, 1.0 / 6, 1.0 / 24, 1.0 / 120, 1.0 / 720, 1.0 / 5040});
  Expr p = b.Bind("exp_p", b.F(1.0) + (r + r * r * tail));
  // 2^n in two factors, each a normal float for n in [-150, 128].
  Expr ni = b.Bind("exp_ni", b.ToInt(n));
  Expr half = b.Bind("exp_half", ni / b.I(2));
  Expr scaled = p * b.Pow2(half) * b.Pow2(ni - half);
  return b.Wrap(select(x != x, x, scaled));
}

// log x through log(1+f) = f - s (f - R), s = f / (2 + f), R = 2s^2/3 + 2s^4/5 + ... (the atanh
// series: |s| <= 0.172, so five terms reach 1e-9 relative and f is taken exactly).
Expr Log(const Expr& x) {
  Builder b(x.type());
  Expr subnormal = b.Bind("log_sub", x < b.F(1.1754943508222875e-38));
  Expr xs = select(subnormal, x * b.F(double(kMantissaScale)), x);
  Expr bits = b.Bind("log_bits", b.ToBits(xs));
  // x = m 2^e, m in [1/2, 1); then m in [sqrt(1/2), sqrt(2)) by moving a factor 2 into e.
  Expr m0 = b.Bind("log_m", b.FromBits(bits % b.I(kMantissaScale) + b.I((kExponentBias - 1) * kMantissaScale)));
  Expr low = b.Bind("log_low", m0 < b.F(0.70710678118654752));
  Expr e = bits / b.I(kMantissaScale) - b.I(kExponentBias - 1) - select(subnormal, b.I(kMantissaBits), b.I(0)) -
           select(low, b.I(1), b.I(0));
  Expr ef = b.Bind("log_e", b.ToFloat(e));
  Expr f = b.Bind("log_f", select(low, m0 + m0, m0) - b.F(1.0));
  Expr s = b.Bind("log_s", f / (b.F(2.0) + f));
  Expr s2 = b.Bind("log_s2", s * s);
  Expr R = s2 * b.Polynomial(s2, {2.0 / 3, 2.0 / 5, 2.0 / 7, 2.0 / 9, 2.0 / 11});
  Expr log1p_f = f - (s * (f - R) - ef * b.F(kLn2Lo));
  Expr finite = ef * b.F(kLn2Hi) + log1p_f;
  // Special values: 0 -> -inf, negative or NaN -> NaN, +inf -> +inf.
  Expr result = select(x == b.F(kInf), x, finite);
  result = select(x < b.F(0.0) || x != x, b.F(std::numeric_limits<double>::quiet_NaN()), result);
  return b.Wrap(select(x == b.F(0.0), b.F(-kInf), result));
}

// tanh x: x + x^3 q(x^2) below 0.625 (q fitted to (tanh x - x)/x^3 by weighted least squares on
// Chebyshev nodes, 0.04 ulp in exact arithmetic), 1 - 2/(e^{2|x|} + 1) with x's sign above.
Expr Tanh(const Expr& x) {
  Builder b(x.type());
  Expr a = b.Bind("tanh_a", Call::Make(x.type(), "fabs", {x}));
  Expr z = b.Bind("tanh_z", x * x);
  Expr q = b.Polynomial(z, {-0.3333333134651184, 0.1333320140838623, -0.053946252912282944, 0.021698210388422012,
                            -0.008171788416802883, 0.002138226293027401});
  Expr small = x + x * z * q;
  Expr t = b.Bind("tanh_t", b.F(1.0) - b.F(2.0) / (Exp(a * b.F(2.0)) + b.F(1.0)));
  Expr large = select(x < b.F(0.0), b.F(0.0) - t, t);
  return b.Wrap(select(a < b.F(0.625), small, large));
}

class MathLowerer : public IRMutator {
 public:
  using IRMutator::Mutate;

 protected:
  Expr Visit_(const Call* op, const Expr& self) override {
    Expr mutated = IRMutator::Visit_(op, self);
    const auto* call = mutated.as<Call>();
    if (!call || call->args.size() != 1 || call->type.element_of() != Type::Float(32)) return mutated;
    if (call->name == "exp") return Exp(call->args[0]);
    if (call->name == "log") return Log(call->args[0]);
    if (call->name == "tanh") return Tanh(call->args[0]);
    return mutated;
  }
};

}  // namespace

Stmt LowerGpuMath(const Stmt& s) { return MathLowerer().Mutate(s); }

Expr GpuExp(const Expr& x) { return Exp(x); }
Expr GpuLog(const Expr& x) { return Log(x); }
Expr GpuTanh(const Expr& x) { return Tanh(x); }

}  // namespace tunefarm::passes
