#include "tunefarm/tuner/records_config_source.h"

namespace tunefarm::tuner {

Result<compiler::BestConfig> RecordsConfigSource::Best(const compiler::Workload& w,
                                                       const compiler::Target& target) const {
  MutexLock lock(&mu_);
  TargetMatch match{target.ToString(), target.model, target.keys, threads_};
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
  TargetMatch match{target.ToString(), target.model, target.keys, threads_};
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

namespace {
std::string Threads(int n) { return std::to_string(n) + (n == 1 ? " thread" : " threads"); }
}  // namespace

Result<std::string> RecordsConfigSource::WhyNoneApply(const compiler::Workload& w,
                                                      const compiler::Target& target) const {
  if (threads_ <= 0) return std::string();
  MutexLock lock(&mu_);
  TUNEFARM_ASSIGN_OR_RETURN(std::vector<int> counts,
                            db_->RecordedThreadCounts(w.Key(), w.implementation, target.ToString()));
  if (counts.empty()) return std::string();
  std::string at;
  for (size_t i = 0; i < counts.size(); ++i) {
    at += (i == 0 ? "" : i + 1 == counts.size() ? " and " : ", ") + std::to_string(counts[i]);
  }
  return "records measured at " + at + (counts.size() == 1 && counts[0] == 1 ? " thread" : " threads") + ", none at " +
         Threads(threads_) + " (tune with --threads " + std::to_string(threads_) + ")";
}

}  // namespace tunefarm::tuner
