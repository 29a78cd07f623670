#include "compiler/arith/int_bounds.h"

#include <algorithm>

namespace tunefarm::arith {
namespace {

using I = IntBound;

bool Finite(int64_t v) { return v != I::kNegInf && v != I::kPosInf; }

int64_t SatAdd(int64_t a, int64_t b) {
  if (!Finite(a)) return a;
  if (!Finite(b)) return b;
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) return a > 0 ? I::kPosInf : I::kNegInf;
  return r;
}

int64_t SatMul(int64_t a, int64_t b) {
  if (a == 0 || b == 0) return 0;
  bool neg = (a < 0) != (b < 0);
  if (!Finite(a) || !Finite(b)) return neg ? I::kNegInf : I::kPosInf;
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) return neg ? I::kNegInf : I::kPosInf;
  return r;
}

int64_t FloorDiv(int64_t a, int64_t b) {
  if (!Finite(a)) return (a > 0) == (b > 0) ? I::kPosInf : I::kNegInf;
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

I Mul(I a, I b) {
  int64_t c[4] = {SatMul(a.lo, b.lo), SatMul(a.lo, b.hi), SatMul(a.hi, b.lo), SatMul(a.hi, b.hi)};
  return {*std::min_element(c, c + 4), *std::max_element(c, c + 4)};
}

}  // namespace

IntBound BoundOf(const ir::Expr& e, const VarBounds& vars) {
  using namespace ir;  // NOLINT(google-build-using-namespace): node names read better unqualified
  if (const auto* i = e.as<IntImm>()) return {i->value, i->value};
  if (const auto* v = e.as<VarNode>()) {
    auto it = vars.find(v);
    return it == vars.end() ? I{} : it->second;
  }
  if (const auto* a = e.as<Add>()) {
    I x = BoundOf(a->a, vars), y = BoundOf(a->b, vars);
    return {SatAdd(x.lo, y.lo), SatAdd(x.hi, y.hi)};
  }
  if (const auto* s = e.as<Sub>()) {
    I x = BoundOf(s->a, vars), y = BoundOf(s->b, vars);
    I ny = {y.hi == I::kPosInf ? I::kNegInf : -y.hi, y.lo == I::kNegInf ? I::kPosInf : -y.lo};
    return {SatAdd(x.lo, ny.lo), SatAdd(x.hi, ny.hi)};
  }
  if (const auto* m = e.as<ir::Mul>()) return Mul(BoundOf(m->a, vars), BoundOf(m->b, vars));
  if (const auto* d = e.as<Div>()) {
    I x = BoundOf(d->a, vars), y = BoundOf(d->b, vars);
    if (y.is_const() && y.lo > 0) return {FloorDiv(x.lo, y.lo), FloorDiv(x.hi, y.lo)};
    return {};
  }
  if (const auto* m = e.as<Mod>()) {
    I x = BoundOf(m->a, vars), y = BoundOf(m->b, vars);
    if (y.is_const() && y.lo > 0) {
      if (x.lo >= 0 && x.hi < y.lo) return x;
      return {0, y.lo - 1};
    }
    return {};
  }
  if (const auto* m = e.as<ir::Min>()) {
    I x = BoundOf(m->a, vars), y = BoundOf(m->b, vars);
    return {std::min(x.lo, y.lo), std::min(x.hi, y.hi)};
  }
  if (const auto* m = e.as<ir::Max>()) {
    I x = BoundOf(m->a, vars), y = BoundOf(m->b, vars);
    return {std::max(x.lo, y.lo), std::max(x.hi, y.hi)};
  }
  if (const auto* s = e.as<Select>()) {
    I x = BoundOf(s->true_value, vars), y = BoundOf(s->false_value, vars);
    return {std::min(x.lo, y.lo), std::max(x.hi, y.hi)};
  }
  if (e.type().is_bool()) return {0, 1};
  return {};
}

}  // namespace tunefarm::arith
