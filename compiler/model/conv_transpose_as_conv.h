// ConvTransposeAsConv: a 2-D transposed convolution with constant weights becomes a convolution
// the tuner sees (a conv2d task with its templates, config space and fallback on every target),
// followed by DepthToSpace and, where the padding crops, a Slice:
//
//   ConvTranspose(x, W[C, O, k, k], stride s, pads p)
//     = Slice(DepthToSpace_s(Conv(x, V[s*s*O, C, K, K], pads K-1)), p, p + out),  K = ceil(k / s)
//
// Output phase (rh, rw) of the stride-s grid at q*s + r reads x[q - m] * W[m*s + r] over the taps
// m: a plain correlation with the sub-kernel W[r::s] flipped. So V holds, per phase, the flipped
// sub-kernels (zero where m*s + r >= k), DCR-ordered so DepthToSpace interleaves the phases; the
// bias repeats per phase and fuses as the conv's epilogue. The arithmetic is the transposed
// convolution's own (no multiplications by inserted zeros), so for k = s (U-Net up-sampling) it is
// a 1x1 convolution; the direct kernel stays for what the identity does not cover (groups,
// dilations, unequal strides, output_padding past the phases' extent, runtime weights).
#ifndef TUNEFARM_COMPILER_MODEL_CONV_TRANSPOSE_AS_CONV_H_
#define TUNEFARM_COMPILER_MODEL_CONV_TRANSPOSE_AS_CONV_H_

#include "compiler/graph/graph.h"
#include "tunefarm/runtime/result.h"

namespace tunefarm::compiler {

// Returns the number of ConvTranspose nodes rewritten. Precondition: InferShapes ran (and
// FoldConstants, for weights computed from constants).
Result<int> ConvTransposeAsConv(graph::Graph* g);

}  // namespace tunefarm::compiler

#endif  // TUNEFARM_COMPILER_MODEL_CONV_TRANSPOSE_AS_CONV_H_
