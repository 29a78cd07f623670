#include "tuner/daemon/job_manager.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <thread>
#include <tuple>

#include "tunefarm/compiler/model.h"
#include "tunefarm/tuner/tuning_run.h"

namespace tunefarm::tuner {
namespace {

// Defaults filled in and every field checked; InvalidArgument naming the field.
Status Normalize(TuningJobSpec* spec, const DaemonOptions& daemon) {
  if (spec->model.empty()) return Status::InvalidArgument("job spec: model is empty (a zoo name or an ONNX path)");
  *spec = WithDefaults(std::move(*spec));
  auto target = compiler::ParseTarget(spec->target);
  if (!target.ok()) return Status::InvalidArgument("job spec: " + target.status().message());
  for (const auto& [field, value, max] :
       {std::tuple<const char*, int64_t, int64_t>{"trials_per_task", spec->trials_per_task, kMaxTrialsPerTask},
        {"total_trials", spec->total_trials, kMaxTotalTrials},
        {"early_stopping", spec->early_stopping, kMaxEarlyStopping},
        {"threads", spec->threads, kMaxJobThreads}}) {
    if (value < 0 || value > max) {
      return Status::InvalidArgument("job spec: " + std::string(field) + " " + std::to_string(value) +
                                     " is out of range: expected 0 (the default) to " + std::to_string(max));
    }
  }
  if (spec->input_shapes.size() > 64) return Status::InvalidArgument("job spec: more than 64 input_shapes");
  std::set<std::string> shaped;
  for (const std::string& text : spec->input_shapes) {
    auto shape = compiler::ParseInputShape(text);
    if (!shape.ok()) return Status::InvalidArgument("job spec: input_shapes: " + shape.status().message());
    if (!shaped.insert(shape->name).second) {
      return Status::InvalidArgument("job spec: input_shapes gives input '" + shape->name + "' twice");
    }
  }
  if (!spec->tracker.empty() && spec->key.empty()) return Status::InvalidArgument("job spec: tracker without key");
  const bool farm = !spec->tracker.empty() || !daemon.tracker.empty();
  if (!farm && !target->is_host) {
    return Status::InvalidArgument("job spec: target " + target->ToString() +
                                   " does not run on the daemon's machine and the daemon has no --tracker");
  }
  return Status::OK();
}

constexpr int64_t kMiB = int64_t(1) << 20;
// A job whose runs ended this many times with the daemon is failed instead of resumed.
constexpr int kMaxInterruptedRuns = 2;
// Jobs queued or running at once (each waits on its own thread).
constexpr int64_t kMaxUnfinishedJobs = 256;

std::string Mib(int64_t bytes) { return std::to_string((bytes + kMiB - 1) / kMiB) + " MiB"; }

}  // namespace

JobMemory EstimateJobBytes(const TuningJobSpec& spec) {
  constexpr int64_t kZooModelBytes = 128 * kMiB, kTuneBytes = 256 * kMiB, kImportFactor = 3;
  struct stat st {};
  const bool file = stat(spec.model.c_str(), &st) == 0 && S_ISREG(st.st_mode);
  int64_t model = file ? int64_t(st.st_size) : kZooModelBytes;
  // Weights beside the model count as much as weights inside it (a 146-byte model may name 3 GiB).
  if (file)
    model += int64_t(std::min<uint64_t>(compiler::ModelExternalDataBytes(spec.model).value_or(0), uint64_t(1) << 50));
  return JobMemory{kTuneBytes + kImportFactor * model, kTuneBytes};
}

// Under the manager's mu_ (&JobManager::mu_: the analysis cannot name the manager from here).
struct JobManager::Job {
  TuningJob state GUARDED_BY(&JobManager::mu_);  // what the jobs table stores
  uint64_t version GUARDED_BY(&JobManager::mu_) = 0;
  std::string line GUARDED_BY(&JobManager::mu_);
  std::atomic<bool> stop{false};
  bool cancel_requested GUARDED_BY(&JobManager::mu_) = false;
  std::thread thread;  // started under mu_, joined by the destructor once every job is stopped
};

Result<std::unique_ptr<JobManager>> JobManager::Start(DaemonOptions options) {
  if (options.name == kTuneCommandRunner) {
    return Status::InvalidArgument(std::string("--name '") + kTuneCommandRunner +
                                   "' is what the jobs table calls `tunefarm tune` runs; give the daemon another name");
  }
  std::unique_ptr<JobManager> m(new JobManager(std::move(options)));
  m->memory_budget_ = m->options_.job_memory_bytes;
  if (m->memory_budget_ <= 0) m->memory_budget_ = int64_t(sysconf(_SC_PHYS_PAGES)) * sysconf(_SC_PAGESIZE) / 2;
  // The manager's connection (job_store_, under mu_ from here on), opened before any thread exists.
  TUNEFARM_ASSIGN_OR_RETURN(auto db, RecordsDb::Open(m->options_.records, RecordsDb::Mode::kCreate));
  // A file takes one tuner: a second daemon (or a `tunefarm tune`) would resume the same jobs. On
  // PostgreSQL, tuners share the database through claims, and each daemon resumes its own jobs.
  if (db->shared()) {
    // A daemon restarted at once may find its previous session's lock still held: the server ends
    // a dead client's session moments after its connection drops.
    Status locked = db->LockDaemonName(m->options_.name);
    for (int i = 0; i < 20 && locked.code() == StatusCode::kFailedPrecondition; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(250));
      locked = db->LockDaemonName(m->options_.name);
    }
    TUNEFARM_RETURN_IF_ERROR(locked);
  } else {
    TUNEFARM_ASSIGN_OR_RETURN(m->lock_, TuningLock::Acquire(m->options_.records, "tuner-daemon"));
  }
  TUNEFARM_ASSIGN_OR_RETURN(auto stored, db->ListJobs());
  std::vector<std::shared_ptr<Job>> resume;
  MutexLock lock(&m->mu_);
  m->job_store_ = std::move(db);
  for (const auto& r : stored) {
    if (!r.daemon.empty() && r.daemon != m->options_.name) continue;  // another daemon's
    auto job = std::make_shared<Job>();
    TuningJob& stored = job->state;
    if (!ParseStoredProgress(r.progress_json, &stored).ok()) stored = TuningJob();
    // A job this daemon cannot read back is shown failed, saying why; its row stays as it is.
    Result<TuningJobSpec> spec = ParseStoredSpec(r.spec_json);
    Result<JobState> state = r.state_kind();
    if (!spec.ok() || !state.ok()) {
      stored.state = JobState::kFailed;
      stored.message = spec.ok() ? "stored job: " + state.status().message() : spec.status().message();
    } else {
      stored.spec = *spec;
      stored.state = *state;
    }
    stored.id = r.id;
    stored.created_at = r.created_at;
    stored.updated_at = r.updated_at;
    m->jobs_[r.id] = job;
    if (!IsFinal(stored.state) && stored.interrupted_runs >= kMaxInterruptedRuns) {
      // Resuming it blindly would take the daemon down again (a crash loop under systemd).
      stored.state = JobState::kFailed;
      stored.message = "the daemon ended " + std::to_string(stored.interrupted_runs) +
                       " times while running this job (a crash, an abort or a kill; last at " + stored.updated_at +
                       "): not resuming it; see the daemon's log, then submit it again";
      m->Persist(*job);
      continue;
    }
    if (!IsFinal(stored.state)) resume.push_back(job);
  }
  for (const auto& job : resume) {
    job->state.state = JobState::kQueued;
    job->line = "resumed after a daemon restart";
    m->Launch(job);
  }
  m->notifier_ = std::thread([p = m.get()] { p->NotifyLoop(); });
  return m;
}

JobManager::~JobManager() {
  {
    MutexLock lock(&mu_);
    notifier_stop_ = true;
    changed_.SignalAll();
  }
  if (notifier_.joinable()) notifier_.join();
  std::vector<std::shared_ptr<Job>> jobs;
  {
    MutexLock lock(&mu_);
    shutting_down_ = true;
    for (auto& [id, job] : jobs_) {
      job->stop = true;
      jobs.push_back(job);
    }
    changed_.SignalAll();
  }
  for (auto& job : jobs) {
    if (job->thread.joinable()) job->thread.join();
  }
}

void JobManager::Persist(Job& job) {
  Status s = job_store_->UpdateJob(job.state.id, job.state.state, StoredProgressJson(job.state));
  if (!s.ok()) std::fprintf(stderr, "tuner-daemon: job %lld: %s\n", (long long)job.state.id, s.message().c_str());
  ++job.version;
  ++changes_;
  changed_.SignalAll();
}

void JobManager::CancelledWhileQueued(Job& job) {
  if (job.cancel_requested) {
    job.state.state = JobState::kCancelled;
    Persist(job);
  }
}

void JobManager::KeepMemory(int64_t* held, int64_t bytes) {
  memory_reserved_ -= *held - bytes;
  *held = bytes;
  changed_.SignalAll();
}

bool JobManager::Overlaps(const std::vector<std::string>& keys) const {
  for (const auto& k : keys) {
    if (busy_.count(k)) return true;
  }
  return false;
}

void JobManager::Leave(int64_t* held, const std::vector<std::string>& keys) {
  KeepMemory(held, 0);
  --running_;
  for (const auto& k : keys) busy_.erase(busy_.find(k));
  changed_.SignalAll();
}

void JobManager::NotifyLoop() {
  MutexLock lock(&mu_);
  uint64_t seen = changes_;
  while (true) {
    while (!notifier_stop_ && changes_ == seen) changed_.Wait(&mu_);
    if (notifier_stop_) return;
    seen = changes_;
    lock.Unlock();
    {
      RecursiveMutexLock subs(&subscribers_mu_);
      std::vector<int64_t> ids;
      for (const auto& [id, f] : subscribers_) ids.push_back(id);
      for (int64_t id : ids) {
        auto it = subscribers_.find(id);
        if (it != subscribers_.end()) it->second();
      }
    }
    lock.Lock();
  }
}

int64_t JobManager::Subscribe(std::function<void()> on_change) {
  RecursiveMutexLock lock(&subscribers_mu_);
  subscribers_[next_subscriber_] = std::move(on_change);
  return next_subscriber_++;
}

void JobManager::Unsubscribe(int64_t subscription) {
  RecursiveMutexLock lock(&subscribers_mu_);
  subscribers_.erase(subscription);
}

void JobManager::Launch(const std::shared_ptr<Job>& job) {
  job->thread = std::thread([this, job] { RunJob(job); });
}

Result<TuningJob> JobManager::Submit(const TuningJobSpec& request) {
  TuningJobSpec spec = request;
  TUNEFARM_RETURN_IF_ERROR(Normalize(&spec, options_));
  if (const JobMemory need = EstimateJobBytes(spec); need.import_bytes > memory_budget_) {
    return Status::InvalidArgument("job spec: model " + spec.model + " needs an estimated " + Mib(need.import_bytes) +
                                   " to import and tune, over this daemon's job memory of " + Mib(memory_budget_) +
                                   " (tuner-daemon --job-memory MiB)");
  }
  MutexLock lock(&mu_);
  if (shutting_down_) return Status::FailedPrecondition("the daemon is shutting down");
  // Each unfinished job waits on a thread of its own: bounded, so a client cannot make the daemon
  // hold thousands of threads (and take seconds to stop).
  int64_t unfinished = 0;
  for (const auto& [id, job] : jobs_) unfinished += IsFinal(job->state.state) ? 0 : 1;
  if (unfinished >= kMaxUnfinishedJobs) {
    return Status::ResourceExhausted("the daemon holds " + std::to_string(unfinished) +
                                     " unfinished jobs, its most; wait for some to finish or cancel some "
                                     "(tunefarm jobs cancel ID)");
  }
  TUNEFARM_ASSIGN_OR_RETURN(int64_t id, job_store_->AddJob(StoredSpecJson(spec), options_.name));
  auto job = std::make_shared<Job>();
  job->state.id = id;
  job->state.spec = spec;
  job->state.state = JobState::kQueued;
  jobs_[id] = job;
  Persist(*job);
  Launch(job);
  return job->state;
}

std::vector<TuningJob> JobManager::List() {
  MutexLock lock(&mu_);
  std::vector<TuningJob> out;
  for (const auto& [id, job] : jobs_) out.push_back(job->state);
  return out;
}

Result<TuningJob> JobManager::Get(int64_t id) {
  MutexLock lock(&mu_);
  auto it = jobs_.find(id);
  if (it == jobs_.end()) return Status::NotFound("no job " + std::to_string(id));
  return it->second->state;
}

Result<TuningJob> JobManager::Cancel(int64_t id, bool* already_ended) {
  MutexLock lock(&mu_);
  auto it = jobs_.find(id);
  if (it == jobs_.end()) return Status::NotFound("no job " + std::to_string(id));
  Job& job = *it->second;
  if (already_ended) *already_ended = IsFinal(job.state.state);
  if (!IsFinal(job.state.state)) {
    job.cancel_requested = true;
    job.stop = true;
    // Final and stored at once: a daemon killed before the measurement in flight ends must not resume
    // the job when it starts again.
    job.state.state = JobState::kCancelled;
    job.state.message = "cancelled";
    job.line = "cancelled; the measurement in flight finishes";
    Persist(job);
  }
  return job.state;
}

Result<JobManager::Snapshot> JobManager::GetSnapshot(int64_t id) {
  MutexLock lock(&mu_);
  auto it = jobs_.find(id);
  if (it == jobs_.end()) return Status::NotFound("no job " + std::to_string(id));
  return Snapshot{it->second->state, it->second->line, it->second->version};
}

Result<Measurer*> JobManager::MeasurerFor(const TuningJobSpec& spec) {
  MeasurerOptions o;
  o.tracker = spec.tracker.empty() ? options_.tracker : spec.tracker;
  o.key = spec.tracker.empty() ? options_.key : spec.key;
  o.token = options_.token;
  o.tls = options_.tls;
  o.client_name = "tuner-daemon";
  o.measure_child = options_.measure_child;
  o.tmp_root = options_.tmp_root;
  o.threads = spec.threads;
  o.log = [](const std::string& line) {
    std::printf("farm: %s\n", line.c_str());
    std::fflush(stdout);
  };
  // One measurer per device (a farm key, or this machine at a thread count), shared by the jobs
  // that measure there, which take turns batch by batch.
  auto& m = measurers_[o.tracker.empty() ? "local/" + std::to_string(o.threads) : o.tracker + "/" + o.key];
  if (!m) m = std::make_unique<FairMeasurer>(MakeMeasurer(o));
  return m.get();
}

bool JobManager::WaitForImportMemory(Job& job, const JobMemory& need, int64_t* held) {
  if (need.import_bytes > memory_budget_) {  // a job stored before the budget was lowered
    job.state.state = JobState::kFailed;
    job.state.message = "model " + job.state.spec.model + " needs an estimated " + Mib(need.import_bytes) +
                        ", over this daemon's job memory of " + Mib(memory_budget_) +
                        " (tuner-daemon --job-memory MiB)";
    Persist(job);
    return false;
  }
  if (memory_reserved_ + need.import_bytes > memory_budget_) {
    job.line = "waiting for memory: needs an estimated " + Mib(need.import_bytes) + "; running jobs hold " +
               Mib(memory_reserved_) + " of " + Mib(memory_budget_) + " (tuner-daemon --job-memory)";
    job.state.message = job.line;
    Persist(job);
  }
  while (!(memory_reserved_ + need.import_bytes <= memory_budget_ || job.stop)) changed_.Wait(&mu_);
  if (job.stop) {
    CancelledWhileQueued(job);
    return false;
  }
  memory_reserved_ += need.import_bytes;
  *held = need.import_bytes;
  return true;
}

TuningRunEnd JobManager::Tune(Job& job, int64_t job_id, const Result<TuningRunPlan>& plan,
                              const Result<Measurer*>& measurer) {
  auto db = RecordsDb::Open(options_.records, RecordsDb::Mode::kCreate);  // this thread's connection
  const Status ready = !db.ok() ? db.status() : !plan.ok() ? plan.status() : measurer.status();
  if (!ready.ok()) return TuningRunEnd{JobState::kFailed, ready.message(), {}, false};
  TuningRunContext context;
  context.trials = db->get();
  context.measurer = *measurer;
  context.job_id = job_id;
  context.build_jobs = options_.build_jobs;
  context.tmp_root = options_.tmp_root;
  context.stop = &job.stop;
  context.stop_cause = [&] {
    MutexLock l(&mu_);  // Cancel writes it there, before it sets stop
    return job.cancel_requested ? StopCause::kCancelled : StopCause::kShutdown;
  };
  context.update = [&](const std::function<void(TuningJob*)>& change, const TaskProgress* progress) {
    MutexLock l(&mu_);
    change(&job.state);
    // Measuring: a daemon that dies from here on most likely did not die of this job's model, so
    // its earlier deaths are not held against it (this run stays counted until a clean stop).
    if (progress) job.state.interrupted_runs = std::min(job.state.interrupted_runs, 1);
    job.line = job.state.message;
    Persist(job);
  };
  return RunTuningJob(*plan, context);
}

void JobManager::RunJob(const std::shared_ptr<Job>& job) {
  TuningJobSpec spec;
  {
    MutexLock lock(&mu_);
    spec = job->state.spec;
  }
  // Memory first: the import is where a job peaks. The estimate reads the model's header (its
  // external data), outside the lock. The reservation (`held`) shrinks to need.tune_bytes once the
  // model is imported and to 0 where the job leaves.
  const JobMemory need = EstimateJobBytes(spec);
  MutexLock lock(&mu_);
  const int64_t job_id = job->state.id;
  int64_t held = 0;
  if (!WaitForImportMemory(*job, need, &held)) return;
  // A run is counted while it does what a model can take the process down with (the import here,
  // then its first trials), and given back once past it or at a clean stop: what stays counted are
  // runs the daemon did not survive there, not its deaths while the job only waited.
  ++job->state.interrupted_runs;
  Persist(*job);
  lock.Unlock();
  // The tasks first (outside the lock: importing a model takes a while), to know what the job touches.
  Result<TuningRunPlan> plan = PlanTuningRun(spec);
  const std::vector<std::string> keys = plan.ok() ? plan->TaskKeys() : std::vector<std::string>();
  lock.Lock();
  KeepMemory(&held, need.tune_bytes);  // the model is gone; its tasks remain
  --job->state.interrupted_runs;       // the import is behind it (persisted with the next change)
  while (!((running_ < options_.max_running && !Overlaps(keys)) || job->stop)) changed_.Wait(&mu_);
  if (job->stop) {
    Persist(*job);
    CancelledWhileQueued(*job);
    KeepMemory(&held, 0);
    return;
  }
  ++running_;
  busy_.insert(keys.begin(), keys.end());
  job->state.state = JobState::kRunning;
  ++job->state.interrupted_runs;  // until its first trials are measured (the progress below)
  Persist(*job);
  Result<Measurer*> measurer = MeasurerFor(spec);
  lock.Unlock();

  const TuningRunEnd end = Tune(*job, job_id, plan, measurer);
  MutexLock l(&mu_);
  Leave(&held, keys);
  if (end.state == JobState::kRunning) {
    // The daemon is stopping: the job stays `running` in the database and resumes on restart.
    --job->state.interrupted_runs;
  } else {
    job->state.interrupted_runs = 0;
    job->state.state = end.state;
    job->state.message = job->line = end.message;
  }
  Persist(*job);
}

}  // namespace tunefarm::tuner
