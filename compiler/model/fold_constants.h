// FoldConstants: evaluates, at compile time, every node whose inputs are all constants, and makes
// its outputs constants (Relay's FoldConstant). Shape-chain arithmetic is already folded by shape
// inference; this handles the rest (a transposed or scaled weight, arithmetic on parameters...).
//
// Each such node is compiled for the host with the model compiler itself (opt level 0) and run by
// the runtime executor, so folding computes exactly what the kernel would have. A node that cannot
// be compiled stays as it is (lowering then reports it). Runs after shape inference.
#ifndef TUNEFARM_COMPILER_MODEL_FOLD_CONSTANTS_H_
#define TUNEFARM_COMPILER_MODEL_FOLD_CONSTANTS_H_

#include "compiler/graph/graph.h"
#include "tunefarm/runtime/result.h"

namespace tunefarm::compiler {

// Returns the number of nodes folded.
Result<int> FoldConstants(graph::Graph* g);

}  // namespace tunefarm::compiler

#endif  // TUNEFARM_COMPILER_MODEL_FOLD_CONSTANTS_H_
