// RecordsDb as BestConfigs: apply-history-best's queries. A task's fastest usable trial is looked
// for on the same target string, then the same device model, then a shared target key; at the
// thread count asked for, when one is.
#include <set>
#include <string>

#include "tunefarm/tuner/records.h"
#include "tuner/records/records_sql.h"

namespace tunefarm::tuner {

Result<std::optional<TrialRecord>> RecordsDb::Best(const std::string& workload_key, const std::string& implementation,
                                                   const TargetMatch& target, std::string* matched_on) {
  std::vector<std::string> on;
  TUNEFARM_ASSIGN_OR_RETURN(auto ranked, Ranked(workload_key, implementation, target, 1, &on));
  if (ranked.empty()) return std::optional<TrialRecord>();
  if (matched_on) *matched_on = on[0];
  return std::optional<TrialRecord>(std::move(ranked[0]));
}

Result<std::vector<TrialRecord>> RecordsDb::Ranked(const std::string& workload_key, const std::string& implementation,
                                                   const TargetMatch& target, int limit,
                                                   std::vector<std::string>* matched_on) {
  const std::string order = std::string(" AND ") + kUsableTrial +
                            " AND (CAST(?5 AS INTEGER) = 0 OR t.threads = CAST(?5 AS INTEGER))"
                            " ORDER BY t.mean_ms ASC, t.id ASC LIMIT ?3";
  struct Match {
    const char* name;
    std::string where;
    std::string arg;
  };
  std::vector<Match> steps = {{"target", "WHERE w.key = ?1 AND w.template = ?4 AND g.target = ?2", target.target}};
  if (!target.model.empty())
    steps.push_back({"model", "WHERE w.key = ?1 AND w.template = ?4 AND g.model = ?2", target.model});
  for (const auto& k : target.keys) {
    steps.push_back(
        {"keys",
         "WHERE w.key = ?1 AND w.template = ?4 AND (',' || g.keys || ',') LIKE ('%,' || CAST(?2 AS TEXT) || ',%')", k});
  }
  std::vector<TrialRecord> out;
  std::set<int64_t> seen;
  for (const auto& step : steps) {
    if (int(out.size()) >= limit) break;
    auto q = conn_->Query(SelectTrialSql() + step.where + order);
    q->Bind(1, StoredKey(workload_key, implementation))
        .Bind(2, step.arg)
        .Bind(3, int64_t(limit))
        .Bind(4, implementation)
        .Bind(5, int64_t(target.threads));
    Status status;
    while (int(out.size()) < limit && Step(*q, &status)) {
      TrialRecord t = ReadTrial(*q);
      if (!seen.insert(t.id).second) continue;
      out.push_back(std::move(t));
      if (matched_on) matched_on->push_back(step.name);
    }
    if (!status.ok()) return Error("cannot query best trial", status);
  }
  return out;
}

Result<int64_t> RecordsDb::CountUnusable(const std::string& workload_key, const std::string& implementation,
                                         const std::string& target) {
  auto q = conn_->Query(
      std::string("SELECT COUNT(*) FROM trials t JOIN workloads w ON w.id = t.workload_id"
                  " JOIN targets g ON g.id = t.target_id WHERE w.key = ?1 AND g.target = ?2 AND w.template = ?3"
                  " AND t.status = 'ok' AND NOT COALESCE(") +
      kUsableTrial + ", FALSE)");
  q->Bind(1, StoredKey(workload_key, implementation)).Bind(2, target).Bind(3, implementation);
  auto row = q->Next();
  if (!row.ok()) return Error("cannot count unusable trials", row.status());
  return q->Int(0);
}

Result<std::vector<int>> RecordsDb::RecordedThreadCounts(const std::string& workload_key,
                                                         const std::string& implementation, const std::string& target) {
  auto q = conn_->Query(std::string("SELECT DISTINCT t.threads FROM trials t JOIN workloads w ON w.id = t.workload_id"
                                    " JOIN targets g ON g.id = t.target_id WHERE w.key = ?1 AND g.target = ?2"
                                    " AND w.template = ?3 AND ") +
                        kUsableTrial + " ORDER BY t.threads");
  q->Bind(1, StoredKey(workload_key, implementation)).Bind(2, target).Bind(3, implementation);
  std::vector<int> counts;
  Status status;
  while (Step(*q, &status)) counts.push_back(int(q->Int(0)));
  if (!status.ok()) return Error("cannot list the thread counts of the trials", status);
  return counts;
}

}  // namespace tunefarm::tuner
