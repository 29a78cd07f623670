// RecordsDb's read side: apply-history-best, listings, and the dashboard's aggregates, trial
// streams by id and error groups. Every query binds its values; the only SQL text built at run
// time is choosing between fixed clauses. The SQL is what SQLite and PostgreSQL both accept.
#include <set>
#include <string>

#include "tunefarm/tuner/records.h"
#include "tuner/records/records_sql.h"

namespace tunefarm::tuner {
namespace {

// Every row of q through read; the first error in *status.
template <typename Read>
auto Rows(SqlQuery& q, Read read, Status* status) {
  std::vector<decltype(read(q))> out;
  while (Step(q, status)) out.push_back(read(q));
  return out;
}

// job_id -1: every trial; 0: trials outside jobs; N: that job's. Parameter ?1.
const char* JobClause(int64_t job_id) {
  if (job_id < 0) return "?1 < 0";
  if (job_id == 0) return "COALESCE(t.job_id, 0) = ?1";
  return "t.job_id = ?1";
}

// workload_id 0: every workload (a clause that is always true, so ?N stays bound); N: an equality
// the (workload, target, ...) index serves. An OR of both would keep the planner off the index.
std::string WorkloadClause(int64_t workload_id, int param) {
  const std::string p = "?" + std::to_string(param);
  return workload_id == 0 ? p + " = 0" : "t.workload_id = " + p;
}

WorkloadInfo ReadWorkload(const SqlQuery& q) { return WorkloadInfo{q.Int(0), q.Text(1), q.Text(2), q.Double(3)}; }

}  // namespace

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
  const std::string order = std::string(" AND ") + kUsableTrial + " ORDER BY t.mean_ms ASC, t.id ASC LIMIT ?3";
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
    auto q = conn_->Query(std::string(kSelectTrial) + step.where + order);
    q->Bind(1, StoredKey(workload_key, implementation))
        .Bind(2, step.arg)
        .Bind(3, int64_t(limit))
        .Bind(4, implementation);
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

Result<std::vector<TrialRecord>> RecordsDb::List(const std::string& workload_key, int64_t limit,
                                                 const std::string& implementation) {
  auto q = conn_->Query(
      std::string(kSelectTrial) + (workload_key.empty() ? "WHERE CAST(?1 AS TEXT) = ''" : "WHERE w.key = ?1") +
      (implementation.empty() ? " AND CAST(?3 AS TEXT) = ''" : " AND w.template = ?3") + " ORDER BY t.id LIMIT ?2");
  q->Bind(1, StoredKey(workload_key, implementation)).Bind(2, SqlLimit(limit)).Bind(3, implementation);
  Status status;
  auto out = Rows(*q, ReadTrial, &status);
  if (!status.ok()) return Error("cannot list trials", status);
  return out;
}

Result<std::vector<TrialRecord>> RecordsDb::ListSimilar(const std::string& template_name, const std::string& target,
                                                        const std::string& except_workload, int64_t limit) {
  auto q = conn_->Query(std::string(kSelectTrial) + "WHERE w.template = ?1 AND g.target = ?2 AND w.key != ?3 AND " +
                        kUsableTrial + " ORDER BY t.id DESC LIMIT ?4");
  q->Bind(1, template_name).Bind(2, target).Bind(3, except_workload).Bind(4, SqlLimit(limit));
  Status status;
  auto out = Rows(*q, ReadTrial, &status);
  if (!status.ok()) return Error("cannot list similar trials", status);
  return out;
}

Result<int64_t> RecordsDb::CountTrials() {
  auto q = conn_->Query("SELECT COUNT(*) FROM trials");
  auto row = q->Next();
  if (!row.ok()) return Error("cannot count trials", row.status());
  return q->Int(0);
}

Result<std::vector<TaskStats>> RecordsDb::TaskStatsOf(int64_t job_id, int64_t workload_id) {
  // One pass over the trials (grouped), then the best trial's id per group through the
  // (workload, target, status, mean_ms) index.
  const std::string sql =
      std::string(
          "SELECT t.workload_id, t.target_id, w.key, w.template, w.flops, g.target, g.model, COUNT(*),"
          " SUM(CASE WHEN t.status = 'ok' THEN 1 ELSE 0 END), MIN(CASE WHEN ") +
      kUsableTrial +
      std::string(
          " THEN t.mean_ms END), MAX(t.id), MIN(t.created_at), MAX(t.created_at)"
          " FROM trials t JOIN workloads w ON w.id = t.workload_id JOIN targets g ON g.id = t.target_id WHERE (") +
      JobClause(job_id) + ") AND " + WorkloadClause(workload_id, 2) +
      " GROUP BY t.workload_id, t.target_id, w.key, w.template, w.flops, g.target, g.model ORDER BY MIN(t.id)";
  auto q = conn_->Query(sql);
  q->Bind(1, job_id).Bind(2, workload_id);
  Status status;
  auto out = Rows(
      *q,
      [](const SqlQuery& s) {
        TaskStats t;
        t.workload_id = s.Int(0);
        t.target_id = s.Int(1);
        t.workload_key = s.Text(2);
        t.template_name = s.Text(3);
        t.flops = s.Double(4);
        t.target = s.Text(5);
        t.target_model = s.Text(6);
        t.trials = s.Int(7);
        t.ok_trials = s.Int(8);
        t.best_ms = s.Double(9);
        t.last_trial_id = s.Int(10);
        t.first_at = s.Text(11);
        t.last_at = s.Text(12);
        return t;
      },
      &status);
  if (!status.ok()) return Error("cannot read the task statistics", status);
  auto best = conn_->Query(std::string("SELECT t.id FROM trials t WHERE t.workload_id = ?2 AND t.target_id = ?3 AND ") +
                           kUsableTrial + " AND (" + JobClause(job_id) + ") ORDER BY t.mean_ms, t.id LIMIT 1");
  for (TaskStats& t : out) {
    if (t.ok_trials == 0) continue;
    best->Reset();
    best->Bind(1, job_id).Bind(2, t.workload_id).Bind(3, t.target_id);
    auto row = best->Next();
    if (!row.ok()) return Error("cannot read the best trial", row.status());
    if (*row) t.best_trial_id = best->Int(0);
  }
  return out;
}

Result<std::vector<TrialPoint>> RecordsDb::TrialsAfter(int64_t after_id, int64_t workload_id, int64_t limit,
                                                       int64_t max_bytes, bool* cut) {
  // The unary + keeps SQLite off the workload index: the id range is what makes "what is new"
  // cheap on a large database.
  auto q = conn_->Query(
      "SELECT t.id, t.workload_id, t.target_id, t.config_index, COALESCE(t.job_id, 0), t.config_json, t.status,"
      " t.device_key, t.created_at, COALESCE(t.mean_ms, 0), t.build_ms FROM trials t"
      " WHERE t.id > ?1 AND (CAST(?2 AS BIGINT) = 0 OR +t.workload_id = CAST(?2 AS BIGINT)) ORDER BY t.id LIMIT ?3");
  q->Bind(1, after_id).Bind(2, workload_id).Bind(3, SqlLimit(limit));
  Status status;
  constexpr int64_t kRowBytes = 256;
  int64_t bytes = 0;
  if (cut) *cut = false;
  std::vector<TrialPoint> out;
  while (Step(*q, &status)) {
    if (bytes >= max_bytes) {
      if (cut) *cut = true;
      break;
    }
    out.push_back([](const SqlQuery& s) {
      TrialPoint p;
      p.id = s.Int(0);
      p.workload_id = s.Int(1);
      p.target_id = s.Int(2);
      p.config_index = s.Int(3);
      p.job_id = s.Int(4);
      p.config_json = s.Text(5);
      p.status = s.Text(6);
      p.device_key = s.Text(7);
      p.created_at = s.Text(8);
      p.mean_ms = s.Double(9);
      p.build_ms = s.Double(10);
      return p;
    }(*q));
    const TrialPoint& p = out.back();
    bytes += kRowBytes + int64_t(p.config_json.size() + p.status.size() + p.device_key.size() + p.created_at.size());
  }
  if (!status.ok()) return Error("cannot read the trial stream", status);
  return out;
}

Result<std::vector<TrialRecord>> RecordsDb::RecentFailures(int64_t limit) {
  auto q = conn_->Query(std::string(kSelectTrial) + "WHERE t.status <> 'ok' ORDER BY t.id DESC LIMIT ?1");
  q->Bind(1, SqlLimit(limit));
  Status status;
  auto out = Rows(*q, ReadTrial, &status);
  if (!status.ok()) return Error("cannot read the recent failures", status);
  return out;
}

Result<std::vector<ErrorGroup>> RecordsDb::ErrorGroups(int64_t workload_id, int64_t limit) {
  auto q =
      conn_->Query(std::string("SELECT t.status, t.error_message, t.device_key, COUNT(*), MAX(t.id) FROM trials t"
                               " WHERE t.status <> 'ok' AND ") +
                   WorkloadClause(workload_id, 1) +
                   " GROUP BY t.status, t.error_message, t.device_key ORDER BY COUNT(*) DESC, MAX(t.id) DESC LIMIT ?2");
  q->Bind(1, workload_id).Bind(2, SqlLimit(limit));
  Status status;
  auto out = Rows(
      *q,
      [](const SqlQuery& s) {
        return ErrorGroup{s.Text(0), s.Text(1), s.Text(2), s.Int(3), s.Int(4)};
      },
      &status);
  if (!status.ok()) return Error("cannot read the error groups", status);
  return out;
}

Result<std::vector<TrialRecord>> RecordsDb::FastestTrials(int64_t workload_id, int64_t limit) {
  auto q = conn_->Query(std::string(kSelectTrial) + "WHERE t.workload_id = ?1 AND " + kUsableTrial +
                        " ORDER BY t.mean_ms, t.id LIMIT ?2");
  q->Bind(1, workload_id).Bind(2, SqlLimit(limit));
  Status status;
  auto out = Rows(*q, ReadTrial, &status);
  if (!status.ok()) return Error("cannot read the fastest trials", status);
  return out;
}

Result<std::vector<WorkloadInfo>> RecordsDb::Workloads() {
  auto q = conn_->Query("SELECT id, key, template, flops FROM workloads ORDER BY id");
  Status status;
  auto out = Rows(*q, ReadWorkload, &status);
  if (!status.ok()) return Error("cannot read the workloads", status);
  return out;
}

Result<WorkloadInfo> RecordsDb::GetWorkload(int64_t id) {
  auto q = conn_->Query("SELECT id, key, template, flops FROM workloads WHERE id = ?1");
  q->Bind(1, id);
  auto row = q->Next();
  if (!row.ok()) return Error("cannot read the workload", row.status());
  if (!*row) return Status::NotFound("no task " + std::to_string(id) + " in " + location());
  return ReadWorkload(*q);
}

Result<std::vector<WorkloadInfo>> RecordsDb::FindWorkloads(const std::string& key) {
  auto q = conn_->Query("SELECT id, key, template, flops FROM workloads WHERE key = ?1 ORDER BY id");
  q->Bind(1, key);
  Status status;
  auto out = Rows(*q, ReadWorkload, &status);
  if (!status.ok()) return Error("cannot read the workload", status);
  return out;
}

Result<std::vector<std::pair<int64_t, std::string>>> RecordsDb::Targets() {
  auto q = conn_->Query("SELECT id, target FROM targets ORDER BY id");
  Status status;
  auto out = Rows(
      *q,
      [](const SqlQuery& s) {
        return std::pair<int64_t, std::string>{s.Int(0), s.Text(1)};
      },
      &status);
  if (!status.ok()) return Error("cannot read the targets", status);
  return out;
}

Result<int64_t> RecordsDb::CountTrialsOfJob(int64_t job_id) {
  auto q = conn_->Query(job_id == 0 ? "SELECT COUNT(*) FROM trials WHERE job_id IS NULL OR job_id = ?1"
                                    : "SELECT COUNT(*) FROM trials WHERE job_id = ?1");
  q->Bind(1, job_id);
  auto row = q->Next();
  if (!row.ok()) return Error("cannot count the job's trials", row.status());
  return q->Int(0);
}

Result<int64_t> RecordsDb::LastTrialId() {
  auto q = conn_->Query("SELECT COALESCE(MAX(id), 0) FROM trials");
  auto row = q->Next();
  if (!row.ok()) return Error("cannot read the last trial id", row.status());
  return q->Int(0);
}

}  // namespace tunefarm::tuner
