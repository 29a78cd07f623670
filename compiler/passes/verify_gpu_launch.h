// VerifyGpuLaunch: whether a bound GPU kernel (BindGpuThreads) can launch on the target, checked
// before anything is measured. Fills launch->shared_bytes and local_bytes from the allocations.
//
// Checked against Target::gpu (GpuLimits): threads per block and per dimension (x, y <= 1024,
// z <= 64), blocks per dimension (y, z <= 65535), static shared memory per block, local arrays
// per thread (they must fit the registers a thread may have: a register tile that spills to local
// memory is never a config worth measuring) and the block's share of the register file at one
// register per local element. The exact register count comes later, from ptxas or the driver.
// Every violation is an InvalidArgument naming the limit, the kernel's figure and the target's.
#ifndef TUNEFARM_COMPILER_PASSES_VERIFY_GPU_LAUNCH_H_
#define TUNEFARM_COMPILER_PASSES_VERIFY_GPU_LAUNCH_H_

#include "compiler/passes/gpu_launch.h"
#include "tunefarm/compiler/target.h"
#include "tunefarm/runtime/result.h"

namespace tunefarm::passes {

Status VerifyGpuLaunch(const ir::Stmt& s, const compiler::Target& target, GpuLaunch* launch);

}  // namespace tunefarm::passes

#endif  // TUNEFARM_COMPILER_PASSES_VERIFY_GPU_LAUNCH_H_
