// FoldConstants: evaluates, at compile time, every node whose inputs are all constants, and makes
// its outputs constants (Relay's FoldConstant). Shape-chain arithmetic is already folded by shape
// inference; this handles the rest (a transposed or scaled weight, arithmetic on parameters...).
//
// Each such node is evaluated by the ConstantEvaluator the caller hands in: the model compiler's
// (model/compile_graph.h, HostConstantEvaluator) compiles it for the host at opt level 0 and runs
// it with the runtime executor, so folding computes exactly what the kernel would have, without
// this pass calling the driver that runs it. A node that cannot be evaluated stays as it is
// (lowering then reports it). Runs after shape inference.
#ifndef TUNEFARM_COMPILER_MODEL_PASSES_FOLD_CONSTANTS_H_
#define TUNEFARM_COMPILER_MODEL_PASSES_FOLD_CONSTANTS_H_

#include <functional>
#include <vector>

#include "compiler/graph/graph.h"
#include "tunefarm/runtime/result.h"

namespace tunefarm::graph {

// Runs a graph of one node whose inputs are all constants and returns its outputs in order, each in
// its value's dtype and as run; false when the node cannot be evaluated.
using ConstantEvaluator = std::function<bool(graph::Graph one_node, std::vector<graph::ConstantData>* outputs)>;

// Returns the number of nodes folded.
Result<int> FoldConstants(graph::Graph* g, const ConstantEvaluator& evaluate);

}  // namespace tunefarm::graph

#endif  // TUNEFARM_COMPILER_MODEL_PASSES_FOLD_CONSTANTS_H_
