// Small IR utilities shared by passes: substitution and variable-use queries.
#ifndef TUNEFARM_COMPILER_IR_IR_UTIL_H_
#define TUNEFARM_COMPILER_IR_IR_UTIL_H_

#include <functional>
#include <unordered_map>

#include "compiler/ir/ir.h"

namespace tunefarm::ir {

using VarMap = std::unordered_map<const VarNode*, Expr>;

// Replaces every use of a mapped variable by its expression.
Expr Substitute(const Expr& e, const VarMap& map);
Stmt Substitute(const Stmt& s, const VarMap& map);

// Replaces the subexpression `target` (by identity, not structure) with `with`.
Expr ReplaceExpr(const Expr& e, const ExprNode* target, const Expr& with);

// True if e (or s) reads a variable for which pred returns true.
bool UsesVar(const Expr& e, const std::function<bool(const VarNode*)>& pred);
bool UsesVar(const Stmt& s, const std::function<bool(const VarNode*)>& pred);
inline bool UsesVar(const Expr& e, const VarNode* v) {
  return UsesVar(e, [v](const VarNode* u) { return u == v; });
}

}  // namespace tunefarm::ir

#endif  // TUNEFARM_COMPILER_IR_IR_UTIL_H_
