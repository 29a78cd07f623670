// BindGpuThreads: turns a GPU loop nest into one thread's program (the CUDA execution model).
//
// Every block loop (gpu_block_x/y/z) and thread loop (gpu_thread_x/y/z) is removed and its
// variable replaced by blockIdx/threadIdx of its dimension; the launch takes, per dimension, the
// largest extent bound to it. A thread loop shorter than its dimension (a cooperative fetch of a
// small tile) keeps its iterations with a guard `threadIdx < extent`.
//
// Errors (InvalidArgument, naming the loop): a block or thread loop of non-constant extent; a
// block loop inside a serial or thread loop (blocks must be the outermost loops); a block
// dimension bound twice (two root nests would need a grid-wide barrier: one kernel per schedule); a guard or a
// thread-dependent branch around a barrier (some threads of the block would never reach it); a
// kernel with no thread loop (one thread per block wastes the GPU; templates bind threads). A
// cross-thread reduction (gpu_intrinsics.h) counts as a barrier: every thread must reach it.
#ifndef TUNEFARM_COMPILER_PASSES_BIND_GPU_THREADS_H_
#define TUNEFARM_COMPILER_PASSES_BIND_GPU_THREADS_H_

#include "compiler/passes/gpu_launch.h"
#include "tunefarm/runtime/result.h"

namespace tunefarm::passes {

Result<ir::Stmt> BindGpuThreads(const ir::Stmt& s, const GpuIndexVars& vars, GpuLaunch* launch);

// True when s contains a Barrier.
bool ContainsBarrier(const ir::Stmt& s);

}  // namespace tunefarm::passes

#endif  // TUNEFARM_COMPILER_PASSES_BIND_GPU_THREADS_H_
