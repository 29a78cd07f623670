#include "tunefarm/runtime/thread_pool.h"

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>

#if defined(__linux__)
#include <pthread.h>
#include <sched.h>
#endif

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace tunefarm::runtime {
namespace {

thread_local bool tls_inside_parallel = false;
Mutex g_pool_mutex;
std::unique_ptr<ThreadPool> g_pool GUARDED_BY(g_pool_mutex);
std::atomic<ThreadPool*> g_pool_fast{nullptr};  // g_pool's pointer, read without the mutex per region

// One spin step: tells the core this is a wait loop (the sibling hyperthread gets the pipeline, and
// leaving the loop costs no memory-order flush).
inline void Pause() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#elif defined(__aarch64__) || defined(__arm__)
  __asm__ __volatile__("yield");
#endif
}

// Spins until done() or `micros` passed; true when done() held.
template <typename Done>
bool SpinUntil(int micros, Done done) {
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + std::chrono::microseconds(micros);
  for (;;) {
    for (int i = 0; i < 64; ++i) {
      if (done()) return true;
      Pause();
    }
    if (Clock::now() >= deadline) return done();
  }
}

// TUNEFARM_BIND_THREADS=1: participant i runs on the i-th CPU the process may use (when it may
// use at least as many CPUs as the pool has participants), the caller included from its first
// region on. Off by default: pinning the caller changes a thread the embedding program owns.
bool BindThreadsRequested() {
  const char* v = std::getenv("TUNEFARM_BIND_THREADS");
  return v != nullptr && std::strcmp(v, "1") == 0;
}

// Pins the calling thread to the participant-th allowed CPU; false where the OS does not allow it
// or the process may use fewer CPUs.
bool BindToAllowedCpu(int participant, int participants) {
#if defined(__linux__)
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0 || CPU_COUNT(&allowed) < participants) return false;
  int seen = 0;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (!CPU_ISSET(cpu, &allowed)) continue;
    if (seen++ == participant) {
      cpu_set_t one;
      CPU_ZERO(&one);
      CPU_SET(cpu, &one);
      return pthread_setaffinity_np(pthread_self(), sizeof(one), &one) == 0;
    }
  }
#endif
  (void)participant;
  (void)participants;
  return false;
}

}  // namespace

ThreadPool::ThreadPool(int num_threads)
    : num_threads_(num_threads < 1 ? 1 : num_threads), bind_threads_(num_threads_ > 1 && BindThreadsRequested()) {
  for (int i = 1; i < num_threads_; ++i) workers_.emplace_back([this, i] { WorkerLoop(i); });
}

ThreadPool::~ThreadPool() {
  {
    MutexLock lock(&mu_);
    stopping_.store(true);
  }
  wake_.SignalAll();
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
  if (bind_threads_) BindToAllowedCpu(worker_index, num_threads_);
  uint64_t seen = 0;
  for (;;) {
    // Sequentially consistent loads: each side's store, then its load of the other's (see the header).
    auto published = [&] { return generation_.load() != seen || stopping_.load(); };
    if (!SpinUntil(kWorkerSpinMicros, published)) {
      MutexLock lock(&mu_);
      sleeping_workers_.fetch_add(1);
      while (!published()) wake_.Wait(&mu_);
      sleeping_workers_.fetch_sub(1);
    }
    if (stopping_.load()) return;
    seen = generation_.load();
    RunChunk(worker_index);
    if (pending_.fetch_sub(1) == 1 && caller_sleeping_.load()) {
      MutexLock lock(&mu_);  // the caller is inside Wait() or past its check
      done_.Signal();
    }
  }
}

int32_t ThreadPool::ParallelFor(int64_t n, TunefarmParallelBody body, void* closure) {
  if (n <= 0) return 0;
  if (num_threads_ == 1 || n == 1 || tls_inside_parallel) return body(0, n, closure);
  MutexLock run_lock(&run_mutex_);
  if (bind_threads_ && !caller_bound_) caller_bound_ = BindToAllowedCpu(0, num_threads_);
  job_n_ = n;
  job_body_ = body;
  job_closure_ = closure;
  job_error_.store(0, std::memory_order_relaxed);
  pending_.store(num_threads_ - 1, std::memory_order_relaxed);
  generation_.fetch_add(1);  // publishes the job (sequentially consistent: see sleeping_workers_)
  if (sleeping_workers_.load() > 0) {
    MutexLock lock(&mu_);
    wake_.SignalAll();
  }
  RunChunk(0);
  auto all_done = [&] { return pending_.load() == 0; };
  if (!SpinUntil(kCallerSpinMicros, all_done)) {
    MutexLock lock(&mu_);
    caller_sleeping_.store(true);
    while (!all_done()) done_.Wait(&mu_);
    caller_sleeping_.store(false);
  }
  return job_error_.load();
}

ThreadPool& ThreadPool::Global() {
  if (ThreadPool* pool = g_pool_fast.load(std::memory_order_acquire)) return *pool;
  MutexLock lock(&g_pool_mutex);
  if (!g_pool) {
    g_pool = std::make_unique<ThreadPool>(1);
    g_pool_fast.store(g_pool.get(), std::memory_order_release);
  }
  return *g_pool;
}

void ThreadPool::SetGlobalThreads(int num_threads) {
  MutexLock lock(&g_pool_mutex);
  if (g_pool && g_pool->num_threads() == num_threads) return;
  // As before, the pool is replaced between runs, never while a kernel runs in it.
  g_pool_fast.store(nullptr, std::memory_order_release);
  g_pool.reset();
  g_pool = std::make_unique<ThreadPool>(num_threads);
  g_pool_fast.store(g_pool.get(), std::memory_order_release);
}

}  // namespace tunefarm::runtime

extern "C" {
int32_t TunefarmParallelFor(int64_t n, TunefarmParallelBody body, void* closure) {
  return tunefarm::runtime::ThreadPool::Global().ParallelFor(n, body, closure);
}
void TunefarmSetNumThreads(int32_t num_threads) { tunefarm::runtime::ThreadPool::SetGlobalThreads(num_threads); }
int32_t TunefarmGetNumThreads(void) { return tunefarm::runtime::ThreadPool::Global().num_threads(); }
}
