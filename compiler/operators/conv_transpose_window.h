// ConvTranspose's window: strides, dilations, begin pads and output extents, from pads, auto_pad
// or output_shape (which overrides pads: total padding = stride (in - 1) + output_padding +
// (k - 1) dilation + 1 - out, split as ONNX says; it may be negative). Shared by the operator's
// inference and lowering and by the graph rewrite that turns it into a convolution
// (compiler/model/passes/conv_transpose_as_conv.h).
#ifndef TUNEFARM_COMPILER_OPERATORS_CONV_TRANSPOSE_WINDOW_H_
#define TUNEFARM_COMPILER_OPERATORS_CONV_TRANSPOSE_WINDOW_H_

#include <vector>

#include "compiler/compute/ops.h"
#include "compiler/operators/infer_context.h"

namespace tunefarm::operators {

struct TransposeWindow {
  compute::ConvParams params;  // groups, strides, dilations, pads_begin (per spatial axis)
  std::vector<int64_t> out;    // spatial extents of the output
};

// InvalidArgument naming the node for every attribute the operator refuses.
Result<TransposeWindow> ParseConvTranspose(const NodeView& v);

}  // namespace tunefarm::operators

#endif  // TUNEFARM_COMPILER_OPERATORS_CONV_TRANSPOSE_WINDOW_H_
