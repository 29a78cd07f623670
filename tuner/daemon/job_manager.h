// JobManager: tuner-daemon's jobs. A job tunes every task of one model for one target under its
// budget (tuner.h's TuneTasks); jobs and their progress live in the records database's `jobs`
// table, so a daemon started again on the same database resumes every job that was queued or
// running -- their finished trials are in the database, so nothing is measured twice.
//
// Contract: Submit fills in the spec's defaults and validates it (target, budgets, input shapes)
// before anything is stored. At most
// max_running jobs tune at once; they share one measurer per (tracker, key) -- or the local runner
// -- through a FairMeasurer, so their batches alternate. Two jobs that share a workload on a target
// never run at once (both would measure the same configs): the later one waits. Jobs also wait for
// memory: each reserves an estimate (EstimateJobBytes) out of job_memory_bytes before it imports
// its model, keeps a smaller one while it tunes, and a job whose estimate exceeds the whole budget
// is refused at submit, as is a job past 256 unfinished ones (each waits on a thread of its own).
// Cancel stops a job once its measurement in flight is done. Destruction stops every job the same way and leaves
// them `running` in the database (to be resumed), never `cancelled`. A job whose import or first
// trials the daemon did not survive twice (a crash, SIGKILL) is failed at the next start, not
// resumed (TuningJob::interrupted_runs).
// Thread safety: every method may be called from any thread (gRPC handlers).
#ifndef TUNEFARM_TUNER_DAEMON_JOB_MANAGER_H_
#define TUNEFARM_TUNER_DAEMON_JOB_MANAGER_H_

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "tunefarm/runtime/mutex.h"
#include "tunefarm/service/auth.h"
#include "tunefarm/tuner/tuner.h"
#include "tunefarm/tuner/tuning_job.h"
#include "tunefarm/tuner/tuning_run.h"

namespace tunefarm::tuner {

struct DaemonOptions {
  std::string records;  // the records database (jobs and trials): a file or a PostgreSQL URL
  // Which jobs are this daemon's: several daemons sharing one PostgreSQL database each resume only
  // their own, and two daemons of one name on one database are refused.
  std::string name = "tuner-daemon";
  std::string tracker, key;  // default runner: the farm; empty tracker: local
  std::string token;         // farm token for the tracker
  service::TlsFiles tls;
  std::string measure_child;  // local runner's tunefarm-measure-child
  std::string tmp_root = "/tmp";
  int max_running = 2;
  int build_jobs = DefaultBuildJobs();
  // What the jobs' estimates may add up to at once (0: half of this machine's memory).
  int64_t job_memory_bytes = 0;
};

// The memory a job is expected to need: while it imports its model (the file, its parsed protobuf
// and the graph's weights: three times the file and the external data it names; a zoo model counts
// as 128 MiB of weights) and
// then while it tunes (feature matrices, the cost model, candidate builds: 256 MiB). A path that
// cannot be read counts as a zoo model; the import itself reports what is wrong with it.
struct JobMemory {
  int64_t import_bytes = 0, tune_bytes = 0;
};
JobMemory EstimateJobBytes(const TuningJobSpec& spec);

class JobManager {
 public:
  static Result<std::unique_ptr<JobManager>> Start(DaemonOptions options);
  ~JobManager();

  Result<TuningJob> Submit(const TuningJobSpec& spec) EXCLUDES(mu_);
  std::vector<TuningJob> List() EXCLUDES(mu_);
  Result<TuningJob> Get(int64_t id) EXCLUDES(mu_);
  // *already_ended (when given): the job had ended before, so nothing was cancelled.
  Result<TuningJob> Cancel(int64_t id, bool* already_ended = nullptr) EXCLUDES(mu_);
  // A job with its latest progress line and its version (which grows with every change).
  struct Snapshot {
    TuningJob job;
    std::string line;
    uint64_t version = 0;
  };
  Result<Snapshot> GetSnapshot(int64_t id) EXCLUDES(mu_);
  // `on_change` runs after any job changed, on the manager's one notifier thread, without its lock
  // (it may call Get/GetSnapshot). Unsubscribe returns once no call of it is running.
  int64_t Subscribe(std::function<void()> on_change);
  void Unsubscribe(int64_t subscription);

 private:
  struct Job;
  explicit JobManager(DaemonOptions options) : options_(std::move(options)) {}
  void Launch(const std::shared_ptr<Job>& job);
  void RunJob(const std::shared_ptr<Job>& job) EXCLUDES(mu_);
  // The job's run through the one runner (tunefarm/tuner/tuning_run.h), on a connection of its own;
  // failed without running when the records, the plan or the measurer are not to be had.
  TuningRunEnd Tune(Job& job, int64_t job_id, const Result<TuningRunPlan>& plan, const Result<Measurer*>& measurer)
      EXCLUDES(mu_);
  Result<Measurer*> MeasurerFor(const TuningJobSpec& spec) REQUIRES(mu_);
  // Waits until the job's import estimate fits the memory budget and reserves it in *held; false
  // when the job may not import (failed: it can never fit; stopped meanwhile).
  bool WaitForImportMemory(Job& job, const JobMemory& need, int64_t* held) REQUIRES(mu_);
  void Persist(Job& job) REQUIRES(mu_);
  // A job stopped before it ran: stored cancelled when Cancel asked for it.
  void CancelledWhileQueued(Job& job) REQUIRES(mu_);
  // Moves a job's memory reservation from *held to `bytes` and wakes the jobs waiting for memory.
  void KeepMemory(int64_t* held, int64_t bytes) REQUIRES(mu_);
  // Whether a running job tunes one of `keys` ("workload key @ target").
  bool Overlaps(const std::vector<std::string>& keys) const REQUIRES(mu_);
  // A running job leaves the running set (its memory, slot and workloads) and wakes the waiters.
  void Leave(int64_t* held, const std::vector<std::string>& keys) REQUIRES(mu_);
  void NotifyLoop() EXCLUDES(mu_);

  DaemonOptions options_;
  Mutex mu_;
  CondVar changed_;
  std::unique_ptr<JobStore> job_store_ GUARDED_BY(mu_);
  std::unique_ptr<TuningLock> lock_;  // held for the daemon's life
  std::map<int64_t, std::shared_ptr<Job>> jobs_ GUARDED_BY(mu_);
  std::map<std::string, std::unique_ptr<FairMeasurer>> measurers_ GUARDED_BY(mu_);
  int running_ GUARDED_BY(mu_) = 0;
  int64_t memory_budget_ = 0;  // options_.job_memory_bytes, or half of the machine's memory; set by Start
  int64_t memory_reserved_ GUARDED_BY(mu_) = 0;      // the estimates of the jobs that hold memory
  std::multiset<std::string> busy_ GUARDED_BY(mu_);  // "workload key @ target" of running jobs' tasks
  bool shutting_down_ GUARDED_BY(mu_) = false;
  uint64_t changes_ GUARDED_BY(mu_) = 0;  // every job version change counts one
  bool notifier_stop_ GUARDED_BY(mu_) = false;
  std::thread notifier_;
  // Recursive: a subscriber's callback runs under it, and may end its stream there (EventStream:
  // gRPC runs OnDone inline in Finish), whose Cleanup() calls Unsubscribe() on the same thread.
  RecursiveMutex subscribers_mu_;
  std::map<int64_t, std::function<void()>> subscribers_ GUARDED_BY(subscribers_mu_);
  int64_t next_subscriber_ GUARDED_BY(subscribers_mu_) = 1;
};

}  // namespace tunefarm::tuner

#endif  // TUNEFARM_TUNER_DAEMON_JOB_MANAGER_H_
