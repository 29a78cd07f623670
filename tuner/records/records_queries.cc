// RecordsDb's read side for the dashboard: aggregates per task, trial streams by id, error
// groups. Every query binds its values; the only SQL text built at run time is choosing between
// fixed clauses.
#include <sqlite3.h>

#include <string>

#include "tunefarm/tuner/records.h"
#include "tuner/records/sqlite_stmt.h"

namespace tunefarm::tuner {
namespace {

// job_id -1: every trial; 0: trials outside jobs; N: that job's. Parameter ?1.
const char* JobClause(int64_t job_id) {
  if (job_id < 0) return "?1 < 0";
  if (job_id == 0) return "IFNULL(t.job_id, 0) = ?1";
  return "t.job_id = ?1";
}

// workload_id 0: every workload (a clause that is always true, so ?N stays bound); N: an equality
// the (workload, target, ...) index serves. An OR of both would keep SQLite off the index.
std::string WorkloadClause(int64_t workload_id, int param) {
  const std::string p = "?" + std::to_string(param);
  return workload_id == 0 ? p + " = 0" : "t.workload_id = " + p;
}

}  // namespace

Result<std::vector<TaskStats>> RecordsDb::TaskStatsOf(int64_t job_id, int64_t workload_id) {
  // One pass over the trials (grouped), then the best trial's id per group through the
  // (workload, target, status, mean_ms) index.
  const std::string sql = std::string(
                              "SELECT t.workload_id, t.target_id, w.key, w.template, w.flops, g.target, g.model, COUNT(*),"
                              " SUM(t.status = 'ok'), MIN(t.mean_ms), MAX(t.id), MIN(t.created_at), MAX(t.created_at)"
                              " FROM trials t JOIN workloads w ON w.id = t.workload_id JOIN targets g ON g.id = t.target_id"
                              " WHERE (") +
                          JobClause(job_id) + ") AND " + WorkloadClause(workload_id, 2) + " GROUP BY t.workload_id, t.target_id ORDER BY MIN(t.id)";
  Stmt s(db_, sql);
  if (!s.ok()) return Error("cannot prepare the task statistics");
  s.Bind(1, job_id).Bind(2, workload_id);
  std::vector<TaskStats> out;
  int rc;
  while ((rc = s.Step()) == SQLITE_ROW) {
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
    out.push_back(std::move(t));
  }
  if (rc != SQLITE_DONE) return Error("cannot read the task statistics");
  Stmt best(db_, std::string("SELECT t.id FROM trials t WHERE t.workload_id = ?2 AND t.target_id = ?3 AND t.status = 'ok' AND (") +
                     JobClause(job_id) + ") ORDER BY t.mean_ms, t.id LIMIT 1");
  if (!best.ok()) return Error("cannot prepare the best-trial query");
  for (TaskStats& t : out) {
    if (t.ok_trials == 0) continue;
    sqlite3_reset(best.raw());
    best.Bind(1, job_id).Bind(2, t.workload_id).Bind(3, t.target_id);
    if (best.Step() == SQLITE_ROW) t.best_trial_id = best.Int(0);
  }
  return out;
}

Result<std::vector<TrialPoint>> RecordsDb::TrialsAfter(int64_t after_id, int64_t workload_id, int64_t limit) {
  // The unary + keeps SQLite off the workload index: the id range is what makes "what is new"
  // cheap on a large database.
  Stmt s(db_,
         "SELECT t.id, t.workload_id, t.target_id, t.config_index, IFNULL(t.job_id, 0), t.config_json, t.status,"
         " t.device_key, t.created_at, IFNULL(t.mean_ms, 0), t.build_ms FROM trials t"
         " WHERE t.id > ?1 AND (?2 = 0 OR +t.workload_id = ?2) ORDER BY t.id LIMIT ?3");
  if (!s.ok()) return Error("cannot prepare the trial stream");
  s.Bind(1, after_id).Bind(2, workload_id).Bind(3, limit);
  std::vector<TrialPoint> out;
  int rc;
  while ((rc = s.Step()) == SQLITE_ROW) {
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
    out.push_back(std::move(p));
  }
  if (rc != SQLITE_DONE) return Error("cannot read the trial stream");
  return out;
}

Result<std::vector<TrialRecord>> RecordsDb::RecentFailures(int64_t limit) {
  Stmt s(db_, std::string(kSelectTrial) + "WHERE t.status <> 'ok' ORDER BY t.id DESC LIMIT ?1");
  if (!s.ok()) return Error("cannot prepare the recent failures");
  s.Bind(1, limit);
  std::vector<TrialRecord> out;
  int rc;
  while ((rc = s.Step()) == SQLITE_ROW) out.push_back(ReadTrial(s));
  if (rc != SQLITE_DONE) return Error("cannot read the recent failures");
  return out;
}

Result<std::vector<ErrorGroup>> RecordsDb::ErrorGroups(int64_t workload_id, int64_t limit) {
  Stmt s(db_, std::string("SELECT t.status, t.error_message, t.device_key, COUNT(*), MAX(t.id) FROM trials t"
                          " WHERE t.status <> 'ok' AND ") + WorkloadClause(workload_id, 1) +
                  " GROUP BY t.status, t.error_message, t.device_key ORDER BY COUNT(*) DESC, MAX(t.id) DESC LIMIT ?2");
  if (!s.ok()) return Error("cannot prepare the error groups");
  s.Bind(1, workload_id).Bind(2, limit);
  std::vector<ErrorGroup> out;
  int rc;
  while ((rc = s.Step()) == SQLITE_ROW) {
    out.push_back({s.Text(0), s.Text(1), s.Text(2), s.Int(3), s.Int(4)});
  }
  if (rc != SQLITE_DONE) return Error("cannot read the error groups");
  return out;
}

Result<std::vector<TrialRecord>> RecordsDb::FastestTrials(int64_t workload_id, int64_t limit) {
  Stmt s(db_, std::string(kSelectTrial) + "WHERE t.workload_id = ?1 AND t.status = 'ok' ORDER BY t.mean_ms, t.id LIMIT ?2");
  if (!s.ok()) return Error("cannot prepare the fastest trials");
  s.Bind(1, workload_id).Bind(2, limit);
  std::vector<TrialRecord> out;
  int rc;
  while ((rc = s.Step()) == SQLITE_ROW) out.push_back(ReadTrial(s));
  if (rc != SQLITE_DONE) return Error("cannot read the fastest trials");
  return out;
}

Result<std::vector<WorkloadInfo>> RecordsDb::Workloads() {
  Stmt s(db_, "SELECT id, key, template, flops FROM workloads ORDER BY id");
  if (!s.ok()) return Error("cannot prepare the workload list");
  std::vector<WorkloadInfo> out;
  int rc;
  while ((rc = s.Step()) == SQLITE_ROW) out.push_back({s.Int(0), s.Text(1), s.Text(2), s.Double(3)});
  if (rc != SQLITE_DONE) return Error("cannot read the workloads");
  return out;
}

Result<WorkloadInfo> RecordsDb::GetWorkload(int64_t id) {
  Stmt s(db_, "SELECT id, key, template, flops FROM workloads WHERE id = ?1");
  if (!s.ok()) return Error("cannot prepare the workload query");
  s.Bind(1, id);
  if (s.Step() != SQLITE_ROW) return Status::NotFound("no task " + std::to_string(id) + " in " + path_);
  return WorkloadInfo{s.Int(0), s.Text(1), s.Text(2), s.Double(3)};
}

Result<WorkloadInfo> RecordsDb::FindWorkload(const std::string& key) {
  Stmt s(db_, "SELECT id, key, template, flops FROM workloads WHERE key = ?1");
  if (!s.ok()) return Error("cannot prepare the workload query");
  s.Bind(1, key);
  if (s.Step() != SQLITE_ROW) return Status::NotFound("no workload " + key.substr(0, 200) + " in " + path_);
  return WorkloadInfo{s.Int(0), s.Text(1), s.Text(2), s.Double(3)};
}

Result<std::vector<std::pair<int64_t, std::string>>> RecordsDb::Targets() {
  Stmt s(db_, "SELECT id, target FROM targets ORDER BY id");
  if (!s.ok()) return Error("cannot prepare the target list");
  std::vector<std::pair<int64_t, std::string>> out;
  int rc;
  while ((rc = s.Step()) == SQLITE_ROW) out.push_back({s.Int(0), s.Text(1)});
  if (rc != SQLITE_DONE) return Error("cannot read the targets");
  return out;
}

Result<int64_t> RecordsDb::CountTrialsOfJob(int64_t job_id) {
  Stmt s(db_, job_id == 0 ? "SELECT COUNT(*) FROM trials WHERE job_id IS NULL OR job_id = ?1"
                          : "SELECT COUNT(*) FROM trials WHERE job_id = ?1");
  if (!s.ok()) return Error("cannot prepare the job's trial count");
  s.Bind(1, job_id);
  if (s.Step() != SQLITE_ROW) return Error("cannot count the job's trials");
  return s.Int(0);
}

Result<int64_t> RecordsDb::LastTrialId() {
  Stmt s(db_, "SELECT IFNULL(MAX(id), 0) FROM trials");
  if (!s.ok() || s.Step() != SQLITE_ROW) return Error("cannot read the last trial id");
  return s.Int(0);
}

}  // namespace tunefarm::tuner
