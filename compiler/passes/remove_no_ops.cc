#include "compiler/passes/remove_no_ops.h"

#include "compiler/ir/ir_mutator.h"
#include "compiler/ir/ir_util.h"
#include "compiler/passes/simplify.h"

namespace tunefarm::passes {
namespace {

using namespace ir;  // NOLINT(google-build-using-namespace)

class NoOpRemover : public IRMutator {
 public:
  using IRMutator::Mutate;

 protected:
  Stmt Visit_(const For* op, const Stmt& self) override {
    Stmt body = Mutate(op->body);
    if (IsNoOp(body)) return MakeNoOp();
    return body.same_as(op->body) ? self : For::Make(op->var, op->min, op->extent, op->kind, body);
  }
  Stmt Visit_(const IfThenElse* op, const Stmt& self) override {
    Stmt t = Mutate(op->then_case), e = Mutate(op->else_case);
    if (IsNoOp(t) && IsNoOp(e)) return MakeNoOp();
    if (e.defined() && IsNoOp(e)) e = Stmt();
    if (t.same_as(op->then_case) && e.same_as(op->else_case)) return self;
    return IfThenElse::Make(op->condition, t, e, op->likely);
  }
  Stmt Visit_(const Block* op, const Stmt& self) override {
    return MutateBlockDroppingNoOps(op, self, [this](const Stmt& x) { return Mutate(x); });
  }
  Stmt Visit_(const Allocate* op, const Stmt& self) override {
    Stmt body = Mutate(op->body);
    const VarNode* buf = op->buffer.get();
    if (IsNoOp(body) || !UsesVar(body, [buf](const VarNode* v) { return v == buf; })) return body;
    return body.same_as(op->body) ? self : Allocate::Make(op->buffer, op->element_type, op->size, body, op->scope);
  }
  Stmt Visit_(const LetStmt* op, const Stmt& self) override {
    Stmt body = Mutate(op->body);
    if (IsNoOp(body)) return MakeNoOp();
    return body.same_as(op->body) ? self : LetStmt::Make(op->var, op->value, body);
  }
};

}  // namespace

Stmt RemoveNoOps(const Stmt& s) { return NoOpRemover().Mutate(s); }

}  // namespace tunefarm::passes
