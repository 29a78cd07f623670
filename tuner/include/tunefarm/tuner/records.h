// RecordsDb: the records database -- every tuning trial, the tuning jobs, and the best-config
// query the compiler's apply-history-best uses -- in a SQLite file (the embedded default) or on a
// PostgreSQL server (a team's tuning machines sharing one database). docs/formats/records_db.md is
// the schema's specification; both engines hold the same tables and answer the same queries.
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
#include "tunefarm/runtime/trial_status.h"
#include "tunefarm/tuner/tuning_kinds.h"

namespace tunefarm::tuner {

inline constexpr int kRecordsSchemaVersion = 3;

// Outcomes of a trial: TrialStatus (tunefarm/runtime/trial_status.h), stored as its name.
bool IsTrialStatus(const std::string& status);
std::string TrialStatusList();         // "ok, instantiation_error, ..." for messages
bool IsOk(const std::string& status);  // the stored word of TrialStatus::kOk
struct TrialRecord {
  int64_t id = 0;   // assigned by the database
  std::string uid;  // globally unique; import skips trials already present
  // The record key: what was measured (the target-neutral workload key of
  // tunefarm/compiler/workload.h), by which implementation (the template, "template" in JSON and
  // in the workloads table), on which target.
  std::string workload_key;
  std::string template_name;
  double flops = 0;
  std::string target;        // canonical target string
  std::string target_model;  // device model (may be empty)
  std::string target_keys;   // comma-separated keys, e.g. "cpu" or "arm_cpu,cpu"
  int64_t config_index = -1;
  std::string config_json;
  // The stored word, TrialStatusName of a TrialStatus when tunefarm wrote it. Kept as text: a
  // database may hold a word this version does not know (ParseTrialStatus: nullopt), which
  // readers show and the tuner refuses; decisions go through status_kind() and ok().
  std::string status = TrialStatusName(TrialStatus::kOk);
  std::string error_message;
  std::vector<double> costs_ms;  // per repeat
  double mean_ms = 0;
  int threads = 1;
  std::string device_key, device_info;
  double build_ms = 0, run_ms = 0;
  int64_t job_id = 0;      // 0: none
  std::string created_at;  // ISO 8601 UTC, set by the database

  std::string ToJson() const;
  // InvalidArgument naming the missing or mistyped field.
  static Result<TrialRecord> FromJson(const std::string& line);
  // Gflops(flops, mean_ms) of a successful trial; 0 for any other.
  double gflops() const;
  std::optional<TrialStatus> status_kind() const { return ParseTrialStatus(status); }
  bool ok() const { return IsOk(status); }
  // Ok with a time that may be applied (a best config, a task's best, the cost model's fastest): at
  // least a nanosecond (no kernel is faster: 5e-324 ms is an edited row) and finite. The SQL form
  // is records_sql.h's kUsableTrial.
  static constexpr double kMinUsableMs = 1e-6, kMaxUsableMs = 1e300;
  bool usable() const { return ok() && mean_ms >= kMinUsableMs && mean_ms < kMaxUsableMs; }
  void set_status(TrialStatus s) { status = TrialStatusName(s); }
};

// The speed of `flops` floating-point operations done in `ms` milliseconds, in GFLOP/s: flops /
// (ms x 1e6); 0 when ms is not a positive time. Every GFLOP/s tunefarm prints, stores or serves (the
// tuner's summaries, `records`, the dashboard's API, which the page shows as sent) is this one.
double Gflops(double flops, double ms);

// A workload key as schema version 3 stores it. Before it, a key began with its implementation
// ("conv2d_nchwc|N1_C64..."); now with the operator ("conv2d|N1_C64..."), the implementation being
// the template field. A key whose first field is its template becomes the operator's key (from its
// layout field, as migration 3 does); any other key is returned as it is. FromJson applies it, so
// lines exported before the change import as the same tasks.
std::string NeutralWorkloadKey(const std::string& key, const std::string& template_name);

// A task's name (compiler::TaskName, "TEMPLATE:KEY") with the key in this schema's form
// (NeutralWorkloadKey), so a version-2 key names the same task: how the tuner's side (caches, the
// dashboard, `records list`) names a stored trial's task.
std::string TaskName(const std::string& template_name, const std::string& workload_key);

// The jobs table's runner of `tunefarm tune` runs (JobRecord::daemon): a tuner-daemon resumes
// only its own jobs, so none takes these over; a daemon may not take this name.
inline constexpr char kTuneCommandRunner[] = "tunefarm tune";

// A tuning job (tuner-daemon's or a `tunefarm tune` run's) as stored: its spec and progress as JSON
// (tunefarm/tuner/tuning_job.h reads and writes them) and its state.
struct JobRecord {
  int64_t id = 0;
  std::string spec_json, progress_json = "{}";
  // The stored word of the state (NameOf(JobState)). Kept as text because a database may hold a
  // word this version does not know; every decision goes through state_kind().
  std::string state;
  std::string daemon;  // the tuner-daemon's --name that runs it ("" before schema version 2)
  std::string created_at, updated_at;

  Result<JobState> state_kind() const { return ParseJobState(state); }
};

// The dashboard's read side (docs/dashboard.md): aggregates and trial streams read by id, so a
// client that remembers the last id it saw gets only what is new (rowid range scans).

// One task as the dashboard counts it: a workload on a target.
struct TaskStats {
  int64_t workload_id = 0, target_id = 0;
  std::string workload_key, template_name, target, target_model;
  double flops = 0;
  int64_t trials = 0, ok_trials = 0;
  double best_ms = 0;  // 0: no successful trial
  int64_t best_trial_id = 0, last_trial_id = 0;
  std::string first_at, last_at;
};

// A trial without its costs and device text: what charts plot.
struct TrialPoint {
  int64_t id = 0, workload_id = 0, target_id = 0, config_index = -1, job_id = 0;
  std::string config_json, status, device_key, created_at;
  double mean_ms = 0, build_ms = 0;  // mean_ms 0 unless ok
};

// Failed trials grouped by outcome, message and device.
struct ErrorGroup {
  std::string status, message, device_key;
  int64_t count = 0, last_trial_id = 0;
};

struct WorkloadInfo {
  int64_t id = 0;
  std::string key, template_name;
  double flops = 0;
};

struct TargetMatch {
  std::string target, model;
  std::vector<std::string> keys;
};

class SqlConnection;
class SqlQuery;

class RecordsDb {
 public:
  // kReadOnly: for readers (records list/best/stats/export, compile --records). Never writes, so
  // it works in a read-only directory or on a read-only mount. A SQLite file of schema version 2 is
  // read as it is (its keys in their older form, which the queries by workload key and
  // implementation match); an older one is refused naming both versions and the writing commands
  // that upgrade it. (On PostgreSQL the shared database is upgraded on open.)
  // `location`: a SQLite file, or a PostgreSQL server's database as a postgresql:// URL or a
  // libpq keyword string (IsPostgresRecords). On PostgreSQL the database itself must exist (the
  // server's administrator creates it); kCreate and kMustExist both create the tables.
  // kSalvage (SQLite): kReadOnly, except that a file whose schema holds triggers or views is
  // opened rather than refused -- they stay disabled and never run -- so that Check can say what is
  // wrong and Salvage can keep the trials (`records check`, `records repair`).
  enum class Mode { kCreate, kMustExist, kReadOnly, kSalvage };
  static Result<std::unique_ptr<RecordsDb>> Open(const std::string& location, Mode mode);
  ~RecordsDb();
  RecordsDb(const RecordsDb&) = delete;
  RecordsDb& operator=(const RecordsDb&) = delete;

  // The file, or the PostgreSQL URL without its password: what messages and the dashboard show.
  const std::string& location() const;
  // True on PostgreSQL: other machines may write the database at the same time (no file lock).
  bool shared() const;
  Result<int> SchemaVersion();

  // Sets id, uid (if empty) and created_at. `claim_holder`: the holder of this config's claim
  // (Claim), which the trial completes in the same transaction.
  Status AddTrial(TrialRecord* trial, const std::string& claim_holder = "");
  // Several trials in one transaction, keeping their uid and created_at (import, records copy);
  // trials whose uid is present are skipped. Returns the number added.
  Result<int64_t> AddTrials(const std::vector<TrialRecord>& trials);

  // Claims: a tuner sharing the database with others measures a config only while it holds the
  // config's claim, so no config of a task is measured twice. `task` names the task (its workload
  // and target fields). Returns the configs of `configs` now claimed for `holder` (in ascending
  // order: every claimer locks rows in that order, so two never deadlock): those never claimed,
  // those whose claim has no trial and expired (ttl_ms after it was taken, by the database's
  // clock) or was released, and those in `retry` whose claim's trial is the one given there (a
  // failure the tuner decided to measure again, config -> the trial id it saw; nobody re-measured
  // it since).
  Result<std::vector<int64_t>> Claim(const TrialRecord& task, const std::vector<int64_t>& configs,
                                     const std::string& holder, int64_t ttl_ms,
                                     const std::map<int64_t, int64_t>& retry = {});
  // A holder is alive while a process holds it: HoldClaimHolder marks it so for this connection's
  // life (PostgreSQL: a shared session advisory lock, gone when the process dies however it dies;
  // SQLite: nothing, TuningLock admits one tuning process). ReleaseDeadClaims then releases the
  // unmeasured claims of every other holder that no process holds (SQLite: every other holder).
  Status HoldClaimHolder(const std::string& holder);
  Status ReleaseDeadClaims(const std::string& own_holder);
  // Releases holder's unmeasured claims on these configs (a batch that failed half-way).
  Status ReleaseClaims(const TrialRecord& task, const std::vector<int64_t>& configs, const std::string& holder);
  // Trials of a task (workload by an implementation on target) with id > after_id, in id order:
  // what other tuners sharing the database measured since. (PostgreSQL assigns ids at insert, not at commit: a
  // reader that wants every trial looks back a little below its last id and skips known ones.)
  Result<std::vector<TrialRecord>> TrialsOfTaskAfter(const std::string& workload_key, const std::string& implementation,
                                                     const std::string& target, int64_t after_id);
  // The fastest successful trial of workload_key by `implementation` for the target: same target string first, then
  // same device model, then a shared key. *matched_on says which ("target", "model", "keys"); the
  // caller checks that the config still means the same point of its space (config_json).
  Result<std::optional<TrialRecord>> Best(const std::string& workload_key, const std::string& implementation,
                                          const TargetMatch& target, std::string* matched_on = nullptr);
  // The same order, up to `limit` trials (each matched once, at its first step); matched_on gets
  // one entry per trial.
  Result<std::vector<TrialRecord>> Ranked(const std::string& workload_key, const std::string& implementation,
                                          const TargetMatch& target, int limit,
                                          std::vector<std::string>* matched_on = nullptr);
  // Trials of workload_key by `implementation` on exactly `target` with status 'ok' whose mean_ms is not a finite
  // positive number (NULL, NaN, zero, negative, infinite): Best/Ranked never return them, and
  // readers report this count instead.
  Result<int64_t> CountUnusable(const std::string& workload_key, const std::string& implementation,
                                const std::string& target);
  // Every trial that reads back within the limits and that `records import` would accept
  // (TrialRecord::FromJson of its JSON), one at a time in id order, so that one bad row costs only
  // itself; *skipped gets "trial N: why" for each one left out.
  Result<std::vector<TrialRecord>> Salvage(std::vector<std::string>* skipped);
  // What is wrong with the database, one line each (empty: nothing): SQL objects tunefarm never
  // writes (triggers, views), a failed SQLite integrity check, and the trials Salvage leaves out.
  Result<std::vector<std::string>> Check();
  // Trials in insertion order, optionally of one workload (empty: all) and of one implementation
  // of it (empty: every implementation).
  Result<std::vector<TrialRecord>> List(const std::string& workload_key = "", int64_t limit = -1,
                                        const std::string& implementation = "");
  // Successful trials with a usable time of other workloads of a template on one target, newest
  // first (transfer learning).
  Result<std::vector<TrialRecord>> ListSimilar(const std::string& template_name, const std::string& target,
                                               const std::string& except_workload, int64_t limit);
  Result<int64_t> CountTrials();

  // Dashboard queries. job_id: -1 every trial, 0 trials outside daemon jobs, N that job's;
  // workload_id 0: every workload.
  Result<std::vector<TaskStats>> TaskStatsOf(int64_t job_id = -1, int64_t workload_id = 0);
  // Trials with id > after_id in id order, at most limit; workload_id 0: every workload. Reading
  // also stops once the rows read hold max_bytes (their text, and 256 bytes each for the rest),
  // setting *cut: what a public dashboard answers is bounded by bytes, not by the database.
  Result<std::vector<TrialPoint>> TrialsAfter(int64_t after_id, int64_t workload_id, int64_t limit,
                                              int64_t max_bytes = std::numeric_limits<int64_t>::max(),
                                              bool* cut = nullptr);
  // The newest failed trials, newest first.
  Result<std::vector<TrialRecord>> RecentFailures(int64_t limit);
  // workload_id 0: every workload. Most frequent first.
  Result<std::vector<ErrorGroup>> ErrorGroups(int64_t workload_id, int64_t limit);
  // The fastest successful trials of a workload (every target), fastest first.
  Result<std::vector<TrialRecord>> FastestTrials(int64_t workload_id, int64_t limit);
  Result<std::vector<WorkloadInfo>> Workloads();
  // NotFound naming the id.
  Result<WorkloadInfo> GetWorkload(int64_t id);
  // Every implementation of the workload key (one row each), in id order; empty when none.
  Result<std::vector<WorkloadInfo>> FindWorkloads(const std::string& key);
  Result<std::vector<std::pair<int64_t, std::string>>> Targets();  // id, target string
  Result<int64_t> LastTrialId();                                   // 0: none
  Result<int64_t> CountTrialsOfJob(int64_t job_id);                // 0: trials outside daemon jobs (job index)

  // PostgreSQL: holds the database's lock on a daemon name (a session-level advisory lock, released
  // when this RecordsDb closes or its process dies); FailedPrecondition when another process holds
  // it. SQLite: nothing (TuningLock locks the file).
  Status LockDaemonName(const std::string& name);

  // Jobs: created queued; unfinished ones (queued, running) are what a restarted daemon resumes.
  Result<int64_t> AddJob(const std::string& spec_json, const std::string& daemon = "");
  Status UpdateJob(int64_t id, JobState state, const std::string& progress_json);
  Result<std::vector<JobRecord>> ListJobs();
  // NotFound naming the id.
  Result<JobRecord> GetJob(int64_t id);

  Status ExportJsonLines(std::ostream& out);
  // All or nothing: one transaction; a malformed line is an error naming its line number.
  // `check`, when given, vets each parsed trial further (the CLI parses its target string).
  // Returns the number of trials added (duplicates by uid are skipped).
  Result<int64_t> ImportJsonLines(std::istream& in, const std::function<Status(const TrialRecord&)>& check = nullptr);

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
