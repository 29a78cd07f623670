// LinearForm: an integer expression as constant + sum(coeff * atom), where atoms are variables or
// non-linear subexpressions (compared with ExprDeepEqual). The canonical form behind Simplify's
// cancellation ((o*12 + i) - o*12 -> i) and behind the region inference of compute_at.
#ifndef TUNEFARM_COMPILER_ARITH_LINEAR_FORM_H_
#define TUNEFARM_COMPILER_ARITH_LINEAR_FORM_H_

#include <cstdint>
#include <vector>

#include "compiler/ir/ir.h"

namespace tunefarm::arith {

struct LinearTerm {
  ir::Expr atom;
  int64_t coeff;
};

struct LinearForm {
  int64_t constant = 0;
  std::vector<LinearTerm> terms;  // no zero coefficients, no duplicate atoms

  void AddTerm(const ir::Expr& atom, int64_t coeff);
  void AddScaled(const LinearForm& other, int64_t scale);
  // The coefficient of an atom that is exactly this variable (0 if absent).
  int64_t CoeffOfVar(const ir::VarNode* v) const;
  bool IsConstant() const { return terms.empty(); }
};

// Decomposes a scalar int64 expression (Add, Sub, Mul by constant, immediates; anything else is an
// atom). Never fails: the worst case is one atom.
LinearForm ToLinearForm(const ir::Expr& e);
// Rebuilds an expression: terms in their stored order, then the constant.
ir::Expr FromLinearForm(const LinearForm& form);

}  // namespace tunefarm::arith

#endif  // TUNEFARM_COMPILER_ARITH_LINEAR_FORM_H_
