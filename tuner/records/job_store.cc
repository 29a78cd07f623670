// RecordsDb as a JobStore: the tuning jobs of tuner-daemons and `tunefarm tune` runs, and the
// daemon-name lock.
#include <array>

#include "tunefarm/tuner/records.h"
#include "tuner/records/records_sql.h"
#include "tuner/records/row_columns.h"

namespace tunefarm::tuner {
namespace {

const std::array<Column<JobRecord>, 7> kJobColumns = {{
    {"id", &JobRecord::id},
    {"spec", &JobRecord::spec_json},
    {"state", &JobRecord::state},
    {"progress", &JobRecord::progress_json},
    {"created_at", &JobRecord::created_at},
    {"updated_at", &JobRecord::updated_at},
    {"daemon", &JobRecord::daemon},
}};

std::string SelectJobSql() { return "SELECT " + SelectList(kJobColumns) + " FROM jobs "; }

}  // namespace

Status RecordsDb::LockDaemonName(const std::string& name) {
  if (!shared()) return Status::OK();
  auto q =
      conn_->Query("SELECT pg_try_advisory_lock(hashtextextended('tunefarm tuner-daemon ' || CAST(?1 AS TEXT), 0))");
  q->Bind(1, name);
  auto row = q->Next();
  if (!row.ok() || !*row)
    return Error("cannot lock the daemon name", row.ok() ? Status::IOError("no answer") : row.status());
  if (q->Int(0) == 0) {
    return Status::FailedPrecondition("records database " + location() + " is in use by another tuner-daemon named '" +
                                      name + "'; give each daemon sharing a database its own --name");
  }
  conn_->KeepForSession("SELECT pg_try_advisory_lock(hashtextextended('tunefarm tuner-daemon ' || " +
                        conn_->Quote(name) + ", 0))");
  return Status::OK();
}

Result<int64_t> RecordsDb::AddJob(const std::string& spec_json, const std::string& daemon) {
  auto q = conn_->Query("INSERT INTO jobs(spec, state, daemon) VALUES(?1, ?3, ?2) RETURNING id");
  q->Bind(1, spec_json).Bind(2, daemon).Bind(3, std::string(NameOf(JobState::kQueued)));
  auto row = q->Next();
  if (!row.ok() || !*row) return Error("cannot add a job", row.ok() ? Status::IOError("no id returned") : row.status());
  return q->Int(0);
}

Status RecordsDb::UpdateJob(int64_t id, JobState state, const std::string& progress_json) {
  auto q = conn_->Query(std::string("UPDATE jobs SET state = ?2, progress = ?3, updated_at = ") + conn_->NowText() +
                        " WHERE id = ?1 RETURNING id");
  q->Bind(1, id).Bind(2, std::string(NameOf(state))).Bind(3, progress_json);
  auto row = q->Next();
  if (!row.ok()) return Error("cannot update job " + std::to_string(id), row.status());
  if (!*row) return Status::NotFound("no job " + std::to_string(id) + " in " + location());
  return Status::OK();
}

Result<std::vector<JobRecord>> RecordsDb::ListJobs() {
  auto q = conn_->Query(SelectJobSql() + "ORDER BY id");
  std::vector<JobRecord> out;
  Status status;
  while (Step(*q, &status)) out.push_back(ReadRow(*q, kJobColumns));
  if (!status.ok()) return Error("cannot list jobs", status);
  return out;
}

Result<JobRecord> RecordsDb::GetJob(int64_t id) {
  auto q = conn_->Query(SelectJobSql() + "WHERE id = ?1");
  q->Bind(1, id);
  auto row = q->Next();
  if (!row.ok()) return Error("cannot read job " + std::to_string(id), row.status());
  if (!*row) return Status::NotFound("no job " + std::to_string(id) + " in " + location());
  return ReadRow(*q, kJobColumns);
}

}  // namespace tunefarm::tuner
