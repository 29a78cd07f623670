// ThreadPool: runs the parallel loops of compiled kernels.
//
// Contract: a pool of size N runs ParallelFor on the calling thread plus N-1 workers; each of the
// N participants gets one contiguous chunk of [0, n). Size 1 starts no thread at all, so a
// single-threaded measurement is exactly single-threaded. ParallelFor calls are serialized by the
// pool (a kernel's parallel loop is never nested in another's in generated code; a nested call runs
// serially on its caller).
//
// Thread safety: all methods may be called from any thread.
#ifndef TUNEFARM_RUNTIME_THREAD_POOL_H_
#define TUNEFARM_RUNTIME_THREAD_POOL_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#include "tunefarm/runtime/kernel_abi.h"

namespace tunefarm::runtime {

class ThreadPool {
 public:
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
  std::vector<std::thread> workers_;
  std::mutex run_mutex_;  // serializes ParallelFor calls

  std::mutex mu_;
  std::condition_variable wake_;
  std::condition_variable done_;
  uint64_t generation_ = 0;  // guarded by mu_; bumped per job
  bool stopping_ = false;    // guarded by mu_
  int pending_ = 0;          // guarded by mu_; workers still running the current job
  std::atomic<uint64_t> published_generation_{0};  // for the spin-wait before sleeping

  // The current job; written before generation_ is bumped, read by workers after they see it.
  int64_t job_n_ = 0;
  TunefarmParallelBody job_body_ = nullptr;
  void* job_closure_ = nullptr;
  std::atomic<int32_t> job_error_{0};
};

}  // namespace tunefarm::runtime

#endif  // TUNEFARM_RUNTIME_THREAD_POOL_H_
