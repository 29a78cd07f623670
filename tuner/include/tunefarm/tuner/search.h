// Search over one task's config space: the strategies `tunefarm tune --tuner` names.
//
// A SearchStrategy proposes batches of config indices never proposed before (so nothing is
// measured twice) and learns from the measured results: GFLOP/s per config, 0 for a failed one.
//   random  uniform over valid configs
//   grid    valid configs in index order
//   ga      genetic: tournament selection, knob-wise crossover, mutation
//   xgb     an XGBoost cost model (rank:pairwise by default, or reg:squarederror) over config
//           features, simulated annealing on the model's predictions to pick each batch, with
//           epsilon-greedy random exploration (AutoTVM's XGBTuner)
// Thread safety: none; one strategy per task.
#ifndef TUNEFARM_TUNER_SEARCH_H_
#define TUNEFARM_TUNER_SEARCH_H_

#include <functional>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "tunefarm/compiler/config_space.h"
#include "tunefarm/runtime/result.h"
#include "tunefarm/tuner/tuning_kinds.h"

namespace tunefarm::tuner {

class TaskFeatures;  // features.h

// Knob features of a config: per knob, log2 of each split factor, the choice index of reorders
// and annotations, the value of others. The cost model's full vector (features.h) appends the
// loop-nest features.
std::vector<float> ConfigFeatures(const compiler::ConfigSpace& space, const compiler::Config& config);

class SearchStrategy {
 public:
  virtual ~SearchStrategy() = default;
  // Up to n config indices not proposed before; fewer (or none) when the space is exhausted.
  virtual std::vector<int64_t> NextBatch(int n) = 0;
  // Results of measured configs (GFLOP/s; 0 for a failed trial).
  virtual void Update(const std::vector<int64_t>& configs, const std::vector<double>& gflops) = 0;
  // Configs the caller measures itself (the fallback baseline): never proposed; results come
  // through Update like any other.
  void Reserve(const std::vector<int64_t>& configs) { proposed_.insert(configs.begin(), configs.end()); }
  // Configs measured before this run (resume, transfer): never proposed, learned from.
  void MarkMeasured(const std::vector<int64_t>& configs, const std::vector<double>& gflops) {
    for (int64_t c : configs) proposed_.insert(c);
    Update(configs, gflops);
  }

 protected:
  std::set<int64_t> proposed_;
};

struct SearchOptions {
  uint64_t seed = 0;
  std::string xgb_objective = "rank";  // rank | reg
  int plan_size = 64;                  // xgb: candidates kept per annealing plan
  double epsilon = 0.05;               // xgb: share of each batch drawn at random
  // When set, only configs it accepts are proposed (tune: KeepsModelLayout).
  std::function<bool(const compiler::Config&)> accept;
  // xgb: the feature source (knob + loop-nest features); knob features alone when unset.
  std::shared_ptr<TaskFeatures> features;
  int anneal_steps = 40;
  // xgb transfer learning: measured rows of other workloads of the same template on the same
  // target, one group per workload, labels scaled to [0, 1] by that workload's best. The model is
  // trained on them before this task has data of its own, and keeps them as extra rank groups.
  struct TransferGroup {
    std::vector<std::vector<float>> x;
    std::vector<float> y;
  };
  std::vector<TransferGroup> transfer;
};

// name: random | grid | ga | xgb. InvalidArgument naming the name otherwise.
Result<std::unique_ptr<SearchStrategy>> MakeSearch(TunerKind kind, const compiler::ConfigSpace& space,
                                                   const SearchOptions& options);

}  // namespace tunefarm::tuner

#endif  // TUNEFARM_TUNER_SEARCH_H_
