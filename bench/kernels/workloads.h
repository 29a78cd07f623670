// The benchmark workloads (the project's anchors, bench/RESULTS.md): ResNet-18's 12 tuning tasks and the
// MobileNetV2 depthwise and 1x1 convolutions (batch 1, fp32); and the int8 set.
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
  int resnet50_count = 0;     // how many of ResNet-50's convolutions have this shape
};

std::vector<BenchWorkload> BenchWorkloads();
// The int8 benchmark (issue 49): ResNet-50's distinct convolutions (with their counts, for the
// summed ResNet-50 figure), ResNet-18's, MobileNetV2's and BERT-base's dense projections, as
// uint8-activation workloads.
std::vector<BenchWorkload> Int8BenchWorkloads();

}  // namespace tunefarm::bench

#endif  // TUNEFARM_BENCH_KERNELS_WORKLOADS_H_
