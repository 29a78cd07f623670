#include "tuner/records/records_config_source.h"

namespace tunefarm::tuner {

Result<compiler::BestConfig> RecordsConfigSource::Best(const std::string& workload_key,
                                                       const compiler::Target& target) const {
  std::lock_guard<std::mutex> lock(mu_);
  TargetMatch match{target.ToString(), target.model, target.keys};
  std::string matched_on;
  TUNEFARM_ASSIGN_OR_RETURN(auto best, db_->Best(workload_key, match, &matched_on));
  if (!best) return Status::NotFound("no record for " + workload_key);
  compiler::BestConfig out;
  out.config_index = best->config_index;
  out.cost_ms = best->mean_ms;
  out.config_json = best->config_json;
  out.matched_on = matched_on;
  return out;
}

Result<std::vector<compiler::BestConfig>> RecordsConfigSource::Ranked(const std::string& workload_key,
                                                                       const compiler::Target& target, int limit) const {
  std::lock_guard<std::mutex> lock(mu_);
  TargetMatch match{target.ToString(), target.model, target.keys};
  std::vector<std::string> matched_on;
  TUNEFARM_ASSIGN_OR_RETURN(auto ranked, db_->Ranked(workload_key, match, limit, &matched_on));
  std::vector<compiler::BestConfig> out;
  for (size_t i = 0; i < ranked.size(); ++i) {
    out.push_back({ranked[i].config_index, ranked[i].mean_ms, ranked[i].config_json, matched_on[i]});
  }
  return out;
}

Result<int64_t> RecordsConfigSource::UnusableCount(const std::string& workload_key,
                                                   const compiler::Target& target) const {
  std::lock_guard<std::mutex> lock(mu_);
  return db_->CountUnusable(workload_key, target.ToString());
}

}  // namespace tunefarm::tuner
