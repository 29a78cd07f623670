// Constant integer bounds of an expression given constant ranges of its variables: interval
// arithmetic good enough to prove guards, min/max and div/mod identities on loop indices.
#ifndef TUNEFARM_COMPILER_ARITH_INT_BOUNDS_H_
#define TUNEFARM_COMPILER_ARITH_INT_BOUNDS_H_

#include <cstdint>
#include <limits>
#include <unordered_map>

#include "compiler/ir/ir.h"

namespace tunefarm::arith {

struct IntBound {
  static constexpr int64_t kNegInf = std::numeric_limits<int64_t>::min();
  static constexpr int64_t kPosInf = std::numeric_limits<int64_t>::max();
  int64_t lo = kNegInf;
  int64_t hi = kPosInf;
  bool is_const() const { return lo == hi; }
  bool bounded() const { return lo != kNegInf && hi != kPosInf; }
};

// Inclusive ranges of variables in scope (loop variables map to [min, min + extent - 1]).
using VarBounds = std::unordered_map<const ir::VarNode*, IntBound>;

// Bounds of a scalar integer expression; unknown parts widen to infinity.
IntBound BoundOf(const ir::Expr& e, const VarBounds& vars);

}  // namespace tunefarm::arith

#endif  // TUNEFARM_COMPILER_ARITH_INT_BOUNDS_H_
