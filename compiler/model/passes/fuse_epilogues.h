// FuseEpilogues: folds what follows a convolution or dense layer into it, so one kernel computes
// conv/dense + bias + residual add + activation (Relay's FuseOps for the patterns CNNs have).
//
// Walks each Conv and Gemm/MatMul-with-constant-weights node down its single-consumer chain:
//   Add(constant broadcast per output channel)  -> merged into the bias input
//   Add(non-constant tensor of the same shape)  -> the residual, input 3 (at most one)
//   Relu | Clip(constant bounds) | Gelu         -> the node's typed epilogue (Node::epilogue:
//   | PRelu(per-channel or one slope)              relu, clip with its bounds, gelu in either
//                                                  form, prelu with its slopes as input 4); ends
//                                                  the chain
// A value that is a graph output or has another reader ends the chain. The fused node takes over
// the last output value; the absorbed nodes are left dead for RemoveDeadNodes.
#ifndef TUNEFARM_COMPILER_MODEL_PASSES_FUSE_EPILOGUES_H_
#define TUNEFARM_COMPILER_MODEL_PASSES_FUSE_EPILOGUES_H_

#include "compiler/graph/graph.h"

namespace tunefarm::graph {

// Returns the number of nodes absorbed.
int FuseEpilogues(Graph* g);

}  // namespace tunefarm::graph

#endif  // TUNEFARM_COMPILER_MODEL_PASSES_FUSE_EPILOGUES_H_
