// Simplify: constant folding, canonicalization of integer index arithmetic into linear form
// (so offsets cancel), div/mod/min/max/compare proofs from loop ranges, vector Ramp/Broadcast
// algebra, and statement clean-up (loops of extent 0/1, constant branches, trivial lets).
//
// Preconditions: none; runs at any point of lowering. Loop ranges are taken from enclosing For
// nodes with constant min/extent. Floating-point arithmetic is only folded when both sides are
// constants (no reassociation: results stay bit-identical to the unsimplified program).
#ifndef TUNEFARM_COMPILER_PASSES_SIMPLIFY_H_
#define TUNEFARM_COMPILER_PASSES_SIMPLIFY_H_

#include <functional>

#include "compiler/arith/int_bounds.h"
#include "compiler/ir/ir.h"

namespace tunefarm::passes {

ir::Stmt Simplify(const ir::Stmt& s);
ir::Expr Simplify(const ir::Expr& e, const arith::VarBounds& bounds = {});

// True for statements that do nothing (Evaluate of a constant, empty blocks).
bool IsNoOp(const ir::Stmt& s);
ir::Stmt MakeNoOp();

// Mutates every statement of a block, dropping those that become no-ops; returns self when nothing
// changed (shared by the passes that clean blocks up).
ir::Stmt MutateBlockDroppingNoOps(const ir::Block* op, const ir::Stmt& self,
                                  const std::function<ir::Stmt(const ir::Stmt&)>& mutate);

}  // namespace tunefarm::passes

#endif  // TUNEFARM_COMPILER_PASSES_SIMPLIFY_H_
