#include "compiler/ir/ir_mutator.h"

#include "tunefarm/runtime/check.h"

namespace tunefarm::ir {

Expr IRMutator::Mutate(const Expr& e) {
  if (!e.defined()) return e;
  switch (e->node_type) {
#define TUNEFARM_EXPR_NODE(Name) \
  case IRNodeType::k##Name:      \
    return Visit_(static_cast<const Name*>(e.get()), e);
#include "compiler/ir/ir_nodes.def"
    default:
      TUNEFARM_CHECK_MSG(false, "statement node in expression position");
  }
  return e;
}

Stmt IRMutator::Mutate(const Stmt& s) {
  if (!s.defined()) return s;
  switch (s->node_type) {
#define TUNEFARM_STMT_NODE(Name) \
  case IRNodeType::k##Name:      \
    return Visit_(static_cast<const Name*>(s.get()), s);
#include "compiler/ir/ir_nodes.def"
    default:
      TUNEFARM_CHECK_MSG(false, "expression node in statement position");
  }
  return s;
}

namespace {
bool MutateAll(IRMutator* m, const std::vector<Expr>& in, std::vector<Expr>* out) {
  bool changed = false;
  out->reserve(in.size());
  for (const Expr& e : in) {
    out->push_back(m->Mutate(e));
    changed |= !out->back().same_as(e);
  }
  return changed;
}
}  // namespace

Expr IRMutator::Visit_(const IntImm*, const Expr& self) { return self; }
Expr IRMutator::Visit_(const FloatImm*, const Expr& self) { return self; }
Expr IRMutator::Visit_(const VarNode*, const Expr& self) { return self; }
Expr IRMutator::Visit_(const Cast* op, const Expr& self) {
  Expr v = Mutate(op->value);
  return v.same_as(op->value) ? self : Cast::Make(op->type, v);
}
#define TUNEFARM_MUTATE_BINARY(Name)                         \
  Expr IRMutator::Visit_(const Name* op, const Expr& self) { \
    Expr a = Mutate(op->a), b = Mutate(op->b);               \
    if (a.same_as(op->a) && b.same_as(op->b)) return self;   \
    return Name::Make(a, b);                                 \
  }
TUNEFARM_MUTATE_BINARY(Add)
TUNEFARM_MUTATE_BINARY(Sub)
TUNEFARM_MUTATE_BINARY(Mul)
TUNEFARM_MUTATE_BINARY(Div)
TUNEFARM_MUTATE_BINARY(Mod)
TUNEFARM_MUTATE_BINARY(Min)
TUNEFARM_MUTATE_BINARY(Max)
TUNEFARM_MUTATE_BINARY(EQ)
TUNEFARM_MUTATE_BINARY(NE)
TUNEFARM_MUTATE_BINARY(LT)
TUNEFARM_MUTATE_BINARY(LE)
TUNEFARM_MUTATE_BINARY(GT)
TUNEFARM_MUTATE_BINARY(GE)
TUNEFARM_MUTATE_BINARY(And)
TUNEFARM_MUTATE_BINARY(Or)
#undef TUNEFARM_MUTATE_BINARY
Expr IRMutator::Visit_(const Not* op, const Expr& self) {
  Expr a = Mutate(op->a);
  return a.same_as(op->a) ? self : Not::Make(a);
}
Expr IRMutator::Visit_(const Select* op, const Expr& self) {
  Expr c = Mutate(op->condition), t = Mutate(op->true_value), f = Mutate(op->false_value);
  if (c.same_as(op->condition) && t.same_as(op->true_value) && f.same_as(op->false_value)) return self;
  return Select::Make(c, t, f);
}
Expr IRMutator::Visit_(const Ramp* op, const Expr& self) {
  Expr b = Mutate(op->base), s = Mutate(op->stride);
  if (b.same_as(op->base) && s.same_as(op->stride)) return self;
  return Ramp::Make(b, s, op->lanes);
}
Expr IRMutator::Visit_(const Broadcast* op, const Expr& self) {
  Expr v = Mutate(op->value);
  return v.same_as(op->value) ? self : Broadcast::Make(v, op->lanes);
}
Expr IRMutator::Visit_(const Load* op, const Expr& self) {
  Expr i = Mutate(op->index);
  return i.same_as(op->index) ? self : Load::Make(op->type.element_of(), op->buffer, i);
}
Expr IRMutator::Visit_(const ProducerLoad* op, const Expr& self) {
  std::vector<Expr> idx;
  return MutateAll(this, op->indices, &idx) ? ProducerLoad::Make(op->tensor, std::move(idx)) : self;
}
Expr IRMutator::Visit_(const Call* op, const Expr& self) {
  std::vector<Expr> args;
  return MutateAll(this, op->args, &args) ? Call::Make(op->type, op->name, std::move(args)) : self;
}
Expr IRMutator::Visit_(const Let* op, const Expr& self) {
  Expr v = Mutate(op->value), b = Mutate(op->body);
  if (v.same_as(op->value) && b.same_as(op->body)) return self;
  return Let::Make(op->var, v, b);
}

Stmt IRMutator::Visit_(const LetStmt* op, const Stmt& self) {
  Expr v = Mutate(op->value);
  Stmt b = Mutate(op->body);
  if (v.same_as(op->value) && b.same_as(op->body)) return self;
  return LetStmt::Make(op->var, v, b);
}
Stmt IRMutator::Visit_(const For* op, const Stmt& self) {
  Expr mn = Mutate(op->min), ext = Mutate(op->extent);
  Stmt b = Mutate(op->body);
  if (mn.same_as(op->min) && ext.same_as(op->extent) && b.same_as(op->body)) return self;
  return For::Make(op->var, mn, ext, op->kind, b);
}
Stmt IRMutator::Visit_(const Store* op, const Stmt& self) {
  Expr v = Mutate(op->value), i = Mutate(op->index);
  if (v.same_as(op->value) && i.same_as(op->index)) return self;
  return Store::Make(op->buffer, v, i);
}
Stmt IRMutator::Visit_(const ProducerStore* op, const Stmt& self) {
  Expr v = Mutate(op->value);
  std::vector<Expr> idx;
  bool changed = MutateAll(this, op->indices, &idx);
  if (!changed && v.same_as(op->value)) return self;
  return ProducerStore::Make(op->tensor, v, std::move(idx));
}
Stmt IRMutator::Visit_(const ProducerRealize* op, const Stmt& self) {
  std::vector<Expr> mins;
  bool changed = MutateAll(this, op->mins, &mins);
  Stmt b = Mutate(op->body);
  if (!changed && b.same_as(op->body)) return self;
  return ProducerRealize::Make(op->tensor, std::move(mins), op->extents, b, op->scope, op->folds);
}
Stmt IRMutator::Visit_(const Allocate* op, const Stmt& self) {
  Stmt b = Mutate(op->body);
  return b.same_as(op->body) ? self : Allocate::Make(op->buffer, op->element_type, op->size, b, op->scope);
}
Stmt IRMutator::Visit_(const Barrier*, const Stmt& self) { return self; }
Stmt IRMutator::Visit_(const IfThenElse* op, const Stmt& self) {
  Expr c = Mutate(op->condition);
  Stmt t = Mutate(op->then_case), e = Mutate(op->else_case);
  if (c.same_as(op->condition) && t.same_as(op->then_case) && e.same_as(op->else_case)) return self;
  return IfThenElse::Make(c, t, e, op->likely);
}
Stmt IRMutator::Visit_(const Block* op, const Stmt& self) {
  std::vector<Stmt> out;
  bool changed = false;
  for (const Stmt& s : op->stmts) {
    out.push_back(Mutate(s));
    changed |= !out.back().same_as(s);
  }
  return changed ? Block::Make(std::move(out)) : self;
}
Stmt IRMutator::Visit_(const Evaluate* op, const Stmt& self) {
  Expr v = Mutate(op->value);
  return v.same_as(op->value) ? self : Evaluate::Make(v);
}

}  // namespace tunefarm::ir
