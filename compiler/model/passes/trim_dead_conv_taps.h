// TrimDeadConvTaps: kernel taps of a convolution that read only padding, for every output
// position, are dropped, with the padding they stood in. Dilated convolutions on small feature
// maps are where this happens: DeepLabV3's ASPP runs 3x3 convolutions with dilations 12, 24 and 36
// on a 14x14 map, where the outer taps of the last two never reach the image, so they are 1x1
// convolutions (9x fewer FLOPs and a 1x1 task) computing the same values.
//
// Per spatial axis, with input extent H, stride s, dilation d and begin pad p, tap j reads
// o*s + j*d - p for the outputs o: it is dead when that is outside [0, H) for every o. The live
// range [j0, j1] becomes the kernel and the pads shrink by j0*d and (k-1-j1)*d, never below zero
// (the output extent is unchanged). Applies to 2-D Conv nodes with constant weights.
#ifndef TUNEFARM_COMPILER_MODEL_PASSES_TRIM_DEAD_CONV_TAPS_H_
#define TUNEFARM_COMPILER_MODEL_PASSES_TRIM_DEAD_CONV_TAPS_H_

#include "compiler/graph/graph.h"
#include "tunefarm/runtime/result.h"

namespace tunefarm::graph {

// Returns the number of convolutions trimmed. Precondition: InferShapes ran (pads canonical).
Result<int> TrimDeadConvTaps(graph::Graph* g);

}  // namespace tunefarm::graph

#endif  // TUNEFARM_COMPILER_MODEL_PASSES_TRIM_DEAD_CONV_TAPS_H_
