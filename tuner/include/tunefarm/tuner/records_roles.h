// The records database's five roles. Each client takes the one it needs, never the whole database:
//   TrialLog            the tuner: trials written one by one, claims that let several tuners share a
//                       database, and the trials of a task already measured (tuner/search)
//   BestConfigs         apply-history-best: the fastest usable trial of a task (RecordsConfigSource)
//   RecordsQueries      the dashboard: aggregates, trial streams read by id, error groups
//   JobStore            tuning jobs and the daemon-name lock (tuner-daemon, `tunefarm tune`'s job row)
//   RecordsMaintenance  check, salvage, import and export, the schema version (`tunefarm records`)
// RecordsDb (tunefarm/tuner/records.h) implements them all over one connection; the program that
// opens it (a command, the daemon, the dashboard) hands each part of itself its role.
//
// Contract: as RecordsDb's. Every error names the database (location(): the file, or the PostgreSQL
// URL without its password). An object is used by one thread at a time (connections are not
// shared). Workload keys are in the current schema's form, in and out.
#ifndef TUNEFARM_TUNER_RECORDS_ROLES_H_
#define TUNEFARM_TUNER_RECORDS_ROLES_H_

#include <cstdint>
#include <functional>
#include <istream>
#include <limits>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "tunefarm/runtime/result.h"
#include "tunefarm/tuner/records_rows.h"

namespace tunefarm::tuner {

// What every role says of the database behind it.
class RecordsRole {
 public:
  virtual ~RecordsRole() = default;
  // The file, or the PostgreSQL URL without its password: what messages and the dashboard show.
  virtual const std::string& location() const = 0;
  // True on PostgreSQL: other machines may write the database at the same time (no file lock).
  virtual bool shared() const = 0;
};

class TrialLog : public virtual RecordsRole {
 public:
  // Sets id, uid (if empty) and created_at. `claim_holder`: the holder of this config's claim
  // (Claim), which the trial completes in the same transaction; "" for none.
  virtual Status AddTrial(TrialRecord* trial, const std::string& claim_holder) = 0;
  Status AddTrial(TrialRecord* trial) { return AddTrial(trial, ""); }

  // Claims: a tuner sharing the database with others measures a config only while it holds the
  // config's claim, so no config of a task is measured twice. `task` names the task (its workload
  // and target fields). Returns the configs of `configs` now claimed for `holder` (in ascending
  // order: every claimer locks rows in that order, so two never deadlock): those never claimed,
  // those whose claim has no trial and expired (ttl_ms after it was taken, by the database's
  // clock) or was released, and those in `retry` whose claim's trial is the one given there (a
  // failure the tuner decided to measure again, config -> the trial id it saw; nobody re-measured
  // it since).
  virtual Result<std::vector<int64_t>> Claim(const TrialRecord& task, const std::vector<int64_t>& configs,
                                             const std::string& holder, int64_t ttl_ms,
                                             const std::map<int64_t, int64_t>& retry) = 0;
  Result<std::vector<int64_t>> Claim(const TrialRecord& task, const std::vector<int64_t>& configs,
                                     const std::string& holder, int64_t ttl_ms) {
    return Claim(task, configs, holder, ttl_ms, {});
  }
  // A holder is alive while a process holds it: HoldClaimHolder marks it so for this connection's
  // life (PostgreSQL: a shared session advisory lock, gone when the process dies however it dies;
  // SQLite: nothing, TuningLock admits one tuning process). ReleaseDeadClaims then releases the
  // unmeasured claims of every other holder that no process holds (SQLite: every other holder).
  virtual Status HoldClaimHolder(const std::string& holder) = 0;
  virtual Status ReleaseDeadClaims(const std::string& own_holder) = 0;
  // Releases holder's unmeasured claims on these configs (a batch that failed half-way).
  virtual Status ReleaseClaims(const TrialRecord& task, const std::vector<int64_t>& configs,
                               const std::string& holder) = 0;
  // Trials of a task (workload by an implementation on target) with id > after_id, in id order:
  // what other tuners sharing the database measured since. (PostgreSQL assigns ids at insert, not
  // at commit: a reader that wants every trial reads from NewTrials::ReadFrom and skips known ones.)
  virtual Result<std::vector<TrialRecord>> TrialsOfTaskAfter(const std::string& workload_key,
                                                             const std::string& implementation,
                                                             const std::string& target, int64_t after_id) = 0;
  // Trials in insertion order, optionally of one workload ("": all) and of one implementation of
  // it ("": every implementation); limit -1: no limit.
  virtual Result<std::vector<TrialRecord>> List(const std::string& workload_key, int64_t limit,
                                                const std::string& implementation) = 0;
  Result<std::vector<TrialRecord>> List(const std::string& workload_key = "", int64_t limit = -1) {
    return List(workload_key, limit, "");
  }
  // Successful trials with a usable time of other workloads of a template on one target, newest
  // first (transfer learning).
  virtual Result<std::vector<TrialRecord>> ListSimilar(const std::string& template_name, const std::string& target,
                                                       const std::string& except_workload, int64_t limit) = 0;
};

class BestConfigs : public virtual RecordsRole {
 public:
  // The fastest successful trial of workload_key by `implementation` for the target: same target
  // string first, then same device model, then a shared key. *matched_on (may be null) says which
  // ("target", "model", "keys"); the caller checks that the config still means the same point of
  // its space (config_json).
  virtual Result<std::optional<TrialRecord>> Best(const std::string& workload_key, const std::string& implementation,
                                                  const TargetMatch& target, std::string* matched_on) = 0;
  Result<std::optional<TrialRecord>> Best(const std::string& workload_key, const std::string& implementation,
                                          const TargetMatch& target) {
    return Best(workload_key, implementation, target, nullptr);
  }
  // The same order, up to `limit` trials (each matched once, at its first step); matched_on (may be
  // null) gets one entry per trial.
  virtual Result<std::vector<TrialRecord>> Ranked(const std::string& workload_key, const std::string& implementation,
                                                  const TargetMatch& target, int limit,
                                                  std::vector<std::string>* matched_on) = 0;
  // Trials of workload_key by `implementation` on exactly `target` with status 'ok' whose mean_ms is
  // not a finite positive number (NULL, NaN, zero, negative, infinite): Best/Ranked never return
  // them, and readers report this count instead.
  virtual Result<int64_t> CountUnusable(const std::string& workload_key, const std::string& implementation,
                                        const std::string& target) = 0;
  // The thread counts the usable trials of workload_key by `implementation` on exactly `target` were
  // measured at, ascending: what a compile for another thread count is told it could use.
  virtual Result<std::vector<int>> RecordedThreadCounts(const std::string& workload_key,
                                                        const std::string& implementation,
                                                        const std::string& target) = 0;
};

// The dashboard's read side (docs/dashboard.md): aggregates, and trial streams read by id, so a
// client that remembers the last id it saw gets only what is new (rowid range scans).
class RecordsQueries : public virtual RecordsRole {
 public:
  virtual Result<int64_t> CountTrials() = 0;
  // job_id: -1 every trial, 0 trials outside daemon jobs, N that job's; workload_id 0: every workload.
  virtual Result<std::vector<TaskStats>> TaskStatsOf(int64_t job_id, int64_t workload_id) = 0;
  Result<std::vector<TaskStats>> TaskStatsOf() { return TaskStatsOf(-1, 0); }
  // Trials with id > after_id in id order, at most limit; workload_id 0: every workload. Reading
  // also stops once the rows read hold max_bytes (their text, and 256 bytes each for the rest),
  // setting *cut (may be null): what a public dashboard answers is bounded by bytes, not by the
  // database.
  virtual Result<std::vector<TrialPoint>> TrialsAfter(int64_t after_id, int64_t workload_id, int64_t limit,
                                                      int64_t max_bytes, bool* cut) = 0;
  Result<std::vector<TrialPoint>> TrialsAfter(int64_t after_id, int64_t workload_id, int64_t limit) {
    return TrialsAfter(after_id, workload_id, limit, std::numeric_limits<int64_t>::max(), nullptr);
  }
  // The newest failed trials, newest first.
  virtual Result<std::vector<TrialRecord>> RecentFailures(int64_t limit) = 0;
  // workload_id 0: every workload. Most frequent first.
  virtual Result<std::vector<ErrorGroup>> ErrorGroups(int64_t workload_id, int64_t limit) = 0;
  // The fastest successful trials of a workload (every target), fastest first.
  virtual Result<std::vector<TrialRecord>> FastestTrials(int64_t workload_id, int64_t limit) = 0;
  virtual Result<std::vector<WorkloadInfo>> Workloads() = 0;
  // NotFound naming the id.
  virtual Result<WorkloadInfo> GetWorkload(int64_t id) = 0;
  // Every implementation of the workload key (one row each), in id order; empty when none.
  virtual Result<std::vector<WorkloadInfo>> FindWorkloads(const std::string& key) = 0;
  virtual Result<std::vector<std::pair<int64_t, std::string>>> Targets() = 0;  // id, target string
  virtual Result<int64_t> LastTrialId() = 0;                                   // 0: none
  // 0: trials outside daemon jobs (job index).
  virtual Result<int64_t> CountTrialsOfJob(int64_t job_id) = 0;
};

class JobStore : public virtual RecordsRole {
 public:
  // PostgreSQL: holds the database's lock on a daemon name (a session-level advisory lock, released
  // when this connection closes or its process dies); FailedPrecondition when another process holds
  // it. SQLite: nothing (TuningLock locks the file).
  virtual Status LockDaemonName(const std::string& name) = 0;
  // Jobs: created queued; unfinished ones (queued, running) are what a restarted daemon resumes.
  // `daemon`: the runner's name ("" for none).
  virtual Result<int64_t> AddJob(const std::string& spec_json, const std::string& daemon) = 0;
  Result<int64_t> AddJob(const std::string& spec_json) { return AddJob(spec_json, ""); }
  // NotFound naming the id when there is no such job.
  virtual Status UpdateJob(int64_t id, JobState state, const std::string& progress_json) = 0;
  virtual Result<std::vector<JobRecord>> ListJobs() = 0;
  // NotFound naming the id.
  virtual Result<JobRecord> GetJob(int64_t id) = 0;
};

class RecordsMaintenance : public virtual RecordsRole {
 public:
  virtual Result<int> SchemaVersion() = 0;
  // Several trials in one transaction, keeping their uid and created_at (import, records copy);
  // trials whose uid is present are skipped. Returns the number added.
  virtual Result<int64_t> AddTrials(const std::vector<TrialRecord>& trials) = 0;
  // Every trial that reads back within the limits and that `records import` would accept
  // (TrialRecord::FromJson of its JSON), one at a time in id order, so that one bad row costs only
  // itself; *skipped gets "trial N: why" for each one left out.
  virtual Result<std::vector<TrialRecord>> Salvage(std::vector<std::string>* skipped) = 0;
  // What is wrong with the database, one line each (empty: nothing): SQL objects tunefarm never
  // writes (triggers, views), a failed SQLite integrity check, and the trials Salvage leaves out.
  virtual Result<std::vector<std::string>> Check() = 0;
  virtual Status ExportJsonLines(std::ostream& out) = 0;
  // All or nothing: one transaction; a malformed line is an error naming its line number.
  // `check`, when given, vets each parsed trial further (the CLI parses its target string).
  // Returns the number of trials added (duplicates by uid are skipped).
  virtual Result<int64_t> ImportJsonLines(std::istream& in, const std::function<Status(const TrialRecord&)>& check) = 0;
  Result<int64_t> ImportJsonLines(std::istream& in) { return ImportJsonLines(in, nullptr); }
};

}  // namespace tunefarm::tuner

#endif  // TUNEFARM_TUNER_RECORDS_ROLES_H_
