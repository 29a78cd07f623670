// The timing protocol of bench/ (and, later, of rpc_server): one warm-up call, then `repeat`
// rounds of `number` calls, `number` grown until a round lasts at least min_round_ms; returns
// the best round's mean seconds per call (minimum over rounds: the least disturbed by the other
// processes that share these machines).
#ifndef TUNEFARM_BENCH_KERNELS_TIMER_H_
#define TUNEFARM_BENCH_KERNELS_TIMER_H_

#include <functional>

namespace tunefarm::bench {

struct TimingOptions {
  int repeat = 5;
  double min_round_ms = 20.0;
};

double BestSecondsPerCall(const std::function<void()>& fn, const TimingOptions& options);

}  // namespace tunefarm::bench

#endif  // TUNEFARM_BENCH_KERNELS_TIMER_H_
