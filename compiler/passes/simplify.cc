#include "compiler/passes/simplify.h"

#include <algorithm>
#include <cmath>

#include "compiler/arith/linear_form.h"
#include "compiler/ir/ir_equality.h"
#include "compiler/ir/ir_mutator.h"
#include "compiler/ir/ir_operators.h"
#include "compiler/ir/ir_util.h"

namespace tunefarm::passes {

using namespace ir;  // NOLINT(google-build-using-namespace)
using arith::IntBound;

bool IsNoOp(const Stmt& s) {
  if (!s.defined()) return true;
  if (const auto* e = s.as<Evaluate>()) return e->value.as<IntImm>() != nullptr;
  if (const auto* b = s.as<Block>()) {
    return std::all_of(b->stmts.begin(), b->stmts.end(), [](const Stmt& x) { return IsNoOp(x); });
  }
  return false;
}
Stmt MakeNoOp() { return Evaluate::Make(Expr(0)); }

Stmt MutateBlockDroppingNoOps(const Block* op, const Stmt& self, const std::function<Stmt(const Stmt&)>& mutate) {
  std::vector<Stmt> out;
  bool changed = false;
  for (const Stmt& s : op->stmts) {
    Stmt m = mutate(s);
    changed |= !m.same_as(s);
    if (IsNoOp(m)) {
      changed = true;
      continue;
    }
    out.push_back(m);
  }
  if (!changed) return self;
  return out.empty() ? MakeNoOp() : Block::Make(std::move(out));
}

namespace {

int64_t FloorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}
int64_t FloorMod(int64_t a, int64_t b) { return a - FloorDiv(a, b) * b; }

Expr MakeBool(bool v) { return IntImm::Make(Type::Bool(), v ? 1 : 0); }

class Simplifier : public IRMutator {
 public:
  explicit Simplifier(arith::VarBounds bounds) : bounds_(std::move(bounds)) {}
  using IRMutator::Mutate;

 protected:
  IntBound Bound(const Expr& e) { return arith::BoundOf(e, bounds_); }

  bool IsIntScalar(const Expr& e) { return e.type() == Type::Int(64); }
  static bool IsFloatConst(const Expr& e, double v) {
    const auto* f = e.as<FloatImm>();
    return f && f->value == v;
  }

  // Canonical linear form of an int64 sum/difference/product-by-constant; `self` when that is what
  // it already was, so unchanged arithmetic stays the same node (docs/passes.md).
  Expr Canonical(const Expr& e) { return arith::FromLinearForm(arith::ToLinearForm(e)); }
  Expr Canonical(const Expr& e, const Expr& self) {
    Expr c = Canonical(e);
    return ExprDeepEqual(c, self) ? self : c;
  }
  // a op b, reusing self when neither operand changed.
  template <typename T>
  Expr Rebuild(const T* op, const Expr& a, const Expr& b, const Expr& self) {
    return a.same_as(op->a) && b.same_as(op->b) ? self : T::Make(a, b);
  }

  template <typename T, typename F>
  Expr FoldFloat(const T* op, const Expr& a, const Expr& b, F fn, const Expr& self) {
    const auto* fa = a.as<FloatImm>();
    const auto* fb = b.as<FloatImm>();
    if (fa && fb) return FloatImm::Make(op->type, fn(fa->value, fb->value));
    if (a.same_as(op->a) && b.same_as(op->b)) return self;
    return T::Make(a, b);
  }

  // Vector algebra shared by Add and Sub: ramp +- ramp, ramp +- broadcast, broadcast +- broadcast.
  template <typename T>
  Expr VectorAddSub(const T* op, const Expr& a, const Expr& b, bool is_sub, const Expr& self) {
    const auto* ra = a.as<Ramp>();
    const auto* rb = b.as<Ramp>();
    const auto* ba = a.as<Broadcast>();
    const auto* bb = b.as<Broadcast>();
    auto combine = [&](const Expr& x, const Expr& y) { return Mutate(is_sub ? x - y : x + y); };
    if (ra && rb) return Ramp::Make(combine(ra->base, rb->base), combine(ra->stride, rb->stride), ra->lanes);
    if (ra && bb) return Ramp::Make(combine(ra->base, bb->value), ra->stride, ra->lanes);
    if (ba && rb && !is_sub) return Ramp::Make(combine(ba->value, rb->base), rb->stride, rb->lanes);
    if (ba && bb) return Broadcast::Make(combine(ba->value, bb->value), ba->lanes);
    return Rebuild(op, a, b, self);
  }

  // x + dot(0, p, q) = dot(x, p, q) for dot4_u8s8, dot4_s8s8 and dot2_i16 (either order): a reduction's update is then
  // one dot-product instruction accumulating in place. Null when neither operand is such a call.
  static Expr AccumulateDotProduct(const Expr& a, const Expr& b) {
    for (const auto& [acc, term] : {std::pair<Expr, Expr>{a, b}, std::pair<Expr, Expr>{b, a}}) {
      const Call* dot = term.as<Call>();
      if (!dot || !IsConstInt(dot->args[0], 0) || acc.type() != term.type()) continue;
      if (dot->name == kDot4U8S8) return dot4_u8s8(acc, dot->args[1], dot->args[2]);
      if (dot->name == kDot4S8S8) return dot4_s8s8(acc, dot->args[1], dot->args[2]);
      if (dot->name == kDot2I16) return dot2_i16(acc, dot->args[1], dot->args[2]);
    }
    return Expr();
  }

  Expr Visit_(const Add* op, const Expr& self) override {
    Expr a = Mutate(op->a), b = Mutate(op->b);
    if (Expr dot = AccumulateDotProduct(a, b); dot.defined()) return dot;
    if (IsIntScalar(a)) return Canonical(a + b, self);
    if (a.type().is_float()) {
      // x + 0 = x: constant matrices (Winograd's transforms) unrolled leave zero terms.
      if (IsFloatConst(a, 0.0)) return b;
      if (IsFloatConst(b, 0.0)) return a;
      return FoldFloat(
          op, a, b, [](double x, double y) { return x + y; }, self);
    }
    if (a.type().is_vector()) return VectorAddSub(op, a, b, false, self);
    return Rebuild(op, a, b, self);
  }
  Expr Visit_(const Sub* op, const Expr& self) override {
    Expr a = Mutate(op->a), b = Mutate(op->b);
    if (IsIntScalar(a)) return Canonical(a - b, self);
    if (a.type().is_float()) {
      return FoldFloat(
          op, a, b, [](double x, double y) { return x - y; }, self);
    }
    if (a.type().is_vector()) return VectorAddSub(op, a, b, true, self);
    return Rebuild(op, a, b, self);
  }
  Expr Visit_(const ir::Mul* op, const Expr& self) override {
    Expr a = Mutate(op->a), b = Mutate(op->b);
    if (IsIntScalar(a)) {
      if (AsConstInt(a) || AsConstInt(b)) return Canonical(a * b, self);
      return Rebuild(op, a, b, self);
    }
    if (a.type().is_float()) {
      // x * 0 = 0 and x * 1 = x (finite x: the kernels' values), for the same reason as x + 0.
      if (IsFloatConst(a, 0.0) || IsFloatConst(b, 0.0)) return FloatImm::Make(op->type, 0.0);
      if (IsFloatConst(a, 1.0)) return b;
      if (IsFloatConst(b, 1.0)) return a;
      // (x * c1) * c2 = x * (c1 * c2): products of matrix entries.
      if (const auto* inner = a.as<ir::Mul>(); inner && b.as<FloatImm>() && inner->b.as<FloatImm>()) {
        return Mutate(inner->a * FloatImm::Make(op->type, inner->b.as<FloatImm>()->value * b.as<FloatImm>()->value));
      }
      return FoldFloat(
          op, a, b, [](double x, double y) { return x * y; }, self);
    }
    if (a.type().is_vector()) {
      const auto* ra = a.as<Ramp>();
      const auto* bb = b.as<Broadcast>();
      if (ra && bb) return Ramp::Make(Mutate(ra->base * bb->value), Mutate(ra->stride * bb->value), ra->lanes);
      const auto* ba = a.as<Broadcast>();
      const auto* rb = b.as<Ramp>();
      if (ba && rb) return Ramp::Make(Mutate(rb->base * ba->value), Mutate(rb->stride * ba->value), rb->lanes);
      if (ba && bb) return Broadcast::Make(Mutate(ba->value * bb->value), ba->lanes);
    }
    return Rebuild(op, a, b, self);
  }

  // Splits a into (multiples of c) + remainder; returns true when the remainder provably lies in
  // [0, c), filling quotient (a / c) and remainder (a % c).
  bool SplitByDivisor(const Expr& a, int64_t c, Expr* quotient, Expr* remainder) {
    arith::LinearForm lf = arith::ToLinearForm(a);
    arith::LinearForm q, r;
    q.constant = FloorDiv(lf.constant, c);
    r.constant = FloorMod(lf.constant, c);
    for (const auto& t : lf.terms) {
      if (t.coeff % c == 0) {
        q.AddTerm(t.atom, t.coeff / c);
      } else {
        r.AddTerm(t.atom, t.coeff);
      }
    }
    Expr rem = arith::FromLinearForm(r);
    IntBound rb = Bound(rem);
    if (rb.lo < 0 || rb.hi >= c) return false;
    *quotient = arith::FromLinearForm(q);
    *remainder = rem;
    return true;
  }

  Expr Visit_(const Div* op, const Expr& self) override {
    Expr a = Mutate(op->a), b = Mutate(op->b);
    if (!IsIntScalar(a)) {
      if (a.type().is_float()) {
        return FoldFloat(
            op, a, b, [](double x, double y) { return x / y; }, self);
      }
      return Div::Make(a, b);
    }
    const int64_t* cb = AsConstInt(b);
    if (cb && *cb > 0) {
      if (const int64_t* ca = AsConstInt(a)) return Expr(FloorDiv(*ca, *cb));
      if (*cb == 1) return a;
      Expr q, r;
      if (SplitByDivisor(a, *cb, &q, &r)) return q;
      if (const auto* inner = a.as<Div>()) {  // (x / c1) / c2 == x / (c1 * c2) for positive c
        if (const int64_t* c1 = AsConstInt(inner->b); c1 && *c1 > 0) return Div::Make(inner->a, Expr(*c1 * *cb));
      }
    }
    if (a.same_as(op->a) && b.same_as(op->b)) return self;
    return Div::Make(a, b);
  }

  Expr Visit_(const Mod* op, const Expr& self) override {
    Expr a = Mutate(op->a), b = Mutate(op->b);
    const int64_t* cb = AsConstInt(b);
    if (IsIntScalar(a) && cb && *cb > 0) {
      if (const int64_t* ca = AsConstInt(a)) return Expr(FloorMod(*ca, *cb));
      if (*cb == 1) return Expr(0);
      Expr q, r;
      if (SplitByDivisor(a, *cb, &q, &r)) return r;
    }
    if (a.same_as(op->a) && b.same_as(op->b)) return self;
    return Mod::Make(a, b);
  }

  template <typename T>
  Expr MinMax(const T* op, const Expr& self, bool is_min) {
    Expr a = Mutate(op->a), b = Mutate(op->b);
    if (IsIntScalar(a)) {
      IntBound ba = Bound(a), bb = Bound(b);
      if (ba.hi <= bb.lo) return is_min ? a : b;
      if (bb.hi <= ba.lo) return is_min ? b : a;
    }
    const auto* fa = a.as<FloatImm>();
    const auto* fb = b.as<FloatImm>();
    if (fa && fb)
      return FloatImm::Make(a.type(), is_min ? std::min(fa->value, fb->value) : std::max(fa->value, fb->value));
    const auto* ba = a.as<Broadcast>();
    const auto* bb = b.as<Broadcast>();
    if (ba && bb) return Broadcast::Make(Mutate(T::Make(ba->value, bb->value)), ba->lanes);
    if (a.same_as(op->a) && b.same_as(op->b)) return self;
    return T::Make(a, b);
  }
  Expr Visit_(const ir::Min* op, const Expr& self) override { return MinMax(op, self, true); }
  Expr Visit_(const ir::Max* op, const Expr& self) override { return MinMax(op, self, false); }

  // Integer comparisons are decided from the bounds of a - b.
  template <typename T>
  Expr Compare(const T* op, const Expr& self, bool (*decide)(IntBound, bool*)) {
    Expr a = Mutate(op->a), b = Mutate(op->b);
    if (IsIntScalar(a)) {
      Expr diff = Canonical(a - b);
      bool value;
      if (decide(Bound(diff), &value)) return MakeBool(value);
    }
    const auto* fa = a.as<FloatImm>();
    const auto* fb = b.as<FloatImm>();
    if (fa && fb) {
      IntBound d;
      double x = fa->value - fb->value;
      d.lo = d.hi = x < 0 ? -1 : (x > 0 ? 1 : 0);
      bool value;
      if (decide(d, &value)) return MakeBool(value);
    }
    if (a.same_as(op->a) && b.same_as(op->b)) return self;
    return T::Make(a, b);
  }
  Expr Visit_(const LT* op, const Expr& self) override {
    return Compare(op, self, [](IntBound d, bool* v) {
      if (d.hi < 0) return *v = true;
      if (d.lo >= 0) return !(*v = false);
      return false;
    });
  }
  Expr Visit_(const LE* op, const Expr& self) override {
    return Compare(op, self, [](IntBound d, bool* v) {
      if (d.hi <= 0) return *v = true;
      if (d.lo > 0) return !(*v = false);
      return false;
    });
  }
  Expr Visit_(const GT* op, const Expr& self) override {
    return Compare(op, self, [](IntBound d, bool* v) {
      if (d.lo > 0) return *v = true;
      if (d.hi <= 0) return !(*v = false);
      return false;
    });
  }
  Expr Visit_(const GE* op, const Expr& self) override {
    return Compare(op, self, [](IntBound d, bool* v) {
      if (d.lo >= 0) return *v = true;
      if (d.hi < 0) return !(*v = false);
      return false;
    });
  }
  Expr Visit_(const EQ* op, const Expr& self) override {
    return Compare(op, self, [](IntBound d, bool* v) {
      if (d.is_const()) return (*v = d.lo == 0), true;
      if (d.lo > 0 || d.hi < 0) return !(*v = false);
      return false;
    });
  }
  Expr Visit_(const NE* op, const Expr& self) override {
    return Compare(op, self, [](IntBound d, bool* v) {
      if (d.is_const()) return (*v = d.lo != 0), true;
      if (d.lo > 0 || d.hi < 0) return *v = true;
      return false;
    });
  }
  Expr Visit_(const And* op, const Expr& self) override {
    Expr a = Mutate(op->a), b = Mutate(op->b);
    if (const int64_t* ca = AsConstInt(a); ca && a.type().lanes == 1) return *ca ? b : a;
    if (const int64_t* cb = AsConstInt(b); cb && b.type().lanes == 1) return *cb ? a : b;
    if (a.same_as(op->a) && b.same_as(op->b)) return self;
    return And::Make(a, b);
  }
  Expr Visit_(const Or* op, const Expr& self) override {
    Expr a = Mutate(op->a), b = Mutate(op->b);
    if (const int64_t* ca = AsConstInt(a); ca && a.type().lanes == 1) return *ca ? a : b;
    if (const int64_t* cb = AsConstInt(b); cb && b.type().lanes == 1) return *cb ? b : a;
    if (a.same_as(op->a) && b.same_as(op->b)) return self;
    return Or::Make(a, b);
  }
  Expr Visit_(const Not* op, const Expr& self) override {
    Expr a = Mutate(op->a);
    if (const int64_t* ca = AsConstInt(a); ca && a.type().lanes == 1) return MakeBool(*ca == 0);
    return a.same_as(op->a) ? self : Not::Make(a);
  }
  Expr Visit_(const Select* op, const Expr& self) override {
    Expr c = Mutate(op->condition);
    if (const int64_t* cc = AsConstInt(c); cc && c.type().lanes == 1) {
      return Mutate(*cc ? op->true_value : op->false_value);
    }
    Expr t = Mutate(op->true_value), f = Mutate(op->false_value);
    if (c.same_as(op->condition) && t.same_as(op->true_value) && f.same_as(op->false_value)) return self;
    return Select::Make(c, t, f);
  }
  Expr Visit_(const Cast* op, const Expr& self) override {
    Expr v = Mutate(op->value);
    if (op->type.lanes == 1) {
      if (const auto* i = v.as<IntImm>()) {
        if (op->type.is_float()) return FloatImm::Make(op->type, double(i->value));
        if (op->type.is_int()) return IntImm::Make(op->type, i->value);
      }
      if (const auto* f = v.as<FloatImm>(); f && op->type.is_int()) {
        return IntImm::Make(op->type, int64_t(std::trunc(f->value)));
      }
    }
    if (const auto* b = v.as<Broadcast>())
      return Broadcast::Make(Mutate(Cast::Make(op->type.element_of(), b->value)), b->lanes);
    if (v.type() == op->type) return v;
    return v.same_as(op->value) ? self : Cast::Make(op->type, v);
  }
  Expr Visit_(const Broadcast* op, const Expr& self) override {
    Expr v = Mutate(op->value);
    return v.same_as(op->value) ? self : Broadcast::Make(v, op->lanes);
  }
  Expr Visit_(const Let* op, const Expr& self) override {
    Expr v = Mutate(op->value);
    if (v.as<IntImm>() || v.as<VarNode>() || v.as<FloatImm>()) {
      return Mutate(Substitute(op->body, {{op->var.get(), v}}));
    }
    Expr b = Mutate(op->body);
    if (v.same_as(op->value) && b.same_as(op->body)) return self;
    return Let::Make(op->var, v, b);
  }

  Stmt Visit_(const LetStmt* op, const Stmt& self) override {
    Expr v = Mutate(op->value);
    if (v.as<IntImm>() || v.as<VarNode>() || v.as<FloatImm>()) {
      return Mutate(Substitute(op->body, {{op->var.get(), v}}));
    }
    if (IsIntScalar(v)) bounds_[op->var.get()] = Bound(v);
    Stmt b = Mutate(op->body);
    bounds_.erase(op->var.get());
    if (IsNoOp(b)) return MakeNoOp();
    if (v.same_as(op->value) && b.same_as(op->body)) return self;
    return LetStmt::Make(op->var, v, b);
  }

  Stmt Visit_(const For* op, const Stmt& self) override {
    Expr mn = Mutate(op->min), ext = Mutate(op->extent);
    const int64_t* cext = AsConstInt(ext);
    if (cext && *cext <= 0) return MakeNoOp();
    if (cext && *cext == 1 && !IsGpuLoop(op->kind)) {
      return Mutate(Substitute(op->body, {{op->var.get(), mn}}));
    }
    IntBound bmin = Bound(mn), bext = Bound(ext);
    IntBound range;
    if (bmin.bounded() && bext.bounded()) range = {bmin.lo, bmin.hi + bext.hi - 1};
    bounds_[op->var.get()] = range;
    Stmt body = Mutate(op->body);
    bounds_.erase(op->var.get());
    if (IsNoOp(body)) return MakeNoOp();
    if (mn.same_as(op->min) && ext.same_as(op->extent) && body.same_as(op->body)) return self;
    return For::Make(op->var, mn, ext, op->kind, body);
  }

  Stmt Visit_(const IfThenElse* op, const Stmt& self) override {
    Expr c = Mutate(op->condition);
    if (const int64_t* cc = AsConstInt(c)) {
      if (*cc) return Mutate(op->then_case);
      return op->else_case.defined() ? Mutate(op->else_case) : MakeNoOp();
    }
    Stmt t = Mutate(op->then_case), e = Mutate(op->else_case);
    if (IsNoOp(t) && (!e.defined() || IsNoOp(e))) return MakeNoOp();
    if (e.defined() && IsNoOp(e)) e = Stmt();
    if (c.same_as(op->condition) && t.same_as(op->then_case) && e.same_as(op->else_case)) return self;
    return IfThenElse::Make(c, t, e, op->likely);
  }

  Stmt Visit_(const Block* op, const Stmt& self) override {
    return MutateBlockDroppingNoOps(op, self, [this](const Stmt& x) { return Mutate(x); });
  }

  Stmt Visit_(const Allocate* op, const Stmt& self) override {
    Stmt b = Mutate(op->body);
    if (IsNoOp(b)) return MakeNoOp();
    return b.same_as(op->body) ? self : Allocate::Make(op->buffer, op->element_type, op->size, b, op->scope);
  }

 private:
  arith::VarBounds bounds_;
};

}  // namespace

Stmt Simplify(const Stmt& s) { return Simplifier({}).Mutate(s); }
Expr Simplify(const Expr& e, const arith::VarBounds& bounds) { return Simplifier(bounds).Mutate(e); }

}  // namespace tunefarm::passes
