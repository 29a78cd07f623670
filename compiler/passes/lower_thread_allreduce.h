// LowerThreadAllReduce: cross-thread reductions become warp shuffles and, across warps, one
// exchange through shared memory.
//
// schedule_ops emits `let total = ThreadAllReduce(value, x)` for a reduce loop bound to
// threadIdx.x (gpu_intrinsics.h). This pass runs after BindGpuThreads, when the block shape is
// known; for T = blockDim.x threads (a power of two):
//   r = value; r = r (+) shfl_xor(r, m) for m = min(T, 32)/2 ... 1
//     -- the butterfly leaves every lane with its group's total (a group is T aligned lanes);
//   T > 32: lane 0 of each warp writes r to shared[row][warp]; barrier; every lane reads
//     shared[row][lane % warps] and butterflies over the warps; barrier (the buffer is free again).
// Every thread executes the same instructions (only lane 0's store is conditional), so the host
// emulation can split the shuffles like barriers and a partial warp needs no special mask.
//
// Errors (InvalidArgument): a reduction along threadIdx.y or .z, or over a block dimension that
// is not a power of two.
#ifndef TUNEFARM_COMPILER_PASSES_LOWER_THREAD_ALLREDUCE_H_
#define TUNEFARM_COMPILER_PASSES_LOWER_THREAD_ALLREDUCE_H_

#include "compiler/passes/gpu_launch.h"
#include "tunefarm/runtime/result.h"

namespace tunefarm::passes {

Result<ir::Stmt> LowerThreadAllReduce(const ir::Stmt& kernel, const GpuIndexVars& vars, const GpuLaunch& launch);

}  // namespace tunefarm::passes

#endif  // TUNEFARM_COMPILER_PASSES_LOWER_THREAD_ALLREDUCE_H_
