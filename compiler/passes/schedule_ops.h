// ScheduleOps: turns a Schedule into one loop nest (the first step of lowering).
//
// Every root stage gets a nest over its whole domain, in producer-first order; every attached stage
// is emitted at the start of its consumer's loop body, for the region of the tensor the consumer
// reads below that loop (inferred from the consumer's affine accesses; a dimension read
// non-affinely falls back to the whole dimension). Non-divisible splits and regions that overhang
// a tensor's domain get `likely` guards, placed right inside the innermost loop they depend on.
// Reductions get their init nest right before the outermost reduction loop.
//
// Output: ProducerRealize for every intermediate tensor, ProducerStore/ProducerLoad for all
// accesses; StorageFlatten maps them to buffers afterwards.
#ifndef TUNEFARM_COMPILER_PASSES_SCHEDULE_OPS_H_
#define TUNEFARM_COMPILER_PASSES_SCHEDULE_OPS_H_

#include "compiler/te/schedule.h"

namespace tunefarm::passes {

ir::Stmt ScheduleOps(const te::Schedule& schedule);

}  // namespace tunefarm::passes

#endif  // TUNEFARM_COMPILER_PASSES_SCHEDULE_OPS_H_
