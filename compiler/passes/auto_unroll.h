// AutoUnroll: TVM's auto_unroll_max_step. Marks kUnrolled every serial loop of constant extent
// whose total iteration count (its extent times the largest iteration count of the loops inside
// it) is at most max_step, so UnrollLoops copies it. GPU schedules use it to turn small reduction
// loops into straight-line code (constant shared-memory offsets, registers instead of local
// memory); 0 unrolls nothing beyond what the schedule annotated. Loops around a barrier (a
// shared-memory round) are never unrolled.
#ifndef TUNEFARM_COMPILER_PASSES_AUTO_UNROLL_H_
#define TUNEFARM_COMPILER_PASSES_AUTO_UNROLL_H_

#include <cstdint>

#include "compiler/ir/ir.h"

namespace tunefarm::passes {

ir::Stmt AutoUnroll(const ir::Stmt& s, int64_t max_step);

}  // namespace tunefarm::passes

#endif  // TUNEFARM_COMPILER_PASSES_AUTO_UNROLL_H_
