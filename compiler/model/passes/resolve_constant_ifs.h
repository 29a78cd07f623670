// ResolveConstantIfs: an If whose condition is a constant (after InferShapes folded the shape
// arithmetic it usually is) keeps only the taken branch. The nodes of the other branch are
// removed, the If node becomes one Identity per output reading the taken branch's, and the guards
// the constant settles are dropped, so those nodes run unconditionally like any other.
#ifndef TUNEFARM_COMPILER_MODEL_PASSES_RESOLVE_CONSTANT_IFS_H_
#define TUNEFARM_COMPILER_MODEL_PASSES_RESOLVE_CONSTANT_IFS_H_

#include "compiler/graph/graph.h"

namespace tunefarm::graph {

// Returns the number of If nodes resolved. Precondition: InferShapes ran.
int ResolveConstantIfs(Graph* g);

}  // namespace tunefarm::graph

#endif  // TUNEFARM_COMPILER_MODEL_PASSES_RESOLVE_CONSTANT_IFS_H_
