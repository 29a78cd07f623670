// The benchmark workloads (the project's anchors, bench/RESULTS.md): ResNet-18's 12 tuning tasks and the
// MobileNetV2 depthwise and 1x1 convolutions (batch 1, fp32).
#ifndef TUNEFARM_BENCH_KERNELS_WORKLOADS_H_
#define TUNEFARM_BENCH_KERNELS_WORKLOADS_H_

#include <string>
#include <vector>

#include "tunefarm/compiler/workload.h"

namespace tunefarm::bench {

struct BenchWorkload {
  std::string label;  // "resnet18.t2", "mobilenet_v2.dw144s2"
  compiler::Workload workload;
  bool in_resnet18_conv_sum;  // ANCHORS' "sum of the 11" ResNet-18 conv tasks
};

std::vector<BenchWorkload> BenchWorkloads();

}  // namespace tunefarm::bench

#endif  // TUNEFARM_BENCH_KERNELS_WORKLOADS_H_
