// The cost model's features of a config: the knob features (search.h's ConfigFeatures) followed
// by the loop-nest features of the kernel the config builds (tunefarm/compiler/kernel.h's
// LoopNestFeatures). kFeatureVersion names the combined layout (docs/tuner.md lists it). Features are
// computed from the records in every run and never stored, so one cost model never mixes layouts.
//
// TaskFeatures caches by config index and computes misses on `jobs` threads (a loop-nest feature
// costs a partial lowering, ~0.3-1 ms). Thread safety: one caller at a time.
#ifndef TUNEFARM_TUNER_FEATURES_H_
#define TUNEFARM_TUNER_FEATURES_H_

#include <unordered_map>
#include <vector>

#include "tunefarm/compiler/kernel.h"

namespace tunefarm::tuner {

inline constexpr int kFeatureVersion = 3;  // 1: knob features only; 2: + loop-nest v1; 3: + GPU features

class TaskFeatures {
 public:
  TaskFeatures(compiler::Workload workload, compiler::Target target, compiler::ConfigSpace space, int jobs = 2);
  // One row per config, all of Width() floats; an index outside the space gives a row of zeros.
  std::vector<std::vector<float>> Get(const std::vector<int64_t>& configs);
  size_t Width() const { return knob_width_ + size_t(compiler::LoopNestFeatureCount()); }
  const compiler::ConfigSpace& space() const { return space_; }

 private:
  std::vector<float> Compute(int64_t config) const;
  compiler::Workload workload_;
  compiler::Target target_;
  compiler::ConfigSpace space_;
  int jobs_;
  size_t knob_width_ = 0;
  std::unordered_map<int64_t, std::vector<float>> cache_;
};

}  // namespace tunefarm::tuner

#endif  // TUNEFARM_TUNER_FEATURES_H_
