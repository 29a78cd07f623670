// CheckSizeIndependent: whether a graph optimized at its symbolic dimension's maximum computes the
// same thing at every size of the range, as far as the graph shows (docs/dynamic_shapes.md).
//
// Shape inference and constant folding work on fixed shapes, so a size the model reads (Shape ->
// Gather -> Div, a ConstantOfShape) is folded into constants at the maximum. CompileGraph therefore
// optimizes the graph again at other sizes of the range and compares the two node by node: the same
// operators in the same order; the same constants, except a Reshape's target shape, whose
// dimension 0 may follow the size; every output's shape the same except dimension 0, which may
// follow it as a multiple (scale x size). Anything else is InvalidArgument naming the node and
// what differs: such a model needs one fixed --input-shape per size.
#ifndef TUNEFARM_COMPILER_MODEL_CHECK_SIZE_INDEPENDENT_H_
#define TUNEFARM_COMPILER_MODEL_CHECK_SIZE_INDEPENDENT_H_

#include <cstdint>
#include <vector>

#include "compiler/graph/graph.h"

namespace tunefarm::compiler {

// The sizes of [min, max] worth optimizing at besides max: two of them where the range allows,
// avoiding 1, where passes may treat a dimension of one specially.
std::vector<int64_t> ProbeSizes(const graph::SymbolicDim& dim);

// The graph with its symbolic inputs' dimension 0 set to `size` (before optimizing).
graph::Graph WithSize(graph::Graph g, int64_t size);

Status CheckSizeIndependent(const graph::Graph& at_max, const graph::Graph& at_size, int64_t size);

}  // namespace tunefarm::compiler

#endif  // TUNEFARM_COMPILER_MODEL_CHECK_SIZE_INDEPENDENT_H_
