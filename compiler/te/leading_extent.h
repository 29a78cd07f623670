// InferLeadingExtent: which stages of a kernel follow a symbolic size through dimension 0, given
// which arguments do (te::LeadingExtent, schedule.h; docs/dynamic_shapes.md).
//
// A stage follows when its definition reads every following tensor at the stage's own position:
// the index at the tensor's following axis is one axis of the stage (the same one for every such
// read), or that clamped into the tensor (a template rounding rows up to whole tiles reads
// min(i, rows - 1)). Then slice r of the stage along that axis depends on slice r of its inputs
// only, and a run at size S that computes the slices below scale x S alone gives exactly what a run
// at the maximum would there. Everything else that reads a following tensor -- a reduction over
// the size, a shifted or strided row, two inputs of different scales, fewer slices than the tensor
// it reads -- cannot keep the size symbolic, and the error names the stage and the tensor.
#ifndef TUNEFARM_COMPILER_TE_LEADING_EXTENT_H_
#define TUNEFARM_COMPILER_TE_LEADING_EXTENT_H_

#include <map>

#include "compiler/te/schedule.h"
#include "tunefarm/runtime/result.h"

namespace tunefarm::te {

// `leading.follows` holds the arguments that follow the size on entry (through axis 0); on success
// the following stages are added and the schedule holds it (Schedule::set_leading_extent).
Status InferLeadingExtent(Schedule* schedule, LeadingExtent leading);

}  // namespace tunefarm::te

#endif  // TUNEFARM_COMPILER_TE_LEADING_EXTENT_H_
