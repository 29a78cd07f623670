#include "compiler/passes/vectorize_loops.h"

#include "compiler/ir/ir_mutator.h"
#include "compiler/ir/ir_operators.h"
#include "compiler/ir/ir_util.h"

namespace tunefarm::passes {
namespace {

using namespace ir;  // NOLINT(google-build-using-namespace)

Expr Widen(const Expr& e, int lanes) { return e.type().lanes == lanes ? e : Broadcast::Make(e, lanes); }

// Rewrites the body of one vectorized loop; sets failed() when it meets something it cannot widen.
class LaneWidener : public IRMutator {
 public:
  // `ramp`: what the loop variable becomes, the vector of its values on the lanes.
  LaneWidener(const VarNode* var, Expr ramp) : var_(var), ramp_(std::move(ramp)) {}
  bool failed() const { return failed_; }
  using IRMutator::Mutate;

 protected:
  Expr Visit_(const VarNode* op, const Expr& self) override { return op == var_ ? ramp_ : self; }

#define TUNEFARM_WIDEN_BINARY(Name)                        \
  Expr Visit_(const Name* op, const Expr& self) override { \
    Expr a = Mutate(op->a), b = Mutate(op->b);             \
    if (a.same_as(op->a) && b.same_as(op->b)) return self; \
    int l = std::max(a.type().lanes, b.type().lanes);      \
    return Name::Make(Widen(a, l), Widen(b, l));           \
  }
  TUNEFARM_WIDEN_BINARY(Add)
  TUNEFARM_WIDEN_BINARY(Sub)
  TUNEFARM_WIDEN_BINARY(Mul)
  TUNEFARM_WIDEN_BINARY(Div)
  TUNEFARM_WIDEN_BINARY(Mod)
  TUNEFARM_WIDEN_BINARY(Min)
  TUNEFARM_WIDEN_BINARY(Max)
  TUNEFARM_WIDEN_BINARY(EQ)
  TUNEFARM_WIDEN_BINARY(NE)
  TUNEFARM_WIDEN_BINARY(LT)
  TUNEFARM_WIDEN_BINARY(LE)
  TUNEFARM_WIDEN_BINARY(GT)
  TUNEFARM_WIDEN_BINARY(GE)
  TUNEFARM_WIDEN_BINARY(And)
  TUNEFARM_WIDEN_BINARY(Or)
#undef TUNEFARM_WIDEN_BINARY

  Expr Visit_(const Select* op, const Expr& self) override {
    Expr c = Mutate(op->condition), t = Mutate(op->true_value), f = Mutate(op->false_value);
    if (c.same_as(op->condition) && t.same_as(op->true_value) && f.same_as(op->false_value)) return self;
    int l = std::max({c.type().lanes, t.type().lanes, f.type().lanes});
    return Select::Make(Widen(c, l), Widen(t, l), Widen(f, l));
  }
  Expr Visit_(const Cast* op, const Expr& self) override {
    Expr v = Mutate(op->value);
    if (v.same_as(op->value)) return self;
    return Cast::Make(op->type.with_lanes(v.type().lanes), v);
  }
  Expr Visit_(const Call* op, const Expr& self) override {
    std::vector<Expr> args;
    bool changed = false;
    int l = 1;
    for (const Expr& a : op->args) {
      args.push_back(Mutate(a));
      changed |= !args.back().same_as(a);
      l = std::max(l, int(args.back().type().lanes));
    }
    if (!changed) return self;
    for (Expr& a : args) a = Widen(a, l);
    return Call::Make(op->type.with_lanes(l), op->name, std::move(args));
  }
  Expr Visit_(const Not* op, const Expr& self) override {
    Expr a = Mutate(op->a);
    return a.same_as(op->a) ? self : Not::Make(a);
  }
  Expr Visit_(const Ramp* op, const Expr& self) override { return Fail(self); }
  Expr Visit_(const Broadcast* op, const Expr& self) override { return Fail(self); }
  Expr Visit_(const Let* op, const Expr& self) override {
    return UsesVar(op->value, var_) ? Fail(self) : IRMutator::Visit_(op, self);
  }

  Stmt Visit_(const Store* op, const Stmt& self) override {
    Expr v = Mutate(op->value), i = Mutate(op->index);
    if (v.same_as(op->value) && i.same_as(op->index)) return self;
    int l = std::max(v.type().lanes, i.type().lanes);
    return Store::Make(op->buffer, Widen(v, l), Widen(i, l));
  }
  Stmt Visit_(const For* op, const Stmt& self) override { return Fail(self); }
  Stmt Visit_(const IfThenElse* op, const Stmt& self) override {
    if (UsesVar(op->condition, var_)) return Fail(self);
    return IRMutator::Visit_(op, self);
  }
  Stmt Visit_(const LetStmt* op, const Stmt& self) override {
    if (UsesVar(op->value, var_)) return Fail(self);
    return IRMutator::Visit_(op, self);
  }

 private:
  template <typename T>
  T Fail(const T& self) {
    failed_ = true;
    return self;
  }
  const VarNode* var_;
  Expr ramp_;
  bool failed_ = false;
};

class LoopVectorizer : public IRMutator {
 public:
  using IRMutator::Mutate;

 protected:
  Stmt Visit_(const For* op, const Stmt& self) override {
    Stmt body = Mutate(op->body);
    const int64_t* ext = AsConstInt(op->extent);
    if (op->kind != ForKind::kVectorized || !ext || *ext < 2) {
      ForKind kind = op->kind == ForKind::kVectorized ? ForKind::kSerial : op->kind;
      if (body.same_as(op->body) && kind == op->kind) return self;
      return For::Make(op->var, op->min, op->extent, kind, body);
    }
    int lanes = int(*ext);
    LaneWidener widener(op->var.get(), Ramp::Make(op->min, Expr(1), lanes));
    Stmt vec = widener.Mutate(body);
    if (widener.failed()) return For::Make(op->var, op->min, op->extent, ForKind::kSerial, body);
    return vec;
  }
};

}  // namespace

Stmt VectorizeLoops(const Stmt& s) { return LoopVectorizer().Mutate(s); }

}  // namespace tunefarm::passes
