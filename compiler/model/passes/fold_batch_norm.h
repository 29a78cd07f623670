// FoldBatchNorm: Conv (constant weights) -> BatchNormalization (inference, constant statistics)
// becomes one Conv with scaled weights and a bias:
//   W'[k] = W[k] * s[k],  B'[k] = (B[k] - mean[k]) * s[k] + beta[k],  s = gamma / sqrt(var + eps).
// Applies only when the conv's output feeds nothing but the batch norm; the batch norm's output
// value is kept (its consumers and graph outputs are untouched). Leaves other graphs unchanged.
#ifndef TUNEFARM_COMPILER_MODEL_PASSES_FOLD_BATCH_NORM_H_
#define TUNEFARM_COMPILER_MODEL_PASSES_FOLD_BATCH_NORM_H_

#include "compiler/graph/graph.h"

namespace tunefarm::graph {

// Returns the number of batch norms folded. Precondition: InferShapes ran.
int FoldBatchNorm(Graph* g);

}  // namespace tunefarm::graph

#endif  // TUNEFARM_COMPILER_MODEL_PASSES_FOLD_BATCH_NORM_H_
