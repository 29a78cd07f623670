// Structural equality and hashing of IR, up to renaming of variables: two trees are equal when they
// have the same shape, the same immediates and a one-to-one correspondence of variables (and of
// tensors) in order of first appearance. Used by the passes' before/expected tests and to dedupe
// expressions (e.g. symbolic atoms in bound inference).
#ifndef TUNEFARM_COMPILER_IR_IR_EQUALITY_H_
#define TUNEFARM_COMPILER_IR_IR_EQUALITY_H_

#include <cstddef>
#include <vector>

#include "compiler/ir/ir.h"

namespace tunefarm::ir {

bool StructuralEqual(const Expr& a, const Expr& b);
bool StructuralEqual(const Stmt& a, const Stmt& b);
size_t StructuralHash(const Expr& e);
size_t StructuralHash(const Stmt& s);

// A function up to renaming: its parameters in order, then its body. Two functions equal by it
// compute the same thing from the same parameter positions (the model compiler emits one of them).
bool StructuralEqual(const std::vector<Var>& params_a, const Stmt& body_a, const std::vector<Var>& params_b,
                     const Stmt& body_b);
size_t StructuralHash(const std::vector<Var>& params, const Stmt& body);

// Like StructuralEqual, but free variables must be the same objects (no renaming): `x + 1` equals
// `x + 1` only for the same x. What simplification and bound inference need.
bool ExprDeepEqual(const Expr& a, const Expr& b);

}  // namespace tunefarm::ir

#endif  // TUNEFARM_COMPILER_IR_IR_EQUALITY_H_
