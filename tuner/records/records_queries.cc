// RecordsDb as RecordsQueries, the dashboard's read side: aggregates, trial streams by id and
// error groups. Every query binds its values; the only SQL text built at run
// time is choosing between fixed clauses. The SQL is what SQLite and PostgreSQL both accept.
#include <array>
#include <string>

#include "tunefarm/tuner/records.h"
#include "tuner/records/records_sql.h"
#include "tuner/records/row_columns.h"

namespace tunefarm::tuner {
namespace {

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

const std::array<Column<WorkloadInfo>, 4> kWorkloadColumns = {{
    {"id", &WorkloadInfo::id},
    {"key", &WorkloadInfo::key},
    {"template", &WorkloadInfo::template_name},
    {"flops", &WorkloadInfo::flops},
}};

// A task's counts over its trials (grouped by workload and target).
const std::array<Column<TaskStats>, 13> kTaskStatsColumns = {{
    {"t.workload_id", &TaskStats::workload_id},
    {"t.target_id", &TaskStats::target_id},
    {"w.key", &TaskStats::workload_key},
    {"w.template", &TaskStats::template_name},
    {"w.flops", &TaskStats::flops},
    {"g.target", &TaskStats::target},
    {"g.model", &TaskStats::target_model},
    {"COUNT(*)", &TaskStats::trials},
    {"SUM(CASE WHEN t.status = 'ok' THEN 1 ELSE 0 END)", &TaskStats::ok_trials},
    {std::string("MIN(CASE WHEN ") + kUsableTrial + " THEN t.mean_ms END)", &TaskStats::best_ms},
    {"MAX(t.id)", &TaskStats::last_trial_id},
    {"MIN(t.created_at)", &TaskStats::first_at},
    {"MAX(t.created_at)", &TaskStats::last_at},
}};

const std::array<Column<TrialPoint>, 12> kTrialPointColumns = {{
    {"t.id", &TrialPoint::id},
    {"t.workload_id", &TrialPoint::workload_id},
    {"t.target_id", &TrialPoint::target_id},
    {"t.config_index", &TrialPoint::config_index},
    {"COALESCE(t.job_id, 0)", &TrialPoint::job_id},
    {"t.config_json", &TrialPoint::config_json},
    {"t.status", &TrialPoint::status},
    {"t.device_key", &TrialPoint::device_key},
    {"t.created_at", &TrialPoint::created_at},
    {"COALESCE(t.mean_ms, 0)", &TrialPoint::mean_ms},
    {"t.build_ms", &TrialPoint::build_ms},
    {"t.threads", &TrialPoint::threads},
}};

// Failed trials grouped by outcome, message and device.
const std::array<Column<ErrorGroup>, 5> kErrorGroupColumns = {{
    {"t.status", &ErrorGroup::status},
    {"t.error_message", &ErrorGroup::message},
    {"t.device_key", &ErrorGroup::device_key},
    {"COUNT(*)", &ErrorGroup::count},
    {"MAX(t.id)", &ErrorGroup::last_trial_id},
}};

}  // namespace

WorkloadInfo RecordsDb::ReadWorkload(const SqlQuery& q) const {
  WorkloadInfo w = ReadRow(q, kWorkloadColumns);
  w.key = CurrentKey(w.key, w.template_name);
  return w;
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
      "SELECT " + SelectList(kTaskStatsColumns) +
      " FROM trials t JOIN workloads w ON w.id = t.workload_id JOIN targets g ON g.id = t.target_id WHERE (" +
      JobClause(job_id) + ") AND " + WorkloadClause(workload_id, 2) +
      " GROUP BY t.workload_id, t.target_id, w.key, w.template, w.flops, g.target, g.model ORDER BY MIN(t.id)";
  auto q = conn_->Query(sql);
  q->Bind(1, job_id).Bind(2, workload_id);
  Status status;
  auto out = Rows(
      *q,
      [this](const SqlQuery& row) {
        TaskStats t = ReadRow(row, kTaskStatsColumns);
        t.workload_key = CurrentKey(t.workload_key, t.template_name);
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
  auto q =
      conn_->Query("SELECT " + SelectList(kTrialPointColumns) +
                   " FROM trials t WHERE t.id > ?1 AND (CAST(?2 AS BIGINT) = 0 OR +t.workload_id = CAST(?2 AS BIGINT))"
                   " ORDER BY t.id LIMIT ?3");
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
    out.push_back(ReadRow(*q, kTrialPointColumns));
    const TrialPoint& p = out.back();
    bytes += kRowBytes + int64_t(p.config_json.size() + p.status.size() + p.device_key.size() + p.created_at.size());
  }
  if (!status.ok()) return Error("cannot read the trial stream", status);
  return out;
}

Result<std::vector<TrialRecord>> RecordsDb::RecentFailures(int64_t limit) {
  auto q = conn_->Query(SelectTrialSql() + "WHERE t.status <> 'ok' ORDER BY t.id DESC LIMIT ?1");
  q->Bind(1, SqlLimit(limit));
  Status status;
  auto out = Rows(
      *q, [this](const SqlQuery& row) { return ReadTrial(row); }, &status);
  if (!status.ok()) return Error("cannot read the recent failures", status);
  return out;
}

Result<std::vector<ErrorGroup>> RecordsDb::ErrorGroups(int64_t workload_id, int64_t limit) {
  auto q =
      conn_->Query("SELECT " + SelectList(kErrorGroupColumns) + " FROM trials t WHERE t.status <> 'ok' AND " +
                   WorkloadClause(workload_id, 1) +
                   " GROUP BY t.status, t.error_message, t.device_key ORDER BY COUNT(*) DESC, MAX(t.id) DESC LIMIT ?2");
  q->Bind(1, workload_id).Bind(2, SqlLimit(limit));
  Status status;
  auto out = Rows(
      *q, [](const SqlQuery& row) { return ReadRow(row, kErrorGroupColumns); }, &status);
  if (!status.ok()) return Error("cannot read the error groups", status);
  return out;
}

Result<std::vector<TrialRecord>> RecordsDb::FastestTrials(int64_t workload_id, int64_t limit) {
  auto q = conn_->Query(SelectTrialSql() + "WHERE t.workload_id = ?1 AND " + kUsableTrial +
                        " ORDER BY t.mean_ms, t.id LIMIT ?2");
  q->Bind(1, workload_id).Bind(2, SqlLimit(limit));
  Status status;
  auto out = Rows(
      *q, [this](const SqlQuery& row) { return ReadTrial(row); }, &status);
  if (!status.ok()) return Error("cannot read the fastest trials", status);
  return out;
}

Result<std::vector<WorkloadInfo>> RecordsDb::Workloads() {
  auto q = conn_->Query("SELECT " + SelectList(kWorkloadColumns) + " FROM workloads ORDER BY id");
  Status status;
  auto out = Rows(
      *q, [this](const SqlQuery& row) { return ReadWorkload(row); }, &status);
  if (!status.ok()) return Error("cannot read the workloads", status);
  return out;
}

Result<WorkloadInfo> RecordsDb::GetWorkload(int64_t id) {
  auto q = conn_->Query("SELECT " + SelectList(kWorkloadColumns) + " FROM workloads WHERE id = ?1");
  q->Bind(1, id);
  auto row = q->Next();
  if (!row.ok()) return Error("cannot read the workload", row.status());
  if (!*row) return Status::NotFound("no task " + std::to_string(id) + " in " + location());
  return ReadWorkload(*q);
}

Result<std::vector<WorkloadInfo>> RecordsDb::FindWorkloads(const std::string& key) {
  if (schema_version_ < 3) {  // a version-2 file a reader left as it is: its keys differ per implementation
    TUNEFARM_ASSIGN_OR_RETURN(std::vector<WorkloadInfo> all, Workloads());
    std::vector<WorkloadInfo> out;
    for (WorkloadInfo& w : all) {
      if (w.key == key) out.push_back(std::move(w));
    }
    return out;
  }
  auto q = conn_->Query("SELECT " + SelectList(kWorkloadColumns) + " FROM workloads WHERE key = ?1 ORDER BY id");
  q->Bind(1, key);
  Status status;
  auto out = Rows(
      *q, [this](const SqlQuery& row) { return ReadWorkload(row); }, &status);
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
