// PartitionLoops: peels the boundary iterations of loops guarded by `likely` conditions.
//
// A non-divisible split leaves guards such as `o*12 + i < 56` inside the tile. For a loop over v
// whose body holds likely guards of the form `c*v + rest < bound` (c > 0, rest bounded by the
// ranges of the loops in scope), the loop is split at the first iteration where some guard can
// fail: the main part runs with those guards removed, the tail keeps them. Applied top-down, so
// the tail's inner loops are partitioned with the tail's narrower range.
// Precondition: after Simplify (guards are LT/LE of int64 expressions); loops with constant bounds.
#ifndef TUNEFARM_COMPILER_PASSES_PARTITION_LOOPS_H_
#define TUNEFARM_COMPILER_PASSES_PARTITION_LOOPS_H_

#include "compiler/ir/ir.h"

namespace tunefarm::passes {

ir::Stmt PartitionLoops(const ir::Stmt& s);

}  // namespace tunefarm::passes

#endif  // TUNEFARM_COMPILER_PASSES_PARTITION_LOOPS_H_
