// IRMutator: rebuilds an IR tree bottom-up. The default for every node mutates its children and
// returns the original node when none changed, so unchanged subtrees stay shared and callers can
// test `result.same_as(input)` for "nothing to do".
#ifndef TUNEFARM_COMPILER_IR_IR_MUTATOR_H_
#define TUNEFARM_COMPILER_IR_IR_MUTATOR_H_

#include "compiler/ir/ir.h"

namespace tunefarm::ir {

class IRMutator {
 public:
  virtual ~IRMutator() = default;
  virtual Expr Mutate(const Expr& e);
  virtual Stmt Mutate(const Stmt& s);

 protected:
  // `self` is the handle of `op`, returned as-is when nothing changed.
#define TUNEFARM_EXPR_NODE(Name) virtual Expr Visit_(const Name* op, const Expr& self);
#define TUNEFARM_STMT_NODE(Name) virtual Stmt Visit_(const Name* op, const Stmt& self);
#include "compiler/ir/ir_nodes.def"
};

}  // namespace tunefarm::ir

#endif  // TUNEFARM_COMPILER_IR_IR_MUTATOR_H_
