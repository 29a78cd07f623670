// InferShapes: fills in the dtype and shape of every value, in topological order, and folds the
// "shape arithmetic" chains exporters emit (Shape -> Gather -> Div/Mul -> Unsqueeze -> Concat ->
// Reshape/Slice, Cast, Range, Equal/Where, Expand, ConstantOfShape) into constants, so later
// passes see static shapes. The rules per operator live in the operator registry
// (compiler/operators/registry.h); this pass runs them in order.
//
// Preconditions: the graph's inputs have known shapes (override symbolic dimensions before this
// pass). Errors are InvalidArgument naming the node, its op and what does not fit (ranks,
// broadcast, non-constant shape operands, unsupported attribute values).
#ifndef TUNEFARM_COMPILER_MODEL_PASSES_INFER_SHAPES_H_
#define TUNEFARM_COMPILER_MODEL_PASSES_INFER_SHAPES_H_

#include "compiler/graph/graph.h"

namespace tunefarm::graph {

Status InferShapes(Graph* g);

}  // namespace tunefarm::graph

#endif  // TUNEFARM_COMPILER_MODEL_PASSES_INFER_SHAPES_H_
