// RecordsConfigSource: the compiler's ConfigSource over a records database (apply history best).
#ifndef TUNEFARM_TUNER_RECORDS_CONFIG_SOURCE_H_
#define TUNEFARM_TUNER_RECORDS_CONFIG_SOURCE_H_

#include <memory>
#include <mutex>

#include "tunefarm/compiler/config_source.h"
#include "tunefarm/tuner/records.h"

namespace tunefarm::tuner {

class RecordsConfigSource final : public compiler::ConfigSource {
 public:
  explicit RecordsConfigSource(std::unique_ptr<RecordsDb> db) : db_(std::move(db)) {}
  Result<compiler::BestConfig> Best(const compiler::Workload& w, const compiler::Target& target) const override;
  Result<std::vector<compiler::BestConfig>> Ranked(const compiler::Workload& w, const compiler::Target& target,
                                                   int limit) const override;
  Result<int64_t> UnusableCount(const compiler::Workload& w, const compiler::Target& target) const override;
  std::string Describe() const override { return "records database " + db_->location(); }

 private:
  mutable std::mutex mu_;  // one SQLite connection, shared by the compiler's threads
  std::unique_ptr<RecordsDb> db_;
};

}  // namespace tunefarm::tuner

#endif  // TUNEFARM_TUNER_RECORDS_CONFIG_SOURCE_H_
