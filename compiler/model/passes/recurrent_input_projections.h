// RecurrentInputProjections: the input projection of an LSTM, GRU or RNN with constant weights
// becomes a dense layer the tuner sees. Every time step's input is projected at once,
//   P_d = reshape(X, [T*B, I]) W_d^T + (Wb_d + Rb_d)   (GRU with linear_before_reset: Rb_h stays
//                                                       inside the reset gate, as ONNX says),
// as a Gemm (a dense task with its templates, config space and fallback on every target), and the
// recurrent node reads P_d reshaped to [T, B, G*H] as an extra input (index 8 + d) instead of
// projecting in its own kernel. The recurrent product H_{t-1} R^T stays in each step's kernel,
// fused with the gates: at the batch sizes recurrent models run (a matrix-vector product per step)
// it is memory-bound, and a separate kernel would write and reread it every step.
// Applies to layout 0 (what exporters write) with constant W and B; others keep the in-kernel
// projection.
#ifndef TUNEFARM_COMPILER_MODEL_PASSES_RECURRENT_INPUT_PROJECTIONS_H_
#define TUNEFARM_COMPILER_MODEL_PASSES_RECURRENT_INPUT_PROJECTIONS_H_

#include "compiler/graph/graph.h"
#include "tunefarm/runtime/result.h"

namespace tunefarm::graph {

// Returns the number of recurrent nodes rewritten. Precondition: InferShapes and FoldConstants ran.
Result<int> RecurrentInputProjections(graph::Graph* g);

}  // namespace tunefarm::graph

#endif  // TUNEFARM_COMPILER_MODEL_PASSES_RECURRENT_INPUT_PROJECTIONS_H_
