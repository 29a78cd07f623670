// oneDNN's fp32 convolution / inner product for the same workload: the reference the kernel
// bench compares against (format_tag::any, reorders done once outside the timing, so
// oneDNN is timed at its best).
#ifndef TUNEFARM_BENCH_KERNELS_ONEDNN_REFERENCE_H_
#define TUNEFARM_BENCH_KERNELS_ONEDNN_REFERENCE_H_

#include <memory>

#include "tunefarm/compiler/workload.h"

namespace tunefarm::bench {

class OneDnnPrimitive {
 public:
  virtual ~OneDnnPrimitive() = default;
  virtual void Run() = 0;
  static std::unique_ptr<OneDnnPrimitive> Create(const compiler::Workload& w);
};

void SetOneDnnThreads(int threads);

}  // namespace tunefarm::bench

#endif  // TUNEFARM_BENCH_KERNELS_ONEDNN_REFERENCE_H_
