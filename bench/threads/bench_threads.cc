// bench_threads: what a parallel region costs the kernels, in the runtime's own thread pool
// (runtime/include/tunefarm/runtime/thread_pool.h) -- the round trip of an empty region (dispatch,
// every participant runs its chunk, the caller sees them all done), and the same around a region
// of real work, per thread count. Issue 34: a region must cost a few microseconds at 2 threads, or
// small kernels lose what their parallel loop gains.
//
//   bench_threads [--threads 2] [--regions 200000] [--rounds 5] [--json PATH]
//
// Each round times `regions` back-to-back regions (as a model's kernels run them) and reports the
// mean per region; the figures are the best and the median round. "work" regions spin each
// participant for `--work-us` microseconds, so their overhead is the time past that.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tunefarm/command_line/command_line.h"
#include "tunefarm/runtime/thread_pool.h"

namespace {

using Clock = std::chrono::steady_clock;

int32_t Empty(int64_t, int64_t, void*) { return 0; }

int32_t Spin(int64_t begin, int64_t end, void* closure) {
  const double us = *static_cast<const double*>(closure) * double(end - begin);
  const auto until = Clock::now() + std::chrono::duration<double, std::micro>(us);
  while (Clock::now() < until) {
  }
  return 0;
}

// An element-wise kernel's chunk (y = max(x, 0)), for the crossover: where splitting a small
// kernel over the threads starts to pay.
struct Relu {
  const float* x;
  float* y;
};
// Vectorized as wide as the machine allows, as the compiled kernels are.
#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target_clones("avx512f", "avx2", "default")))
#endif
int32_t
ReluChunk(int64_t begin, int64_t end, void* closure) {
  const Relu& r = *static_cast<const Relu*>(closure);
  for (int64_t i = begin; i < end; ++i) r.y[i] = r.x[i] > 0.0f ? r.x[i] : 0.0f;
  return 0;
}

struct Figures {
  double best_us = 0, median_us = 0;
};

Figures Time(tunefarm::runtime::ThreadPool& pool, int64_t regions, int rounds, int64_t n, TunefarmParallelBody body,
             void* closure) {
  std::vector<double> per_round;
  for (int64_t i = 0; i < 1000; ++i) pool.ParallelFor(n, body, closure);  // warm the workers
  for (int r = 0; r < rounds; ++r) {
    const auto t0 = Clock::now();
    for (int64_t i = 0; i < regions; ++i) pool.ParallelFor(n, body, closure);
    per_round.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count() / double(regions));
  }
  std::sort(per_round.begin(), per_round.end());
  return {per_round.front(), per_round[per_round.size() / 2]};
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"bench_threads: the cost of a parallel region in tunefarm's thread pool"};
  int threads = 2, rounds = 5;
  int64_t regions = 200000;
  double work_us = 5.0;
  std::string json_path;
  tunefarm::AddIntFlag(app, "--threads", &threads, 1, 1024, "the largest thread count (default 2)");
  tunefarm::AddIntFlag(app, "--regions", &regions, 1, int64_t(1) << 40, "regions per round (default 200000)");
  tunefarm::AddIntFlag(app, "--rounds", &rounds, 1, 1000, "rounds (default 5)");
  app.add_option("--work-us", work_us, "microseconds of work per participant in the work regions (default 5)");
  app.add_option("--json", json_path, "also write the figures there")->type_name("PATH");
  if (auto exit_code = tunefarm::ParseCommandLine(app, argc, argv)) return *exit_code;

  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  std::printf("%-8s %-22s %12s %12s\n", "threads", "region", "best us", "median us");
  for (int t = 1; t <= threads; ++t) {
    tunefarm::runtime::ThreadPool pool(t);
    const Figures empty = Time(pool, regions, rounds, t, Empty, nullptr);
    const Figures work = Time(pool, std::max<int64_t>(1, regions / 20), rounds, t, Spin, &work_us);
    std::printf("%-8d %-22s %12.3f %12.3f\n", t, "empty", empty.best_us, empty.median_us);
    char label[64];
    std::snprintf(label, sizeof(label), "%.1f us of work", work_us);
    std::printf("%-8d %-22s %12.3f %12.3f  (overhead %.3f us)\n", t, label, work.best_us, work.median_us,
                work.best_us - work_us);
    out.push_back({{"threads", t},
                   {"empty_best_us", empty.best_us},
                   {"empty_median_us", empty.median_us},
                   {"work_us", work_us},
                   {"work_best_us", work.best_us},
                   {"work_median_us", work.median_us}});
  }
  // The crossover: an element-wise kernel over n floats, chunked into 1024-element pieces, run
  // back to back on the same buffers (as a model's kernels pass activations on), on one thread
  // and on all of them. The smallest n where all threads win by more than 5% is the least work a
  // parallel loop needs (compute/generic_schedule.cc's kMinParallelWork).
  if (threads > 1) {
    tunefarm::runtime::ThreadPool one(1), all(threads);
    std::printf("\n%-12s %14s %14s %10s\n", "elements", "1 thread us", "all us", "speedup");
    nlohmann::ordered_json crossover = nlohmann::ordered_json::array();
    int64_t first_win = -1;
    for (int64_t n = 1024; n <= (int64_t(1) << 22); n *= 2) {
      std::vector<float> x(static_cast<size_t>(n), -0.5f), y(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; i += 3) x[size_t(i)] = 1.0f;
      Relu relu{x.data(), y.data()};
      auto body = [](int64_t begin, int64_t end, void* closure) {
        return ReluChunk(begin * 1024, end * 1024, closure);
      };
      const int64_t reps = std::max<int64_t>(20, (int64_t(1) << 26) / n / 8);
      const Figures f1 = Time(one, reps, rounds, n / 1024, body, &relu);
      const Figures fn = Time(all, reps, rounds, n / 1024, body, &relu);
      const double speedup = f1.best_us / fn.best_us;
      if (first_win < 0 && n >= 2 * 1024 * threads / 2 && speedup > 1.05) first_win = n;
      std::printf("%-12lld %14.3f %14.3f %9.2fx\n", static_cast<long long>(n), f1.best_us, fn.best_us, speedup);
      crossover.push_back({{"elements", n}, {"one_thread_us", f1.best_us}, {"all_threads_us", fn.best_us}});
    }
    std::printf("all %d threads first win at %lld elements\n", threads, static_cast<long long>(first_win));
    out.push_back({{"crossover", crossover}, {"first_win_elements", first_win}});
  }
  if (!json_path.empty()) std::ofstream(json_path) << out.dump(2) << "\n";
  return 0;
}
