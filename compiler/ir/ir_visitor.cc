#include "compiler/ir/ir_visitor.h"

#include "tunefarm/runtime/check.h"

namespace tunefarm::ir {

void IRVisitor::Visit(const Expr& e) {
  if (!e.defined()) return;
  switch (e->node_type) {
#define TUNEFARM_EXPR_NODE(Name) \
  case IRNodeType::k##Name:      \
    return Visit_(static_cast<const Name*>(e.get()));
#include "compiler/ir/ir_nodes.def"
    default:
      TUNEFARM_CHECK_MSG(false, "statement node in expression position");
  }
}

void IRVisitor::Visit(const Stmt& s) {
  if (!s.defined()) return;
  switch (s->node_type) {
#define TUNEFARM_STMT_NODE(Name) \
  case IRNodeType::k##Name:      \
    return Visit_(static_cast<const Name*>(s.get()));
#include "compiler/ir/ir_nodes.def"
    default:
      TUNEFARM_CHECK_MSG(false, "expression node in statement position");
  }
}

void IRVisitor::Visit_(const IntImm*) {}
void IRVisitor::Visit_(const FloatImm*) {}
void IRVisitor::Visit_(const VarNode*) {}
void IRVisitor::Visit_(const Cast* op) { Visit(op->value); }
#define TUNEFARM_VISIT_BINARY(Name)        \
  void IRVisitor::Visit_(const Name* op) { \
    Visit(op->a);                          \
    Visit(op->b);                          \
  }
TUNEFARM_VISIT_BINARY(Add)
TUNEFARM_VISIT_BINARY(Sub)
TUNEFARM_VISIT_BINARY(Mul)
TUNEFARM_VISIT_BINARY(Div)
TUNEFARM_VISIT_BINARY(Mod)
TUNEFARM_VISIT_BINARY(Min)
TUNEFARM_VISIT_BINARY(Max)
TUNEFARM_VISIT_BINARY(EQ)
TUNEFARM_VISIT_BINARY(NE)
TUNEFARM_VISIT_BINARY(LT)
TUNEFARM_VISIT_BINARY(LE)
TUNEFARM_VISIT_BINARY(GT)
TUNEFARM_VISIT_BINARY(GE)
TUNEFARM_VISIT_BINARY(And)
TUNEFARM_VISIT_BINARY(Or)
#undef TUNEFARM_VISIT_BINARY
void IRVisitor::Visit_(const Not* op) { Visit(op->a); }
void IRVisitor::Visit_(const Select* op) {
  Visit(op->condition);
  Visit(op->true_value);
  Visit(op->false_value);
}
void IRVisitor::Visit_(const Ramp* op) {
  Visit(op->base);
  Visit(op->stride);
}
void IRVisitor::Visit_(const Broadcast* op) { Visit(op->value); }
void IRVisitor::Visit_(const Load* op) {
  Visit(AsExpr(op->buffer));
  Visit(op->index);
}
void IRVisitor::Visit_(const ProducerLoad* op) {
  for (const auto& i : op->indices) Visit(i);
}
void IRVisitor::Visit_(const Call* op) {
  for (const auto& a : op->args) Visit(a);
}
void IRVisitor::Visit_(const Let* op) {
  Visit(op->value);
  Visit(op->body);
}
void IRVisitor::Visit_(const LetStmt* op) {
  Visit(op->value);
  Visit(op->body);
}
void IRVisitor::Visit_(const For* op) {
  Visit(op->min);
  Visit(op->extent);
  Visit(op->body);
}
void IRVisitor::Visit_(const Store* op) {
  Visit(AsExpr(op->buffer));
  Visit(op->value);
  Visit(op->index);
}
void IRVisitor::Visit_(const ProducerStore* op) {
  Visit(op->value);
  for (const auto& i : op->indices) Visit(i);
}
void IRVisitor::Visit_(const ProducerRealize* op) {
  for (const auto& m : op->mins) Visit(m);
  Visit(op->body);
}
void IRVisitor::Visit_(const Allocate* op) { Visit(op->body); }
void IRVisitor::Visit_(const IfThenElse* op) {
  Visit(op->condition);
  Visit(op->then_case);
  Visit(op->else_case);
}
void IRVisitor::Visit_(const Block* op) {
  for (const auto& s : op->stmts) Visit(s);
}
void IRVisitor::Visit_(const Evaluate* op) { Visit(op->value); }
void IRVisitor::Visit_(const Barrier*) {}

namespace {
class FnVisitor : public IRVisitor {
 public:
  explicit FnVisitor(const std::function<void(const Expr&)>& fn) : fn_(fn) {}
  using IRVisitor::Visit;
  void Visit(const Expr& e) override {
    if (!e.defined()) return;
    fn_(e);
    IRVisitor::Visit(e);
  }

 private:
  const std::function<void(const Expr&)>& fn_;
};
}  // namespace

void PreOrderVisit(const Stmt& s, const std::function<void(const Expr&)>& fn) {
  FnVisitor v(fn);
  v.Visit(s);
}

}  // namespace tunefarm::ir
