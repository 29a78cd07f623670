/* The binary interface of a compiled tunefarm kernel. Plain C so that any host (the graph executor,
 * rpc_server on a board, a user's own C program) can call kernels from a shared library.
 *
 * For each kernel NAME a module exports:
 *   int32_t NAME(void* const* args);      args[i] points at buffer i (order: see metadata); returns 0
 *   const char NAME__metadata[];          JSON: buffers (name, shape, dtype, role), flops, workload
 * and every module holds one writable slot:
 *   TunefarmParallelForFn __tunefarm_parallel_for;
 * which the loader sets before the first call (TunefarmBindRuntime). Parallel loops in the kernel call
 * through it; a module whose slot is null runs its parallel loops serially on the calling thread.
 */
#ifndef TUNEFARM_RUNTIME_KERNEL_ABI_H_
#define TUNEFARM_RUNTIME_KERNEL_ABI_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Runs iterations [begin, end) of a parallel loop; `closure` holds the captured variables. */
typedef int32_t (*TunefarmParallelBody)(int64_t begin, int64_t end, void* closure);
/* Runs body over [0, n) split into contiguous chunks, one per worker thread; returns the first
 * non-zero body result, else 0. */
typedef int32_t (*TunefarmParallelForFn)(int64_t n, TunefarmParallelBody body, void* closure);
typedef int32_t (*TunefarmKernelFn)(void* const* args);

#define TUNEFARM_PARALLEL_SLOT "__tunefarm_parallel_for"
#define TUNEFARM_METADATA_SUFFIX "__metadata"

/* The runtime's implementation of the parallel-for slot; uses the process-wide thread pool. */
int32_t TunefarmParallelFor(int64_t n, TunefarmParallelBody body, void* closure);
/* Sets the process-wide pool size. 1 = every parallel loop runs on the caller, no threads. */
void TunefarmSetNumThreads(int32_t num_threads);
int32_t TunefarmGetNumThreads(void);

#ifdef __cplusplus
}
#endif

#endif /* TUNEFARM_RUNTIME_KERNEL_ABI_H_ */
