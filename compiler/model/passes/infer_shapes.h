// InferShapes: fills in the dtype and shape of every value, in topological order, and folds the
// "shape arithmetic" chains exporters emit (Shape -> Gather -> Div/Mul -> Unsqueeze -> Concat ->
// Reshape/Slice, Cast, Range, Equal/Where, Expand, ConstantOfShape) into constants, so later
// passes see static shapes. The rules per operator live in the operator registry
// (compiler/operators/registry.h); this pass runs them in order.
//
// Preconditions: the graph's inputs have known shapes (override symbolic dimensions before this
// pass). Errors are InvalidArgument naming the node, its op and what does not fit (ranks,
// broadcast, non-constant shape operands, unsupported attribute values). One exception: a node
// of an If branch whose condition is read at run time, where such an error means the branch cannot
// run at these shapes. ONNX Runtime fails only a run that takes it, and so does tunefarm: the
// branch is cut (its nodes removed) and the If keeps the other one, failing a run whose condition
// names the cut branch (compiler/operators/control_ops.cc). Both branches cut is an error.
#ifndef TUNEFARM_COMPILER_MODEL_PASSES_INFER_SHAPES_H_
#define TUNEFARM_COMPILER_MODEL_PASSES_INFER_SHAPES_H_

#include "compiler/graph/graph.h"

namespace tunefarm::graph {

Status InferShapes(Graph* g);

}  // namespace tunefarm::graph

#endif  // TUNEFARM_COMPILER_MODEL_PASSES_INFER_SHAPES_H_
