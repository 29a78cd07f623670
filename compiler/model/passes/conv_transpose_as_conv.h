// ConvTransposeAsConv: a 2-D transposed convolution with constant weights becomes a convolution
// the tuner sees (a conv2d task with its templates, config space and fallback on every target),
// followed by DepthToSpace and, where the padding crops, a Slice:
//
//   ConvTranspose(x, W[C, O/G, k, k], stride s, groups G, pads p)
//     = Slice(DepthToSpace_s,CRD(Conv(x, V[O*s*s, C/G, K, K], pads K-1, groups G)), p, p + out),
//   K = ceil(k / s)
//
// Tap t lands t past its input position: in output phase r = t % s, t / s steps of the stride-s
// grid further. So phase r at q*s + r reads x[q - e] * W[t] over the taps with t = e*s + r: a
// plain correlation with those taps flipped. V holds, per output channel and
// phase, the flipped taps (zero where none lands), CRD-ordered (a channel's phases adjacent) so
// each group's channels stay contiguous and DepthToSpace interleaves the phases; the bias repeats
// per phase and fuses as the conv's epilogue. The arithmetic is the transposed convolution's own
// (no multiplications by inserted zeros), so for k = s (U-Net up-sampling) it is a 1x1
// convolution. The direct kernel stays for what the identity does not cover (dilations, whose
// phases would be mostly zeros; unequal strides; output_padding past the phases' extent; runtime
// weights).
#ifndef TUNEFARM_COMPILER_MODEL_PASSES_CONV_TRANSPOSE_AS_CONV_H_
#define TUNEFARM_COMPILER_MODEL_PASSES_CONV_TRANSPOSE_AS_CONV_H_

#include "compiler/graph/graph.h"
#include "tunefarm/runtime/result.h"

namespace tunefarm::graph {

// Returns the number of ConvTranspose nodes rewritten. Precondition: InferShapes ran (and
// FoldConstants, for weights computed from constants).
Result<int> ConvTransposeAsConv(graph::Graph* g);

}  // namespace tunefarm::graph

#endif  // TUNEFARM_COMPILER_MODEL_PASSES_CONV_TRANSPOSE_AS_CONV_H_
