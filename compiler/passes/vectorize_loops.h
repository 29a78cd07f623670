// VectorizeLoops: turns each kVectorized loop of constant extent L into straight-line vector code:
// the loop variable becomes ramp(min, 1, L), scalars meeting vectors are broadcast, loads and
// stores get vector indices (dense ramps become single vector accesses after Simplify).
//
// A loop whose body cannot be vectorized (a nested loop, a branch on the vector lane, a let bound
// to a lane-dependent value) stays a scalar serial loop: correct, only slower. Run Simplify after
// it so that index ramps take their canonical form.
#ifndef TUNEFARM_COMPILER_PASSES_VECTORIZE_LOOPS_H_
#define TUNEFARM_COMPILER_PASSES_VECTORIZE_LOOPS_H_

#include "compiler/ir/ir.h"

namespace tunefarm::passes {

ir::Stmt VectorizeLoops(const ir::Stmt& s);

}  // namespace tunefarm::passes

#endif  // TUNEFARM_COMPILER_PASSES_VECTORIZE_LOOPS_H_
