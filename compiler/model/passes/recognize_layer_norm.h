// RecognizeLayerNorm: the decomposed layer normalization exporters before opset 17 write,
//   m = ReduceMean(x, trailing axes)   d = x - m   v = ReduceMean(d ^ 2, same axes)
//   y = d / Sqrt(v + eps) [* gamma] [+ beta]
// becomes one LayerNormalization node (axis = the first reduced axis; gamma of ones when the
// chain has no Mul), one kernel instead of eight element-wise and reduction kernels (BERT at
// opset 13 has 25). The axes come from the attribute (opset < 18) or the constant input; gamma and
// beta must be constants broadcasting over the normalized axes. Applies only when the chain's
// intermediate values feed nothing else; leaves the rest unchanged.
#ifndef TUNEFARM_COMPILER_MODEL_PASSES_RECOGNIZE_LAYER_NORM_H_
#define TUNEFARM_COMPILER_MODEL_PASSES_RECOGNIZE_LAYER_NORM_H_

#include "compiler/graph/graph.h"

namespace tunefarm::graph {

// Returns the number of chains replaced. Precondition: InferShapes ran (shapes and constants known).
int RecognizeLayerNorm(Graph* g);

}  // namespace tunefarm::graph

#endif  // TUNEFARM_COMPILER_MODEL_PASSES_RECOGNIZE_LAYER_NORM_H_
