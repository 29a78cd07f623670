// EmulateGpuOnHost: a bound GPU kernel (BindGpuThreads) as a CPU loop nest with the same results,
// so GPU schedules are checked against references on machines without a GPU.
//
// Blocks run one after another. Within a block the program is cut at its barriers: every stretch
// between two barriers runs for all threads (loops over threadIdx z, y, x) before the next one
// starts, which is exactly what a barrier guarantees on the GPU. Loops, branches and lets around a
// barrier are the same for every thread (BindGpuThreads checked that) and stay outside the thread
// loops; a thread's local array that lives across a barrier gets one copy per thread; shared
// arrays become one per block. A missing barrier, a fetch that does not cover what its readers
// need or a race between threads shows up as a wrong result, as it would on the GPU.
#ifndef TUNEFARM_COMPILER_PASSES_EMULATE_GPU_ON_HOST_H_
#define TUNEFARM_COMPILER_PASSES_EMULATE_GPU_ON_HOST_H_

#include "compiler/passes/gpu_launch.h"

namespace tunefarm::passes {

ir::Stmt EmulateGpuOnHost(const ir::Stmt& kernel, const GpuIndexVars& vars, const GpuLaunch& launch);

}  // namespace tunefarm::passes

#endif  // TUNEFARM_COMPILER_PASSES_EMULATE_GPU_ON_HOST_H_
