// ConfigSources for compiler tests (tunefarm/compiler/config_source.h says tests may provide
// their own; the records database is the one users have, tested in tests/tuner):
//   LookupRecorder   knows no record and counts every workload compile looked up: what
//                    `tunefarm compile` tunes, to compare with `tunefarm tasks`;
//   FixedConfigs     a fixed map workload key -> (config index, cost), for apply-history-best.
#ifndef TUNEFARM_TESTS_COMPILER_CONFIG_SOURCES_H_
#define TUNEFARM_TESTS_COMPILER_CONFIG_SOURCES_H_

#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "tunefarm/compiler/config_source.h"
#include "tunefarm/compiler/model.h"

namespace tunefarm::testing {

class LookupRecorder final : public compiler::ConfigSource {
 public:
  Result<compiler::BestConfig> Best(const std::string& workload_key, const compiler::Target&) const override {
    std::lock_guard<std::mutex> lock(mu_);
    ++lookups_[workload_key];
    return Status::NotFound("no record of " + workload_key);
  }
  std::string Describe() const override { return "lookup recorder"; }
  std::map<std::string, int> lookups() const {
    std::lock_guard<std::mutex> lock(mu_);
    return lookups_;
  }

 private:
  mutable std::mutex mu_;
  mutable std::map<std::string, int> lookups_;
};

class FixedConfigs final : public compiler::ConfigSource {
 public:
  void Add(const std::string& key, int64_t index, double cost_ms) { best_[key] = {index, cost_ms, "", "target"}; }
  Result<compiler::BestConfig> Best(const std::string& workload_key, const compiler::Target&) const override {
    auto it = best_.find(workload_key);
    if (it == best_.end()) return Status::NotFound("no record of " + workload_key);
    return it->second;
  }
  std::string Describe() const override { return "fixed configs"; }

 private:
  std::map<std::string, compiler::BestConfig> best_;
};

// workload key -> occurrences, as the tasks list them.
inline std::map<std::string, int> TaskCounts(const std::vector<compiler::Task>& tasks) {
  std::map<std::string, int> counts;
  for (const compiler::Task& t : tasks) counts[t.workload.Key()] += t.count;
  return counts;
}

}  // namespace tunefarm::testing

#endif  // TUNEFARM_TESTS_COMPILER_CONFIG_SOURCES_H_
