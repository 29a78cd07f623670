#include "bench/kernels/timer.h"

#include <algorithm>
#include <chrono>
#include <limits>

namespace tunefarm::bench {

double BestSecondsPerCall(const std::function<void()>& fn, const TimingOptions& options) {
  using Clock = std::chrono::steady_clock;
  fn();  // warm-up: first-touch pages, caches
  int number = 1;
  for (;;) {
    auto start = Clock::now();
    for (int i = 0; i < number; ++i) fn();
    double ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    if (ms >= options.min_round_ms || number >= (1 << 20)) break;
    number = ms <= 0.01 ? number * 16 : std::max(number + 1, int(number * options.min_round_ms * 1.2 / ms));
  }
  double best = std::numeric_limits<double>::max();
  for (int r = 0; r < options.repeat; ++r) {
    auto start = Clock::now();
    for (int i = 0; i < number; ++i) fn();
    best = std::min(best, std::chrono::duration<double>(Clock::now() - start).count() / number);
  }
  return best;
}

}  // namespace tunefarm::bench
