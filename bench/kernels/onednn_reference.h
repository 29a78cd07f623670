// oneDNN's fp32 (or int8) convolution / inner product for the same workload: the reference the kernel
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
  // The int8 form of a conv or dense workload, as ONNX Runtime's int8 kernels compute it: uint8
  // activations, int8 weights, an int32 bias, the output requantized to uint8 (an output scale);
  // format_tag::any, so oneDNN picks its int8 layouts (vpdpbusd, AMX or vpmaddubsw kernels).
  static std::unique_ptr<OneDnnPrimitive> CreateInt8(const compiler::Workload& w);
};

void SetOneDnnThreads(int threads);

}  // namespace tunefarm::bench

#endif  // TUNEFARM_BENCH_KERNELS_ONEDNN_REFERENCE_H_
