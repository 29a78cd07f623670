#include "tunefarm/tuner/records_config_source.h"

namespace tunefarm::tuner {

Result<compiler::BestConfig> RecordsConfigSource::Best(const compiler::Workload& w,
                                                       const compiler::Target& target) const {
  MutexLock lock(&mu_);
  TargetMatch match{target.ToString(), target.model, target.keys};
  std::string matched_on;
  TUNEFARM_ASSIGN_OR_RETURN(auto best, db_->Best(w.Key(), w.implementation, match, &matched_on));
  if (!best) return Status::NotFound("no record for " + w.ImplementationKey());
  compiler::BestConfig out;
  out.config_index = best->config_index;
  out.cost_ms = best->mean_ms;
  out.config_json = best->config_json;
  out.matched_on = matched_on;
  return out;
}

Result<std::vector<compiler::BestConfig>> RecordsConfigSource::Ranked(const compiler::Workload& w,
                                                                      const compiler::Target& target, int limit) const {
  MutexLock lock(&mu_);
  TargetMatch match{target.ToString(), target.model, target.keys};
  std::vector<std::string> matched_on;
  TUNEFARM_ASSIGN_OR_RETURN(auto ranked, db_->Ranked(w.Key(), w.implementation, match, limit, &matched_on));
  std::vector<compiler::BestConfig> out;
  for (size_t i = 0; i < ranked.size(); ++i) {
    out.push_back({ranked[i].config_index, ranked[i].mean_ms, ranked[i].config_json, matched_on[i]});
  }
  return out;
}

Result<int64_t> RecordsConfigSource::UnusableCount(const compiler::Workload& w, const compiler::Target& target) const {
  MutexLock lock(&mu_);
  return db_->CountUnusable(w.Key(), w.implementation, target.ToString());
}

}  // namespace tunefarm::tuner
