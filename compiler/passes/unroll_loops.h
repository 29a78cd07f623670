// UnrollLoops: replaces every kUnrolled loop of constant extent by copies of its body, one per
// iteration with the loop variable bound to the iteration's constant. Register tiles rely on it:
// once unrolled, accumulator indices are constants and LLVM keeps the tile in registers.
// Precondition: unrolled loops have constant min and extent (a non-constant one becomes serial).
#ifndef TUNEFARM_COMPILER_PASSES_UNROLL_LOOPS_H_
#define TUNEFARM_COMPILER_PASSES_UNROLL_LOOPS_H_

#include "compiler/ir/ir.h"

namespace tunefarm::passes {

ir::Stmt UnrollLoops(const ir::Stmt& s);

}  // namespace tunefarm::passes

#endif  // TUNEFARM_COMPILER_PASSES_UNROLL_LOOPS_H_
