// RecordsConfigSource: the compiler's ConfigSource over a records database (apply history best), at
// one thread count: a config is measured with the threads it will run on, and one tuned for a core
// can lose on two, so a compile for N threads applies only records measured at N (threads 0: any).
#ifndef TUNEFARM_TUNER_RECORDS_CONFIG_SOURCE_H_
#define TUNEFARM_TUNER_RECORDS_CONFIG_SOURCE_H_

#include <memory>
#include <string>

#include "tunefarm/compiler/config_source.h"
#include "tunefarm/runtime/mutex.h"
#include "tunefarm/tuner/records_roles.h"

namespace tunefarm::tuner {

class RecordsConfigSource final : public compiler::ConfigSource {
 public:
  explicit RecordsConfigSource(std::unique_ptr<BestConfigs> db, int threads = 0)
      : db_(std::move(db)), location_(db_->location()), threads_(threads) {}
  Result<compiler::BestConfig> Best(const compiler::Workload& w, const compiler::Target& target) const override
      EXCLUDES(mu_);
  Result<std::vector<compiler::BestConfig>> Ranked(const compiler::Workload& w, const compiler::Target& target,
                                                   int limit) const override EXCLUDES(mu_);
  Result<int64_t> UnusableCount(const compiler::Workload& w, const compiler::Target& target) const override
      EXCLUDES(mu_);
  // "records measured at 1 thread, none at 2" when the workload has records at other counts only.
  Result<std::string> WhyNoneApply(const compiler::Workload& w, const compiler::Target& target) const override
      EXCLUDES(mu_);
  std::string Describe() const override { return "records database " + location_; }

 private:
  mutable Mutex mu_;  // one SQLite connection, shared by the compiler's threads
  std::unique_ptr<BestConfigs> db_ PT_GUARDED_BY(mu_);
  const std::string location_;  // db_->location(), which never changes: Describe() takes no lock
  const int threads_;
};

}  // namespace tunefarm::tuner

#endif  // TUNEFARM_TUNER_RECORDS_CONFIG_SOURCE_H_
