// FollowSymbolicDim: the last lowering step for a model compiled over a range of sizes
// (--input-shape NAME:1..8x..., docs/dynamic_shapes.md). The plan's tensors and kernels are those of
// the range's maximum; this finds, in execution order, every tensor whose dimension 0 follows the
// size and every kernel over one, and makes those kernels compute only the run's rows:
//  - a kernel that reads a following tensor gets the size tensor as its last argument, and
//    te::InferLeadingExtent proves each of its stages row-independent (else the error names the
//    kernel and its node) and bounds their loops by the size at run time;
//  - its outputs follow at the scale their stages do (ArtifactTensor::leading_scale);
//  - a view follows its base when it keeps the base's rows leading (its dimension 0 a multiple of
//    the maximum), and is refused when it moves the size elsewhere.
// Nothing happens to a plan without a symbolic dimension.
#ifndef TUNEFARM_COMPILER_MODEL_LOWERING_FOLLOW_SYMBOLIC_DIM_H_
#define TUNEFARM_COMPILER_MODEL_LOWERING_FOLLOW_SYMBOLIC_DIM_H_

#include "compiler/operators/model_plan.h"

namespace tunefarm::lowering {

Status FollowSymbolicDim(compiler::ModelPlan* plan);

}  // namespace tunefarm::lowering

#endif  // TUNEFARM_COMPILER_MODEL_LOWERING_FOLLOW_SYMBOLIC_DIM_H_
