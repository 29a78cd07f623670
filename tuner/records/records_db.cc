// RecordsDb's write side, opening and migrations, over a SqlConnection (SQLite or PostgreSQL).
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <nlohmann/json.hpp>
#include <random>
#include <set>

#include "tunefarm/compiler/workload.h"
#include "tunefarm/tuner/records.h"
#include "tuner/records/legacy_keys.h"
#include "tuner/records/records_sql.h"
#include "tuner/records/row_columns.h"
#include "tuner/records/sql_engines.h"

namespace tunefarm::tuner {
namespace {

std::string NewUid() {
  static thread_local std::mt19937_64 rng(std::random_device{}());
  char buf[40];
  std::snprintf(buf, sizeof(buf), "%016llx%016llx", (unsigned long long)rng(), (unsigned long long)rng());
  return buf;
}

}  // namespace

namespace {

// The trial row: the trials table joined with its workload and target.
const std::array<Column<TrialRecord>, 21> kTrialColumns = {{
    {"t.id", &TrialRecord::id},
    {"t.uid", &TrialRecord::uid},
    {"w.key", &TrialRecord::workload_key},
    {"w.template", &TrialRecord::template_name},
    {"w.flops", &TrialRecord::flops},
    {"g.target", &TrialRecord::target},
    {"g.model", &TrialRecord::target_model},
    {"g.keys", &TrialRecord::target_keys},
    {"t.config_index", &TrialRecord::config_index},
    {"t.config_json", &TrialRecord::config_json},
    {"t.status", &TrialRecord::status},
    {"t.error_message", &TrialRecord::error_message},
    {"t.costs_ms", &TrialRecord::costs_ms},
    {"t.mean_ms", &TrialRecord::mean_ms},
    {"t.threads", &TrialRecord::threads},
    {"t.device_key", &TrialRecord::device_key},
    {"t.device_info", &TrialRecord::device_info},
    {"t.build_ms", &TrialRecord::build_ms},
    {"t.run_ms", &TrialRecord::run_ms},
    {"COALESCE(t.job_id, 0)", &TrialRecord::job_id},
    {"t.created_at", &TrialRecord::created_at},
}};

}  // namespace

const std::string& SelectTrialSql() {
  static const std::string sql = "SELECT " + SelectList(kTrialColumns) +
                                 " FROM trials t JOIN workloads w ON w.id = t.workload_id"
                                 " JOIN targets g ON g.id = t.target_id ";
  return sql;
}

TrialRecord RecordsDb::ReadTrial(const SqlQuery& q) const {
  TrialRecord t = ReadRow(q, kTrialColumns);
  t.workload_key = CurrentKey(t.workload_key, t.template_name);
  return t;
}

std::string RecordsDb::CurrentKey(const std::string& stored_key, const std::string& implementation) const {
  return schema_version_ >= 3 ? stored_key : KeyOfSchema3(stored_key, implementation);
}

bool IsPostgresRecords(const std::string& location) { return IsPostgresLocation(location); }
std::string DisplayRecordsLocation(const std::string& location) {
  return IsPostgresLocation(location) ? DisplayPostgresLocation(location) : location;
}

RecordsDb::RecordsDb(std::unique_ptr<SqlConnection> conn) : conn_(std::move(conn)) {}
RecordsDb::~RecordsDb() = default;

const std::string& RecordsDb::location() const { return conn_->location(); }
bool RecordsDb::shared() const { return conn_->engine() == SqlConnection::Engine::kPostgres; }

Result<std::unique_ptr<RecordsDb>> RecordsDb::Open(const std::string& location, Mode mode) {
  if (IsPostgresLocation(location)) {
    TUNEFARM_ASSIGN_OR_RETURN(auto conn, OpenPostgres(location));
    std::unique_ptr<RecordsDb> r(new RecordsDb(std::move(conn)));
    if (mode == Mode::kReadOnly ||
        mode == Mode::kSalvage) {  // a reader never makes tables in a database named by mistake
      TUNEFARM_ASSIGN_OR_RETURN(int version, r->SchemaVersion());
      if (version == 0) {
        return Status::NotFound(
            "records database " + r->location() +
            " holds no tunefarm records (no tables yet: tune into it or `records copy --to` it first)");
      }
    }
    TUNEFARM_RETURN_IF_ERROR(r->Migrate());
    // Readers never write: the server refuses it for the rest of the session.
    if (mode == Mode::kReadOnly || mode == Mode::kSalvage) {
      const char* read_only = "SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY";
      r->conn_->KeepForSession(read_only);
      if (Status s = r->conn_->Exec(read_only); !s.ok()) {
        return r->Error("cannot make the session read-only", s);
      }
    }
    return r;
  }
  struct stat st;
  const bool exists = stat(location.c_str(), &st) == 0;
  if (mode != Mode::kCreate && !exists) {
    return Status::NotFound("records database " + location + " does not exist");
  }
  // A FIFO would block the open forever, a device or directory is nobody's records.
  if (exists && !S_ISREG(st.st_mode)) {
    const char* kind = S_ISFIFO(st.st_mode)                         ? "a FIFO"
                       : S_ISDIR(st.st_mode)                        ? "a directory"
                       : S_ISSOCK(st.st_mode)                       ? "a socket"
                       : S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) ? "a device"
                                                                    : "not a regular file";
    return Status::InvalidArgument("records database " + location + " is " + kind +
                                   ", not a regular file: give the path of an SQLite records file");
  }
  if (mode == Mode::kReadOnly || mode == Mode::kSalvage) return OpenSqliteReadOnly(location, mode == Mode::kSalvage);
  TUNEFARM_ASSIGN_OR_RETURN(auto conn, OpenSqlite(location, mode == Mode::kCreate));
  std::unique_ptr<RecordsDb> r(new RecordsDb(std::move(conn)));
  TUNEFARM_RETURN_IF_ERROR(r->Migrate());
  return r;
}

Result<std::unique_ptr<RecordsDb>> RecordsDb::OpenSqliteReadOnly(const std::string& path, bool salvage) {
  TUNEFARM_ASSIGN_OR_RETURN(auto conn, tuner::OpenSqliteReadOnly(path, salvage));
  std::unique_ptr<RecordsDb> r(new RecordsDb(std::move(conn)));
  TUNEFARM_ASSIGN_OR_RETURN(int version, r->SchemaVersion());
  const int current = int(Migrations().size());
  if (version < 0 || version > current) return r->Migrate();  // refuses both, writing nothing
  if (version == current) return r;
  // Version 2 differs from 3 only in how workload keys are written (they began with their
  // template): a reader reads it as it is, so compile applies the records of a database an older
  // tunefarm wrote without upgrading it (StoredKey).
  if (version == 2) {
    r->schema_version_ = version;
    return r;
  }
  // A reader never writes the file it was pointed at: not an empty file named by mistake (or
  // reached through someone's symbolic link), not an upgrade of an older schema.
  if (version == 0) {
    return Status::NotFound("records database " + path +
                            " holds no tunefarm records (an empty or foreign SQLite file); readers never write it: "
                            "tune into it or `tunefarm records import` first");
  }
  return Status::FailedPrecondition("records database " + path + " has schema version " + std::to_string(version) +
                                    " and this tunefarm reads version " + std::to_string(current) +
                                    "; readers never write it: a writing command (tunefarm tune, records import, "
                                    "tuner-daemon) upgrades it, keeping its trials");
}

Status RecordsDb::Error(const std::string& what, const Status& cause) {
  const std::string msg = "records database " + location() + ": " + what + ": " + cause.message();
  return cause.code() == StatusCode::kDataLoss ? Status::Corruption(msg) : Status::IOError(msg);
}

// On an error path the first error is what the caller reports; a failed rollback adds nothing
// (both engines roll back an open transaction when the connection closes). Ids cached during the
// transaction may name rows that are gone.
void RecordsDb::Rollback() {
  (void)conn_->Exec("ROLLBACK");
  workload_ids_.clear();
  target_ids_.clear();
}

Result<int> RecordsDb::SchemaVersion() {
  auto version = conn_->SchemaVersion();
  if (version.ok()) return version;
  if (version.status().code() == StatusCode::kDataLoss) {
    return Status::Corruption("records database " + location() + " is not a SQLite database or is damaged (" +
                              version.status().message() + ")");
  }
  return Error("cannot read the schema version", version.status());
}

Status RecordsDb::Migrate() {
  // Read the version before writing anything: a newer database must stay untouched.
  TUNEFARM_ASSIGN_OR_RETURN(int version, SchemaVersion());
  const auto& migrations = Migrations();
  if (version < 0) {
    return Status::Corruption("records database " + location() + " has schema version " + std::to_string(version) +
                              ", which no tunefarm writes: its header is damaged");
  }
  if (version > int(migrations.size())) {
    return Status::FailedPrecondition("records database " + location() + " has schema version " +
                                      std::to_string(version) + ", newer than this tunefarm understands (" +
                                      std::to_string(migrations.size()) + "); use a newer tunefarm");
  }
  if (version == int(migrations.size())) return Status::OK();
  const bool postgres = conn_->engine() == SqlConnection::Engine::kPostgres;
  // Version 0 is a new or empty file; one that holds tables is another program's database, which
  // tunefarm would otherwise fill with its own (issue 46, P10: `records repair -o other_app.db`).
  if (version == 0 && !postgres) {
    auto tables = conn_->Query("SELECT COUNT(*) FROM sqlite_schema WHERE type = 'table'");
    auto row = tables->Next();
    if (!row.ok()) return Error("cannot read the schema", row.status());
    if (tables->Int(0) > 0) {
      return Status::FailedPrecondition("records database " + location() +
                                        " is another program's SQLite database (it holds " +
                                        std::to_string(tables->Int(0)) +
                                        " table(s), none of them tunefarm's): tunefarm makes its records only in a new "
                                        "or empty file; give another path");
    }
  }
  if (Status s = conn_->PrepareForWrites(); !s.ok()) return Error("cannot prepare for writing", s);
  // SQLite rebuilds a table to change its constraints (migration 3), which its foreign keys must
  // not see half-done: they are off while migrating (SQLite ignores the pragma inside a
  // transaction) and on again after. The migrations keep every id, so nothing dangles.
  if (!postgres) {
    if (Status s = conn_->Exec("PRAGMA foreign_keys=OFF"); !s.ok())
      return Error("cannot prepare the schema upgrade", s);
  }
  Status status;
  for (int v = version; v < int(migrations.size()) && status.ok(); ++v) {
    if (Status s = conn_->LockSchema(); !s.ok()) {
      status = Error("cannot lock the schema", s);
      break;
    }
    status = MigrateOnce(v, postgres ? migrations[size_t(v)].postgres : migrations[size_t(v)].sqlite);
    conn_->UnlockSchema();
  }
  if (!postgres) {
    if (Status s = conn_->Exec("PRAGMA foreign_keys=ON"); !s.ok() && status.ok())
      status = Error("cannot finish the schema upgrade", s);
  }
  return status;
}

Status RecordsDb::MigrateOnce(int from_version, const char* ddl) {
  if (Status s = conn_->BeginWrite(); !s.ok()) return Error("cannot start the schema upgrade", s);
  // Another process may have migrated while we waited for the lock.
  auto now = SchemaVersion();
  if (!now.ok() || *now > from_version) {
    Rollback();
    return now.status();
  }
  Status s = conn_->Exec(ddl);
  if (s.ok()) s = conn_->SetSchemaVersion(from_version + 1);
  if (s.ok()) s = conn_->Exec("COMMIT");
  if (!s.ok()) {
    Rollback();
    return Error("cannot upgrade the schema to version " + std::to_string(from_version + 1), s);
  }
  return Status::OK();
}

Result<int64_t> RecordsDb::StoredId(std::map<std::string, int64_t>* cache, const std::string& key, const char* insert,
                                    const char* select, const std::function<void(SqlQuery&, bool insert)>& bind,
                                    const char* what) {
  if (auto it = cache->find(key); it != cache->end()) return it->second;
  auto ins = conn_->Query(insert);  // ON CONFLICT DO NOTHING: another writer may store it first
  bind(*ins, true);
  if (auto r = ins->Next(); !r.ok()) return Error(std::string("cannot store ") + what, r.status());
  auto q = conn_->Query(select);
  bind(*q, false);
  auto row = q->Next();
  if (!row.ok() || !*row) {
    return Error(std::string("cannot read the id of a ") + what,
                 row.ok() ? Status::IOError("not found") : row.status());
  }
  return (*cache)[key] = q->Int(0);
}

std::string RecordsDb::StoredKey(const std::string& workload_key, const std::string& implementation) const {
  return schema_version_ >= 3 ? workload_key : KeyOfSchema2(workload_key, implementation);
}

std::string RecordsDb::TaskCacheKey(const TrialRecord& t) {
  return compiler::TaskName(t.template_name, t.workload_key);
}

Result<int64_t> RecordsDb::WorkloadId(const TrialRecord& t) {
  return StoredId(
      &workload_ids_, TaskCacheKey(t),
      "INSERT INTO workloads(key, template, flops) VALUES(?1, ?2, ?3) ON CONFLICT(key, template) DO NOTHING",
      "SELECT id FROM workloads WHERE key = ?1 AND template = ?2",
      [&](SqlQuery& q, bool insert) {
        q.Bind(1, t.workload_key).Bind(2, t.template_name);
        if (insert) q.Bind(3, t.flops);
      },
      "workload");
}

Result<int64_t> RecordsDb::TargetId(const TrialRecord& t) {
  return StoredId(
      &target_ids_, t.target,
      "INSERT INTO targets(target, model, keys) VALUES(?1, ?2, ?3) ON CONFLICT(target) DO NOTHING",
      "SELECT id FROM targets WHERE target = ?1",
      [&](SqlQuery& q, bool insert) {
        q.Bind(1, t.target);
        if (insert) q.Bind(2, t.target_model).Bind(3, t.target_keys);
      },
      "target");
}

Status RecordsDb::Insert(const TrialRecord& t, bool ignore_duplicates, int64_t* id, std::string* created_at) {
  TUNEFARM_ASSIGN_OR_RETURN(int64_t workload_id, WorkloadId(t));
  TUNEFARM_ASSIGN_OR_RETURN(int64_t target_id, TargetId(t));
  nlohmann::json costs = t.costs_ms;
  const std::string sql =
      std::string(
          "INSERT INTO trials(uid, workload_id, target_id, config_index, config_json, status, error_message,"
          " costs_ms, mean_ms, threads, device_key, device_info, build_ms, run_ms, job_id, created_at)"
          " VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, COALESCE(NULLIF(?16, ''), ") +
      conn_->NowText() + "))" + (ignore_duplicates ? " ON CONFLICT(uid) DO NOTHING" : "") + " RETURNING id, created_at";
  auto s = conn_->Query(sql);
  s->Bind(1, t.uid).Bind(2, workload_id).Bind(3, target_id).Bind(4, t.config_index).Bind(5, t.config_json);
  s->Bind(6, t.status).Bind(7, t.error_message).Bind(8, costs.dump());
  if (t.ok()) {
    s->Bind(9, t.mean_ms);
  } else {
    s->BindNull(9);
  }
  s->Bind(10, int64_t(t.threads))
      .Bind(11, t.device_key)
      .Bind(12, t.device_info)
      .Bind(13, t.build_ms)
      .Bind(14, t.run_ms);
  if (t.job_id > 0) {
    s->Bind(15, t.job_id);
  } else {
    s->BindNull(15);
  }
  s->Bind(16, t.created_at);
  auto row = s->Next();
  if (!row.ok()) return Error("cannot store trial", row.status());
  *id = *row ? s->Int(0) : 0;
  if (*row && created_at) *created_at = s->Text(1);
  return Status::OK();
}

Status RecordsDb::AddTrial(TrialRecord* t, const std::string& claim_holder) {
  if (t->uid.empty()) t->uid = NewUid();
  if (Status s = conn_->BeginWrite(); !s.ok()) return Error("cannot start a transaction", s);
  int64_t id = 0;
  Status s = Insert(*t, false, &id, &t->created_at);
  if (s.ok() && !claim_holder.empty()) {
    auto done = conn_->Query(
        "UPDATE claims SET trial_id = ?1 WHERE workload_id = ?2 AND target_id = ?3 AND config_index = ?4 AND holder = "
        "?5");
    done->Bind(1, id).Bind(2, workload_ids_[TaskCacheKey(*t)]).Bind(3, target_ids_[t->target]).Bind(4, t->config_index);
    done->Bind(5, claim_holder);
    if (auto r = done->Next(); !r.ok()) s = Error("cannot complete the claim", r.status());
  }
  if (s.ok()) {
    if (Status c = conn_->Exec("COMMIT"); !c.ok()) s = Error("cannot commit the trial", c);
  }
  if (!s.ok()) {
    Rollback();
    return s;
  }
  t->id = id;
  return Status::OK();
}

Result<int64_t> RecordsDb::AddTrials(const std::vector<TrialRecord>& trials) {
  if (Status s = conn_->BeginWrite(); !s.ok()) return Error("cannot start a transaction", s);
  int64_t added = 0;
  for (const auto& t : trials) {
    TrialRecord stored = t;
    if (stored.uid.empty()) stored.uid = NewUid();
    int64_t id = 0;
    if (Status s = Insert(stored, true, &id, nullptr); !s.ok()) {
      Rollback();
      return s;
    }
    added += id > 0 ? 1 : 0;
  }
  if (Status s = conn_->Exec("COMMIT"); !s.ok()) {
    Rollback();
    return Error("cannot commit the trials", s);
  }
  return added;
}

Result<std::vector<int64_t>> RecordsDb::Claim(const TrialRecord& task, const std::vector<int64_t>& configs,
                                              const std::string& holder, int64_t ttl_ms,
                                              const std::map<int64_t, int64_t>& retry) {
  std::vector<int64_t> claimed;
  const std::set<int64_t> ordered(configs.begin(), configs.end());  // one lock order for every claimer
  if (ordered.empty()) return claimed;
  if (Status s = conn_->BeginWrite(); !s.ok()) return Error("cannot start a transaction", s);
  auto fail = [&](const Status& s) {
    Rollback();
    return s;
  };
  auto workload_id = WorkloadId(task);
  if (!workload_id.ok()) return fail(workload_id.status());
  auto target_id = TargetId(task);
  if (!target_id.ok()) return fail(target_id.status());
  const std::string now = conn_->NowMs();
  auto q = conn_->Query(
      "INSERT INTO claims(workload_id, target_id, config_index, holder, expires_ms, trial_id) VALUES(?1, ?2, ?3, ?4, " +
      now +
      " + ?5, NULL) ON CONFLICT(workload_id, target_id, config_index) DO UPDATE SET holder = excluded.holder,"
      " expires_ms = excluded.expires_ms, trial_id = NULL WHERE (claims.trial_id IS NULL AND claims.expires_ms < " +
      now + ") OR claims.trial_id = ?6 RETURNING config_index");
  for (int64_t c : ordered) {
    q->Reset();
    q->Bind(1, *workload_id).Bind(2, *target_id).Bind(3, c).Bind(4, holder).Bind(5, ttl_ms);
    const auto again = retry.find(c);
    q->Bind(6, again == retry.end() ? int64_t(-1) : again->second);
    auto row = q->Next();
    if (!row.ok()) return fail(Error("cannot claim configs", row.status()));
    if (*row) claimed.push_back(c);
  }
  q.reset();  // SQLite commits no transaction with a statement still stepping
  if (Status s = conn_->Exec("COMMIT"); !s.ok()) return fail(Error("cannot commit the claims", s));
  return claimed;
}

namespace {
// The advisory lock key of a claim holder (PostgreSQL), as SQL over parameter ?1.
constexpr const char* kHolderKey = "hashtextextended('tunefarm claim holder ' || CAST(?1 AS TEXT), 0)";
}  // namespace

Status RecordsDb::HoldClaimHolder(const std::string& holder) {
  if (!shared()) return Status::OK();
  const std::string lock =
      "SELECT pg_advisory_lock_shared(hashtextextended('tunefarm claim holder ' || " + conn_->Quote(holder) + ", 0))";
  if (Status s = conn_->Exec(lock); !s.ok()) return Error("cannot mark the claim holder alive", s);
  conn_->KeepForSession(lock);
  return Status::OK();
}

Status RecordsDb::ReleaseDeadClaims(const std::string& own_holder) {
  auto pending = conn_->Query("SELECT DISTINCT holder FROM claims WHERE trial_id IS NULL AND holder <> ?1");
  pending->Bind(1, own_holder);
  std::vector<std::string> holders;
  Status status;
  while (Step(*pending, &status)) holders.push_back(pending->Text(0));
  if (!status.ok()) return Error("cannot read the claims", status);
  pending.reset();
  auto release = conn_->Query("UPDATE claims SET expires_ms = 0 WHERE holder = ?1 AND trial_id IS NULL");
  for (const auto& h : holders) {
    bool dead = true;  // SQLite: TuningLock admits one tuning process, this one
    if (shared()) {
      // Nobody holds its lock: the process is gone. Taken only to test, and given back at once.
      auto probe = conn_->Query(std::string("SELECT pg_try_advisory_lock(") + kHolderKey + ")");
      probe->Bind(1, h);
      auto row = probe->Next();
      if (!row.ok() || !*row)
        return Error("cannot test a claim holder", row.ok() ? Status::IOError("no answer") : row.status());
      dead = probe->Int(0) != 0;
      if (dead) {
        auto unlock = conn_->Query(std::string("SELECT pg_advisory_unlock(") + kHolderKey + ")");
        unlock->Bind(1, h);
        (void)unlock->Next();
      }
    }
    if (!dead) continue;
    release->Reset();
    release->Bind(1, h);
    if (auto r = release->Next(); !r.ok()) return Error("cannot release the claims of " + h, r.status());
  }
  return Status::OK();
}

Status RecordsDb::ReleaseClaims(const TrialRecord& task, const std::vector<int64_t>& configs,
                                const std::string& holder) {
  TUNEFARM_ASSIGN_OR_RETURN(int64_t workload_id, WorkloadId(task));
  TUNEFARM_ASSIGN_OR_RETURN(int64_t target_id, TargetId(task));
  auto q = conn_->Query(
      "UPDATE claims SET expires_ms = 0 WHERE workload_id = ?1 AND target_id = ?2 AND config_index = ?3 AND holder = ?4"
      " AND trial_id IS NULL");
  for (int64_t c : configs) {
    q->Reset();
    q->Bind(1, workload_id).Bind(2, target_id).Bind(3, c).Bind(4, holder);
    if (auto r = q->Next(); !r.ok()) return Error("cannot release claims", r.status());
  }
  return Status::OK();
}

Result<std::vector<TrialRecord>> RecordsDb::List(const std::string& workload_key, int64_t limit,
                                                 const std::string& implementation) {
  auto q = conn_->Query(SelectTrialSql() + (workload_key.empty() ? "WHERE CAST(?1 AS TEXT) = ''" : "WHERE w.key = ?1") +
                        (implementation.empty() ? " AND CAST(?3 AS TEXT) = ''" : " AND w.template = ?3") +
                        " ORDER BY t.id LIMIT ?2");
  q->Bind(1, StoredKey(workload_key, implementation)).Bind(2, SqlLimit(limit)).Bind(3, implementation);
  Status status;
  auto out = Rows(
      *q, [this](const SqlQuery& row) { return ReadTrial(row); }, &status);
  if (!status.ok()) return Error("cannot list trials", status);
  return out;
}

Result<std::vector<TrialRecord>> RecordsDb::ListSimilar(const std::string& template_name, const std::string& target,
                                                        const std::string& except_workload, int64_t limit) {
  auto q = conn_->Query(SelectTrialSql() + "WHERE w.template = ?1 AND g.target = ?2 AND w.key != ?3 AND " +
                        kUsableTrial + " ORDER BY t.id DESC LIMIT ?4");
  q->Bind(1, template_name).Bind(2, target).Bind(3, except_workload).Bind(4, SqlLimit(limit));
  Status status;
  auto out = Rows(
      *q, [this](const SqlQuery& row) { return ReadTrial(row); }, &status);
  if (!status.ok()) return Error("cannot list similar trials", status);
  return out;
}

Result<std::vector<TrialRecord>> RecordsDb::TrialsOfTaskAfter(const std::string& workload_key,
                                                              const std::string& implementation,
                                                              const std::string& target, int64_t after_id) {
  auto q = conn_->Query(SelectTrialSql() +
                        "WHERE w.key = ?1 AND g.target = ?2 AND t.id > ?3 AND w.template = ?4 ORDER BY t.id");
  q->Bind(1, workload_key).Bind(2, target).Bind(3, after_id).Bind(4, implementation);
  std::vector<TrialRecord> out;
  Status status;
  while (Step(*q, &status)) out.push_back(ReadTrial(*q));
  if (!status.ok()) return Error("cannot read new trials", status);
  return out;
}

}  // namespace tunefarm::tuner
