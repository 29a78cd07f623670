// RecognizeGelu: the chain exporters before ONNX opset 20 write for GELU,
//   y = x * (Erf(x / sqrt(2)) + 1) * 0.5      (Div by sqrt(2) or Mul by 1/sqrt(2); the 0.5 on
//                                              either product, operands in either order)
// becomes one Gelu node (the opset-20 operator, erf form), so it is one kernel and
// FuseEpilogues can fold it into the dense layer or convolution before it (transformers' FFN).
// Applies only when the chain's intermediate values feed nothing else; leaves the rest unchanged.
#ifndef TUNEFARM_COMPILER_MODEL_PASSES_RECOGNIZE_GELU_H_
#define TUNEFARM_COMPILER_MODEL_PASSES_RECOGNIZE_GELU_H_

#include "compiler/graph/graph.h"

namespace tunefarm::graph {

// Returns the number of chains replaced. Precondition: InferShapes ran (constants are known).
int RecognizeGelu(Graph* g);

}  // namespace tunefarm::graph

#endif  // TUNEFARM_COMPILER_MODEL_PASSES_RECOGNIZE_GELU_H_
