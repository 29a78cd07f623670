#include "tunefarm/runtime/thread_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <set>
#include <thread>
#include <vector>

#if defined(__linux__)
#include <sched.h>

#include <cstdlib>
#endif

namespace tunefarm::runtime {
namespace {

struct Record {
  std::vector<std::atomic<int>> hits;
  Mutex mu;
  std::set<std::thread::id> threads GUARDED_BY(mu);
  explicit Record(size_t n) : hits(n) {}
  std::set<std::thread::id> Threads() EXCLUDES(mu) {
    MutexLock lock(&mu);
    return threads;
  }
};

int32_t Body(int64_t begin, int64_t end, void* closure) {
  auto* r = static_cast<Record*>(closure);
  {
    MutexLock lock(&r->mu);
    r->threads.insert(std::this_thread::get_id());
  }
  for (int64_t i = begin; i < end; ++i) r->hits[size_t(i)]++;
  return 0;
}

TEST(ThreadPool, EveryIterationRunsOnce) {
  for (int threads : {1, 2, 3, 4}) {
    ThreadPool pool(threads);
    for (int64_t n : {1, 2, 7, 100}) {
      Record r{size_t(n)};
      ASSERT_EQ(pool.ParallelFor(n, &Body, &r), 0);
      for (auto& h : r.hits) EXPECT_EQ(h.load(), 1);
    }
  }
}

TEST(ThreadPool, OneThreadRunsOnTheCaller) {
  ThreadPool pool(1);
  Record r(64);
  ASSERT_EQ(pool.ParallelFor(64, &Body, &r), 0);
  const std::set<std::thread::id> threads = r.Threads();
  ASSERT_EQ(threads.size(), 1u);
  EXPECT_EQ(*threads.begin(), std::this_thread::get_id());
}

TEST(ThreadPool, UsesSeveralThreads) {
  ThreadPool pool(2);
  Record r(2);
  ASSERT_EQ(pool.ParallelFor(2, &Body, &r), 0);
  EXPECT_EQ(r.Threads().size(), 2u);
}

int32_t Count(int64_t begin, int64_t end, void* closure) {
  static_cast<std::atomic<int64_t>*>(closure)->fetch_add(end - begin);
  return 0;
}

int32_t SlowUnlessFirst(int64_t begin, int64_t end, void* closure) {
  if (begin > 0) std::this_thread::sleep_for(std::chrono::microseconds(3 * ThreadPool::kCallerSpinMicros));
  return Count(begin, end, closure);
}

// Workers and the caller meet through spinning atomics, and sleep after spinning a while:
// regions back to back (both spin) and regions spaced past the spin (both sleep, each woken by the
// other) all run every iteration exactly once.
TEST(ThreadPool, RegionsBackToBackAndAfterEveryoneSleptRunEveryIterationOnce) {
  for (int threads : {2, 3}) {
    ThreadPool pool(threads);
    std::atomic<int64_t> iterations{0};
    int64_t expected = 0;
    for (int i = 0; i < 20000; ++i) {
      ASSERT_EQ(pool.ParallelFor(7, &Count, &iterations), 0);
      expected += 7;
    }
    for (int i = 0; i < 20; ++i) {
      std::this_thread::sleep_for(std::chrono::microseconds(3 * ThreadPool::kWorkerSpinMicros));
      ASSERT_EQ(pool.ParallelFor(5, &Count, &iterations), 0);
      expected += 5;
    }
    // A worker's chunk longer than the caller spins: the caller sleeps and the last worker wakes it.
    for (int i = 0; i < 20; ++i) {
      ASSERT_EQ(pool.ParallelFor(threads, &SlowUnlessFirst, &iterations), 0);
      expected += threads;
    }
    EXPECT_EQ(iterations.load(), expected) << threads << " threads";
  }
}

int32_t Failing(int64_t begin, int64_t, void*) { return begin == 0 ? 0 : 7; }

TEST(ThreadPool, ReportsBodyErrors) {
  ThreadPool pool(2);
  EXPECT_EQ(pool.ParallelFor(4, &Failing, nullptr), 7);
}

TEST(ThreadPool, GlobalPoolSize) {
  TunefarmSetNumThreads(3);
  EXPECT_EQ(TunefarmGetNumThreads(), 3);
  TunefarmSetNumThreads(1);
  EXPECT_EQ(TunefarmGetNumThreads(), 1);
}

#if defined(__linux__)
// How many CPUs each participant may run on, by participant (the begin of its chunk).
int32_t RecordAllowedCpus(int64_t begin, int64_t end, void* closure) {
  auto* counts = static_cast<std::vector<std::atomic<int>>*>(closure);
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return 1;
  for (int64_t i = begin; i < end; ++i) (*counts)[size_t(i)] = CPU_COUNT(&set);
  return 0;
}

// TUNEFARM_BIND_THREADS=1: every participant, the caller included, runs on one CPU of its own.
TEST(ThreadPool, BindThreadsPinsEachParticipantToOneCpu) {
  cpu_set_t before;
  CPU_ZERO(&before);
  ASSERT_EQ(sched_getaffinity(0, sizeof(before), &before), 0);
  const int threads = 2;
  if (CPU_COUNT(&before) < threads) GTEST_SKIP() << "this machine lets the process use one CPU";
  ASSERT_EQ(setenv("TUNEFARM_BIND_THREADS", "1", 1), 0);
  std::vector<std::atomic<int>> counts(threads);
  {
    // Run on a thread of our own: binding the caller must not pin the test's main thread.
    std::thread caller([&] {
      ThreadPool pool(threads);
      EXPECT_EQ(pool.ParallelFor(threads, RecordAllowedCpus, &counts), 0);
    });
    caller.join();
  }
  unsetenv("TUNEFARM_BIND_THREADS");
  for (int i = 0; i < threads; ++i) EXPECT_EQ(counts[size_t(i)].load(), 1) << "participant " << i;
  // Without the variable nobody is pinned.
  ThreadPool free_pool(threads);
  EXPECT_EQ(free_pool.ParallelFor(threads, RecordAllowedCpus, &counts), 0);
  for (int i = 0; i < threads; ++i) EXPECT_EQ(counts[size_t(i)].load(), CPU_COUNT(&before)) << "participant " << i;
}
#endif

}  // namespace
}  // namespace tunefarm::runtime
