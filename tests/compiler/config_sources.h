// ConfigSources for compiler tests (tunefarm/compiler/config_source.h says tests may provide
// their own; the records database is the one users have, tested in tests/tuner):
//   LookupRecorder   knows no record and counts every task compile looked up (as
//                    Workload::ImplementationKey): what `tunefarm compile` tunes, to compare with
//                    `tunefarm tasks`;
//   FixedConfigs     fixed records per task (config index, cost), for apply-history-best and
//                    layout planning.
#ifndef TUNEFARM_TESTS_COMPILER_CONFIG_SOURCES_H_
#define TUNEFARM_TESTS_COMPILER_CONFIG_SOURCES_H_

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "tunefarm/compiler/config_source.h"
#include "tunefarm/compiler/model.h"
#include "tunefarm/runtime/mutex.h"

namespace tunefarm::testing {

class LookupRecorder final : public compiler::ConfigSource {
 public:
  Result<compiler::BestConfig> Best(const compiler::Workload& w, const compiler::Target&) const override EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    ++lookups_[w.ImplementationKey()];
    return Status::NotFound("no record of " + w.ImplementationKey());
  }
  std::string Describe() const override { return "lookup recorder"; }
  std::map<std::string, int> lookups() const EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    return lookups_;
  }

 private:
  mutable Mutex mu_;
  mutable std::map<std::string, int> lookups_ GUARDED_BY(mu_);
};

class FixedConfigs final : public compiler::ConfigSource {
 public:
  // One more record of w (its workload and implementation); Ranked lists a task's records fastest
  // first.
  void Add(const compiler::Workload& w, int64_t index, double cost_ms) {
    auto& records = records_[w.ImplementationKey()];
    records.push_back({index, cost_ms, "", "target"});
    std::stable_sort(records.begin(), records.end(), [](const compiler::BestConfig& a, const compiler::BestConfig& b) {
      return a.cost_ms < b.cost_ms;
    });
  }
  Result<compiler::BestConfig> Best(const compiler::Workload& w, const compiler::Target&) const override {
    auto it = records_.find(w.ImplementationKey());
    if (it == records_.end()) return Status::NotFound("no record of " + w.ImplementationKey());
    return it->second.front();
  }
  Result<std::vector<compiler::BestConfig>> Ranked(const compiler::Workload& w, const compiler::Target&,
                                                   int limit) const override {
    auto it = records_.find(w.ImplementationKey());
    if (it == records_.end()) return std::vector<compiler::BestConfig>();
    return std::vector<compiler::BestConfig>(it->second.begin(),
                                             it->second.begin() + std::min<size_t>(it->second.size(), size_t(limit)));
  }
  std::string Describe() const override { return "fixed configs"; }

 private:
  std::map<std::string, std::vector<compiler::BestConfig>> records_;
};

// task (Workload::ImplementationKey) -> occurrences, as the tasks list them.
inline std::map<std::string, int> TaskCounts(const std::vector<compiler::Task>& tasks) {
  std::map<std::string, int> counts;
  for (const compiler::Task& t : tasks) counts[t.workload.ImplementationKey()] += t.count;
  return counts;
}

}  // namespace tunefarm::testing

#endif  // TUNEFARM_TESTS_COMPILER_CONFIG_SOURCES_H_
