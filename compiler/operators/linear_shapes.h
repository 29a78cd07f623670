// The shape inference of windows (Conv, pooling) and MatMul, shared with their quantized forms
// (integer_ops.cc, microsoft_ops.cc): ConvInteger and QLinearConv take Conv's attributes and shapes,
// MatMulInteger and QLinearMatMul MatMul's, QLinearAveragePool AveragePool's, with their operands at
// other input positions.
#ifndef TUNEFARM_COMPILER_OPERATORS_LINEAR_SHAPES_H_
#define TUNEFARM_COMPILER_OPERATORS_LINEAR_SHAPES_H_

#include <vector>

#include "compiler/compute/ops.h"
#include "compiler/operators/infer_context.h"

namespace tunefarm::operators {

// The output's spatial extents of a window of `kernel` over input 0's spatial axes (2 on): strides,
// dilations (when `dilated`) and pads read from the node, checked, and canonicalized on it (auto_pad
// resolved into pads). Errors name the node.
Result<std::vector<int64_t>> InferWindow(InferContext& cx, std::vector<int64_t> kernel, bool dilated, bool ceil_mode);
// The pooling window of a node whose window InferWindow canonicalized.
compute::PoolParams PoolWindow(const graph::Node& n, const std::vector<int64_t>& spatial_axes, bool is_max);
// The output shape of a convolution of input 0 by input `weight` (plus the optional bias input
// `bias`, checked to be [M]): ranks, groups and kernel_shape checked, and the window attributes
// canonicalized on the node (auto_pad resolved into pads). Errors name the node.
Result<std::vector<int64_t>> InferConvShape(InferContext& cx, size_t weight, size_t bias);
// The window of a node whose shape InferConvShape inferred (so its attributes are canonical).
compute::ConvParams ConvWindow(const graph::Node& n);
// The output shape of the numpy-style product of inputs `a` and `b` (1-D operands promoted, batch
// dimensions broadcast). Errors name the node.
Result<std::vector<int64_t>> InferMatMulShape(const NodeView& v, size_t a, size_t b);

}  // namespace tunefarm::operators

#endif  // TUNEFARM_COMPILER_OPERATORS_LINEAR_SHAPES_H_
