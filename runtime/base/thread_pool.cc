#include "tunefarm/runtime/thread_pool.h"

#include <memory>

namespace tunefarm::runtime {
namespace {
thread_local bool tls_inside_parallel = false;
std::mutex g_pool_mutex;
std::unique_ptr<ThreadPool> g_pool;  // guarded by g_pool_mutex
}  // namespace

ThreadPool::ThreadPool(int num_threads) : num_threads_(num_threads < 1 ? 1 : num_threads) {
  for (int i = 1; i < num_threads_; ++i) workers_.emplace_back([this, i] { WorkerLoop(i); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  for (auto& t : workers_) t.join();
}

void ThreadPool::RunChunk(int participant) {
  int64_t chunk = (job_n_ + num_threads_ - 1) / num_threads_;
  int64_t begin = participant * chunk;
  int64_t end = begin + chunk < job_n_ ? begin + chunk : job_n_;
  if (begin >= end) return;
  tls_inside_parallel = true;
  int32_t rc = job_body_(begin, end, job_closure_);
  tls_inside_parallel = false;
  if (rc != 0) {
    int32_t expected = 0;
    job_error_.compare_exchange_strong(expected, rc);
  }
}

void ThreadPool::WorkerLoop(int worker_index) {
  uint64_t seen = 0;
  for (;;) {
    // Spin briefly: kernels are launched back to back and a condvar wake costs tens of µs.
    for (int spin = 0; spin < 20000 && published_generation_.load(std::memory_order_acquire) == seen;
         ++spin) {
      std::this_thread::yield();
    }
    {
      std::unique_lock<std::mutex> lock(mu_);
      wake_.wait(lock, [&] { return stopping_ || generation_ != seen; });
      if (stopping_) return;
      seen = generation_;
    }
    RunChunk(worker_index);
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (--pending_ == 0) done_.notify_one();
    }
  }
}

int32_t ThreadPool::ParallelFor(int64_t n, TunefarmParallelBody body, void* closure) {
  if (n <= 0) return 0;
  if (num_threads_ == 1 || n == 1 || tls_inside_parallel) return body(0, n, closure);
  std::lock_guard<std::mutex> run_lock(run_mutex_);
  job_n_ = n;
  job_body_ = body;
  job_closure_ = closure;
  job_error_.store(0);
  {
    std::lock_guard<std::mutex> lock(mu_);
    pending_ = num_threads_ - 1;
    ++generation_;
    published_generation_.store(generation_, std::memory_order_release);
  }
  wake_.notify_all();
  RunChunk(0);
  std::unique_lock<std::mutex> lock(mu_);
  done_.wait(lock, [&] { return pending_ == 0; });
  return job_error_.load();
}

ThreadPool& ThreadPool::Global() {
  std::lock_guard<std::mutex> lock(g_pool_mutex);
  if (!g_pool) g_pool = std::make_unique<ThreadPool>(1);
  return *g_pool;
}

void ThreadPool::SetGlobalThreads(int num_threads) {
  std::lock_guard<std::mutex> lock(g_pool_mutex);
  if (g_pool && g_pool->num_threads() == num_threads) return;
  g_pool.reset();
  g_pool = std::make_unique<ThreadPool>(num_threads);
}

}  // namespace tunefarm::runtime

extern "C" {
int32_t TunefarmParallelFor(int64_t n, TunefarmParallelBody body, void* closure) {
  return tunefarm::runtime::ThreadPool::Global().ParallelFor(n, body, closure);
}
void TunefarmSetNumThreads(int32_t num_threads) {
  tunefarm::runtime::ThreadPool::SetGlobalThreads(num_threads);
}
int32_t TunefarmGetNumThreads(void) { return tunefarm::runtime::ThreadPool::Global().num_threads(); }
}
