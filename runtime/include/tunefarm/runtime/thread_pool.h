// ThreadPool: runs the parallel loops of compiled kernels.
//
// Contract: a pool of size N runs ParallelFor on the calling thread plus N-1 workers; each of the
// N participants gets one contiguous chunk of [0, n). Size 1 starts no thread at all, so a
// single-threaded measurement is exactly single-threaded. ParallelFor calls are serialized by the
// pool (a kernel's parallel loop is never nested in another's in generated code; a nested call runs
// serially on its caller).
//
// Cost: a model runs its kernels back to back, so a region must cost little more than its work
// (bench/threads/bench_threads.cc measures the round trip of an empty one). Dispatch and completion
// are atomics the participants spin on, with a pause: a worker for up to kWorkerSpinMicros between
// regions (a model's kernels without a parallel loop, its layout changes, run in that gap without
// waking anyone), the caller for up to kCallerSpinMicros for the others' chunks. Only a participant
// that waited longer sleeps on a condition variable, and only then does the other side pay a
// wake-up. Nothing is allocated per region. With TUNEFARM_BIND_THREADS=1 each participant is
// pinned to one of the CPUs the process may use (the caller from its first region on).
//
// Thread safety: all methods may be called from any thread.
#ifndef TUNEFARM_RUNTIME_THREAD_POOL_H_
#define TUNEFARM_RUNTIME_THREAD_POOL_H_

#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

#include "tunefarm/runtime/kernel_abi.h"
#include "tunefarm/runtime/mutex.h"

namespace tunefarm::runtime {

class ThreadPool {
 public:
  // How long a participant spins for the other side before it sleeps.
  static constexpr int kWorkerSpinMicros = 1000;
  static constexpr int kCallerSpinMicros = 100;

  explicit ThreadPool(int num_threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int num_threads() const { return num_threads_; }
  int32_t ParallelFor(int64_t n, TunefarmParallelBody body, void* closure);

  // The process-wide pool used by TunefarmParallelFor (created with 1 thread on first use).
  static ThreadPool& Global();
  static void SetGlobalThreads(int num_threads);

 private:
  void WorkerLoop(int worker_index);
  void RunChunk(int participant);

  const int num_threads_;
  const bool bind_threads_;  // TUNEFARM_BIND_THREADS=1 (thread_pool.cc)
  std::vector<std::thread> workers_;
  Mutex run_mutex_;  // serializes ParallelFor calls
  bool caller_bound_ GUARDED_BY(run_mutex_) = false;

  // A job is published by bumping generation_ after writing its fields; a worker that sees the new
  // generation reads them. pending_ counts the workers still running it.
  std::atomic<uint64_t> generation_{0};
  std::atomic<int> pending_{0};
  std::atomic<bool> stopping_{false};
  // Sleepers: workers blocked on wake_, and the caller blocked on done_. Each side announces itself
  // (under mu_) before it sleeps and re-checks the condition, and the other side reads the count
  // after its own store (both sequentially consistent), so no wake-up is lost. mu_ guards no field:
  // what the sleepers wait for is atomics, and mu_ only orders a sleeper's check against a wake-up.
  Mutex mu_;
  CondVar wake_;
  CondVar done_;
  std::atomic<int> sleeping_workers_{0};
  std::atomic<bool> caller_sleeping_{false};

  // The current job; written (under run_mutex_) before generation_ is bumped, read by workers after
  // they see it: ordered by generation_, not by a lock, so not GUARDED_BY.
  int64_t job_n_ = 0;
  TunefarmParallelBody job_body_ = nullptr;
  void* job_closure_ = nullptr;
  std::atomic<int32_t> job_error_{0};
};

}  // namespace tunefarm::runtime

#endif  // TUNEFARM_RUNTIME_THREAD_POOL_H_
