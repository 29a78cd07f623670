// IRVisitor: walks an IR tree; the default for every node visits its children in field order.
// Override Visit_ for the node kinds a pass cares about and call the base to keep descending.
// Generated from ir_nodes.def, so every node kind has a hook.
#ifndef TUNEFARM_COMPILER_IR_IR_VISITOR_H_
#define TUNEFARM_COMPILER_IR_IR_VISITOR_H_

#include <functional>

#include "compiler/ir/ir.h"

namespace tunefarm::ir {

class IRVisitor {
 public:
  virtual ~IRVisitor() = default;
  virtual void Visit(const Expr& e);
  virtual void Visit(const Stmt& s);

 protected:
#define TUNEFARM_EXPR_NODE(Name) virtual void Visit_(const Name* op);
#define TUNEFARM_STMT_NODE(Name) virtual void Visit_(const Name* op);
#include "compiler/ir/ir_nodes.def"
};

// Calls fn(node) on every expression node in pre-order: a node before its operands (statements
// are descended into).
void PreOrderVisit(const Stmt& s, const std::function<void(const Expr&)>& fn);

}  // namespace tunefarm::ir

#endif  // TUNEFARM_COMPILER_IR_IR_VISITOR_H_
