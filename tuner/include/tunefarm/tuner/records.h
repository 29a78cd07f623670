// RecordsDb: the records database -- every tuning trial, the tuning jobs, and the best-config
// query the compiler's apply-history-best uses -- in a SQLite file (the embedded default) or on a
// PostgreSQL server (a team's tuning machines sharing one database). docs/formats/records_db.md is
// the schema's specification; both engines hold the same tables and answer the same queries.
// It implements the five roles of tunefarm/tuner/records_roles.h over one connection: the program
// that opens it holds it and hands each of its parts the role that part needs.
//
// Contract: the schema is versioned and upgraded by ordered migrations on open; a database from a
// newer tunefarm is refused before anything is written. Every write is its own transaction, so a
// crash loses at most the trial being written (a trial is committed when it completes), and
// several processes may write concurrently (SQLite: WAL, BEGIN IMMEDIATE, busy timeout 5 s).
// Several tuners sharing one database measure each config once through claims (Claim). Errors name
// the database: the file, or the PostgreSQL URL without its password.
// Thread safety: one RecordsDb per thread (connections are not shared).
#ifndef TUNEFARM_TUNER_RECORDS_H_
#define TUNEFARM_TUNER_RECORDS_H_

#include <functional>
#include <istream>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include "tunefarm/runtime/result.h"
#include "tunefarm/tuner/records_roles.h"

namespace tunefarm::tuner {

class SqlConnection;
class SqlQuery;

class RecordsDb final : public TrialLog,
                        public BestConfigs,
                        public RecordsQueries,
                        public JobStore,
                        public RecordsMaintenance {
 public:
  // kReadOnly: for readers (records list/best/stats/export, compile --records). Never writes, so
  // it works in a read-only directory or on a read-only mount. A SQLite file of schema version 2 is
  // read as it is, its keys converted to this schema's form as they are read and back for the
  // queries (legacy_keys.h); an older one is refused naming both versions and the writing commands
  // that upgrade it. (On PostgreSQL the shared database is upgraded on open.)
  // `location`: a SQLite file, or a PostgreSQL server's database as a postgresql:// URL or a
  // libpq keyword string (IsPostgresRecords). On PostgreSQL the database itself must exist (the
  // server's administrator creates it); kCreate and kMustExist both create the tables.
  // kSalvage (SQLite): kReadOnly, except that a file whose schema holds triggers or views is
  // opened rather than refused -- they stay disabled and never run -- so that Check can say what is
  // wrong and Salvage can keep the trials (`records check`, `records repair`).
  enum class Mode { kCreate, kMustExist, kReadOnly, kSalvage };
  static Result<std::unique_ptr<RecordsDb>> Open(const std::string& location, Mode mode);
  ~RecordsDb() override;
  RecordsDb(const RecordsDb&) = delete;
  RecordsDb& operator=(const RecordsDb&) = delete;

  const std::string& location() const override;
  bool shared() const override;

  // The roles' convenience overloads, next to the overrides below.
  using BestConfigs::Best;
  using JobStore::AddJob;
  using RecordsMaintenance::ImportJsonLines;
  using RecordsQueries::TaskStatsOf;
  using RecordsQueries::TrialsAfter;
  using TrialLog::AddTrial;
  using TrialLog::Claim;
  using TrialLog::List;

  // TrialLog
  Status AddTrial(TrialRecord* trial, const std::string& claim_holder) override;
  Result<std::vector<int64_t>> Claim(const TrialRecord& task, const std::vector<int64_t>& configs,
                                     const std::string& holder, int64_t ttl_ms,
                                     const std::map<int64_t, int64_t>& retry) override;
  Status HoldClaimHolder(const std::string& holder) override;
  Status ReleaseDeadClaims(const std::string& own_holder) override;
  Status ReleaseClaims(const TrialRecord& task, const std::vector<int64_t>& configs,
                       const std::string& holder) override;
  Result<std::vector<TrialRecord>> TrialsOfTaskAfter(const std::string& workload_key, const std::string& implementation,
                                                     const std::string& target, int64_t after_id) override;
  Result<std::vector<TrialRecord>> List(const std::string& workload_key, int64_t limit,
                                        const std::string& implementation) override;
  Result<std::vector<TrialRecord>> ListSimilar(const std::string& template_name, const std::string& target,
                                               const std::string& except_workload, int64_t limit) override;

  // BestConfigs
  Result<std::optional<TrialRecord>> Best(const std::string& workload_key, const std::string& implementation,
                                          const TargetMatch& target, std::string* matched_on) override;
  Result<std::vector<TrialRecord>> Ranked(const std::string& workload_key, const std::string& implementation,
                                          const TargetMatch& target, int limit,
                                          std::vector<std::string>* matched_on) override;
  Result<int64_t> CountUnusable(const std::string& workload_key, const std::string& implementation,
                                const std::string& target) override;
  Result<std::vector<int>> RecordedThreadCounts(const std::string& workload_key, const std::string& implementation,
                                                const std::string& target) override;

  // RecordsQueries
  Result<int64_t> CountTrials() override;
  Result<std::vector<TaskStats>> TaskStatsOf(int64_t job_id, int64_t workload_id) override;
  Result<std::vector<TrialPoint>> TrialsAfter(int64_t after_id, int64_t workload_id, int64_t limit, int64_t max_bytes,
                                              bool* cut) override;
  Result<std::vector<TrialRecord>> RecentFailures(int64_t limit) override;
  Result<std::vector<ErrorGroup>> ErrorGroups(int64_t workload_id, int64_t limit) override;
  Result<std::vector<TrialRecord>> FastestTrials(int64_t workload_id, int64_t limit) override;
  Result<std::vector<WorkloadInfo>> Workloads() override;
  Result<WorkloadInfo> GetWorkload(int64_t id) override;
  Result<std::vector<WorkloadInfo>> FindWorkloads(const std::string& key) override;
  Result<std::vector<std::pair<int64_t, std::string>>> Targets() override;
  Result<int64_t> LastTrialId() override;
  Result<int64_t> CountTrialsOfJob(int64_t job_id) override;

  // JobStore
  Status LockDaemonName(const std::string& name) override;
  Result<int64_t> AddJob(const std::string& spec_json, const std::string& daemon) override;
  Status UpdateJob(int64_t id, JobState state, const std::string& progress_json) override;
  Result<std::vector<JobRecord>> ListJobs() override;
  Result<JobRecord> GetJob(int64_t id) override;

  // RecordsMaintenance
  Result<int> SchemaVersion() override;
  Result<int64_t> AddTrials(const std::vector<TrialRecord>& trials) override;
  Result<std::vector<TrialRecord>> Salvage(std::vector<std::string>* skipped) override;
  Result<std::vector<std::string>> Check() override;
  Status ExportJsonLines(std::ostream& out) override;
  Result<int64_t> ImportJsonLines(std::istream& in, const std::function<Status(const TrialRecord&)>& check) override;

 private:
  explicit RecordsDb(std::unique_ptr<SqlConnection> conn);
  Status Migrate();
  Status MigrateOnce(int from_version, const char* ddl);  // one step, under the schema lock
  static Result<std::unique_ptr<RecordsDb>> OpenSqliteReadOnly(const std::string& path, bool salvage);
  void Rollback();
  // IOError "records database LOCATION: what: the engine's message" (a damaged file stays Corruption).
  Status Error(const std::string& what, const Status& cause);
  // The id of a workload or target row, stored first when missing (cached per connection).
  Result<int64_t> StoredId(std::map<std::string, int64_t>* cache, const std::string& key, const char* insert,
                           const char* select, const std::function<void(SqlQuery&, bool insert)>& bind,
                           const char* what);
  static std::string TaskCacheKey(const TrialRecord& t);  // workload_ids_'s key: template and workload key
  Result<int64_t> WorkloadId(const TrialRecord& t);
  Result<int64_t> TargetId(const TrialRecord& t);
  // Inserts one trial inside the caller's transaction; *id 0 when its uid was present.
  Status Insert(const TrialRecord& t, bool ignore_duplicates, int64_t* id, std::string* created_at);
  // The key as the open database stores it: workload_key itself, or, in a version-2 database a
  // reader left as it is, its form then ("conv2d_nchwc|N1..." for conv2d|N1... by conv2d_nchwc).
  std::string StoredKey(const std::string& workload_key, const std::string& implementation) const;
  // The inverse, for what is read: a stored key in this schema's form.
  std::string CurrentKey(const std::string& stored_key, const std::string& implementation) const;
  // A row of SelectTrialSql() (tuner/records/records_sql.h), its key in this schema's form.
  TrialRecord ReadTrial(const SqlQuery& q) const;
  WorkloadInfo ReadWorkload(const SqlQuery& q) const;  // a row of the workloads table, likewise
  std::unique_ptr<SqlConnection> conn_;
  int schema_version_ = kRecordsSchemaVersion;  // 2: a version-2 database opened by a reader
  // Ids of workloads and targets known to be stored: a trial then costs one INSERT.
  std::map<std::string, int64_t> workload_ids_, target_ids_;
};

// True when `location` names a PostgreSQL database (postgresql:// or postgres://, or a libpq
// keyword string such as "host=db dbname=records"); anything else is a SQLite file.
bool IsPostgresRecords(const std::string& location);
// What to show of a location: a SQLite path as is; a PostgreSQL one as postgresql://user@host:port/db,
// never its password.
std::string DisplayRecordsLocation(const std::string& location);

// NewTrials: reading "what is new" by trial id, as a tuner taking in other tuners' trials, the
// dashboard's metrics and its stream do. PostgreSQL assigns ids at insert, not at commit, so a
// trial can become visible after one with a higher id was read; a reader reads again from
// ReadFrom(), a window below the newest id it has seen, and keeps only the trials First() has not
// seen. Trials commit one by one, so few are ever in flight; the window is far wider.
class NewTrials {
 public:
  static constexpr int64_t kWindow = 1024;
  int64_t ReadFrom() const { return newest_ > kWindow ? newest_ - kWindow : 0; }
  // True the first time `id` is offered; ids below the window are forgotten (never offered again).
  bool First(int64_t id) {
    if (id <= ReadFrom() || !seen_.insert(id).second) return false;
    if (id > newest_) {
      newest_ = id;
      seen_.erase(seen_.begin(), seen_.upper_bound(ReadFrom()));
    }
    return true;
  }

 private:
  int64_t newest_ = 0;
  std::set<int64_t> seen_;
};

// TuningLock: one tuning writer per records database -- a `tunefarm tune` or a tuner-daemon -- so
// two of them never measure the same configs twice or both resume one job. An advisory lock
// (flock) on DB + ".tuning-lock", released when the holder exits, however it exits; the file says
// who holds it. Readers (compile, records, dashboard) take no lock. The lock file is never a way to
// write elsewhere: a symbolic link, a FIFO or other non-regular file, a file of another user, or a
// file that does not read as a lock is refused (FailedPrecondition naming it), never followed or
// overwritten.
class TuningLock {
 public:
  // FailedPrecondition naming the database and the holder ("pid 4242: tunefarm tune resnet-18")
  // when another process holds it, or naming the lock file when it is one of the traps above;
  // IOError with the OS's reason when the lock file cannot be made.
  static Result<std::unique_ptr<TuningLock>> Acquire(const std::string& db_path, const std::string& holder);
  ~TuningLock();
  TuningLock(const TuningLock&) = delete;
  TuningLock& operator=(const TuningLock&) = delete;

 private:
  explicit TuningLock(int fd) : fd_(fd) {}
  int fd_;
};

}  // namespace tunefarm::tuner

#endif  // TUNEFARM_TUNER_RECORDS_H_
