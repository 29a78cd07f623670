#include "tuner/daemon/job_manager.h"

#include <google/protobuf/util/json_util.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <thread>

#include "tunefarm/compiler/model.h"
#include "tunefarm/tuner/job_progress.h"

namespace tunefarm::tuner {
namespace {

// Defaults filled in and every field checked; InvalidArgument naming the field.
Status Normalize(v1::TuningJobSpec* spec, const DaemonOptions& daemon) {
  if (spec->model().empty()) return Status::InvalidArgument("job spec: model is empty (a zoo name or an ONNX path)");
  if (spec->target().empty()) spec->set_target("native");
  auto target = compiler::ParseTarget(spec->target());
  if (!target.ok()) return Status::InvalidArgument("job spec: " + target.status().message());
  if (spec->tuner().empty()) spec->set_tuner("xgb");
  static const std::set<std::string> kTuners = {"xgb", "ga", "random", "grid"};
  if (!kTuners.count(spec->tuner())) {
    return Status::InvalidArgument("job spec: unknown tuner '" + spec->tuner() + "' (xgb, ga, random, grid)");
  }
  if (spec->trials_per_task() < 0 || spec->trials_per_task() > 1000000 || spec->total_trials() < 0 ||
      spec->total_trials() > 10000000 || spec->early_stopping() < 0 || spec->threads() < 0 || spec->threads() > 1024) {
    return Status::InvalidArgument(
        "job spec: trials_per_task, total_trials, early_stopping and threads must be in range");
  }
  if (spec->layouts().empty()) spec->set_layouts("model");
  if (spec->layouts() != "model" && spec->layouts() != "any") {
    return Status::InvalidArgument("job spec: unknown layouts '" + spec->layouts() + "' (model, any)");
  }
  if (spec->input_shapes_size() > 64) return Status::InvalidArgument("job spec: more than 64 input_shapes");
  std::set<std::string> shaped;
  for (const std::string& text : spec->input_shapes()) {
    auto shape = compiler::ParseInputShape(text);
    if (!shape.ok()) return Status::InvalidArgument("job spec: input_shapes: " + shape.status().message());
    if (!shaped.insert(shape->name).second) {
      return Status::InvalidArgument("job spec: input_shapes gives input '" + shape->name + "' twice");
    }
  }
  if (spec->trials_per_task() == 0 && spec->total_trials() == 0) spec->set_trials_per_task(64);
  if (spec->threads() == 0) spec->set_threads(1);
  if (spec->total_trials() > 0) {
    if (spec->scheduler().empty()) spec->set_scheduler("gradient");
    if (spec->scheduler() != "gradient" && spec->scheduler() != "round-robin") {
      return Status::InvalidArgument("job spec: unknown scheduler '" + spec->scheduler() + "' (gradient, round-robin)");
    }
  }
  if (!spec->tracker().empty() && spec->key().empty()) return Status::InvalidArgument("job spec: tracker without key");
  const bool farm = !spec->tracker().empty() || !daemon.tracker.empty();
  if (!farm && !target->is_host) {
    return Status::InvalidArgument("job spec: target " + target->ToString() +
                                   " does not run on the daemon's machine and the daemon has no --tracker");
  }
  return Status::OK();
}

constexpr int64_t kMiB = int64_t(1) << 20;

std::string Mib(int64_t bytes) { return std::to_string((bytes + kMiB - 1) / kMiB) + " MiB"; }

}  // namespace

JobMemory EstimateJobBytes(const v1::TuningJobSpec& spec) {
  constexpr int64_t kZooModelBytes = 128 * kMiB, kTuneBytes = 256 * kMiB;
  struct stat st {};
  const bool file = stat(spec.model().c_str(), &st) == 0 && S_ISREG(st.st_mode);
  const int64_t model = file ? int64_t(st.st_size) : kZooModelBytes;
  return JobMemory{kTuneBytes + 3 * model, kTuneBytes};
}

bool IsFinalJobState(const std::string& state) { return state == "done" || state == "failed" || state == "cancelled"; }

struct JobManager::Job {
  v1::TuningJob proto;
  uint64_t version = 0;
  std::string line;
  std::atomic<bool> stop{false};
  bool cancel_requested = false;
  std::thread thread;
};

Result<std::unique_ptr<JobManager>> JobManager::Start(DaemonOptions options) {
  if (options.name == kTuneCommandRunner) {
    return Status::InvalidArgument(std::string("--name '") + kTuneCommandRunner +
                                   "' is what the jobs table calls `tunefarm tune` runs; give the daemon another name");
  }
  std::unique_ptr<JobManager> m(new JobManager(std::move(options)));
  m->memory_budget_ = m->options_.job_memory_bytes;
  if (m->memory_budget_ <= 0) m->memory_budget_ = int64_t(sysconf(_SC_PHYS_PAGES)) * sysconf(_SC_PAGESIZE) / 2;
  TUNEFARM_ASSIGN_OR_RETURN(m->db_, RecordsDb::Open(m->options_.records, RecordsDb::Mode::kCreate));
  // A file takes one tuner: a second daemon (or a `tunefarm tune`) would resume the same jobs. On
  // PostgreSQL, tuners share the database through claims, and each daemon resumes its own jobs.
  if (m->db_->shared()) {
    // A daemon restarted at once may find its previous session's lock still held: the server ends
    // a dead client's session moments after its connection drops.
    Status locked = m->db_->LockDaemonName(m->options_.name);
    for (int i = 0; i < 20 && locked.code() == StatusCode::kFailedPrecondition; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(250));
      locked = m->db_->LockDaemonName(m->options_.name);
    }
    TUNEFARM_RETURN_IF_ERROR(locked);
  } else {
    TUNEFARM_ASSIGN_OR_RETURN(m->lock_, TuningLock::Acquire(m->options_.records, "tuner-daemon"));
  }
  TUNEFARM_ASSIGN_OR_RETURN(auto stored, m->db_->ListJobs());
  std::vector<std::shared_ptr<Job>> resume;
  std::lock_guard<std::mutex> lock(m->mu_);
  for (const auto& r : stored) {
    if (!r.daemon.empty() && r.daemon != m->options_.name) continue;  // another daemon's
    auto job = std::make_shared<Job>();
    if (!google::protobuf::util::JsonStringToMessage(r.progress_json, &job->proto).ok()) job->proto.Clear();
    v1::TuningJobSpec spec;
    if (!google::protobuf::util::JsonStringToMessage(r.spec_json, &spec).ok()) {
      job->proto.set_state("failed");
      job->proto.set_message("stored job spec is not valid JSON: " + r.spec_json.substr(0, 200));
    } else {
      *job->proto.mutable_spec() = spec;
      job->proto.set_state(r.state);
    }
    job->proto.set_id(r.id);
    job->proto.set_created_at(r.created_at);
    job->proto.set_updated_at(r.updated_at);
    m->jobs_[r.id] = job;
    if (!IsFinalJobState(job->proto.state())) resume.push_back(job);
  }
  for (const auto& job : resume) {
    job->proto.set_state("queued");
    job->line = "resumed after a daemon restart";
    m->Launch(job);
  }
  m->notifier_ = std::thread([p = m.get()] { p->NotifyLoop(); });
  return m;
}

JobManager::~JobManager() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    notifier_stop_ = true;
    changed_.notify_all();
  }
  if (notifier_.joinable()) notifier_.join();
  std::vector<std::shared_ptr<Job>> jobs;
  {
    std::lock_guard<std::mutex> lock(mu_);
    shutting_down_ = true;
    for (auto& [id, job] : jobs_) {
      job->stop = true;
      jobs.push_back(job);
    }
    changed_.notify_all();
  }
  for (auto& job : jobs) {
    if (job->thread.joinable()) job->thread.join();
  }
}

void JobManager::Persist(Job& job) {
  Status s = db_->UpdateJob(job.proto.id(), job.proto.state(), JobProgressJson(job.proto));
  if (!s.ok()) std::fprintf(stderr, "tuner-daemon: job %lld: %s\n", (long long)job.proto.id(), s.message().c_str());
  ++job.version;
  ++changes_;
  changed_.notify_all();
}

void JobManager::NotifyLoop() {
  std::unique_lock<std::mutex> lock(mu_);
  uint64_t seen = changes_;
  while (true) {
    changed_.wait(lock, [&] { return notifier_stop_ || changes_ != seen; });
    if (notifier_stop_) return;
    seen = changes_;
    lock.unlock();
    {
      std::lock_guard<std::recursive_mutex> subs(subscribers_mu_);
      std::vector<int64_t> ids;
      for (const auto& [id, f] : subscribers_) ids.push_back(id);
      for (int64_t id : ids) {
        auto it = subscribers_.find(id);
        if (it != subscribers_.end()) it->second();
      }
    }
    lock.lock();
  }
}

int64_t JobManager::Subscribe(std::function<void()> on_change) {
  std::lock_guard<std::recursive_mutex> lock(subscribers_mu_);
  subscribers_[next_subscriber_] = std::move(on_change);
  return next_subscriber_++;
}

void JobManager::Unsubscribe(int64_t subscription) {
  std::lock_guard<std::recursive_mutex> lock(subscribers_mu_);
  subscribers_.erase(subscription);
}

void JobManager::Launch(const std::shared_ptr<Job>& job) {
  job->thread = std::thread([this, job] { RunJob(job); });
}

Result<v1::TuningJob> JobManager::Submit(const v1::TuningJobSpec& request) {
  v1::TuningJobSpec spec = request;
  TUNEFARM_RETURN_IF_ERROR(Normalize(&spec, options_));
  if (const JobMemory need = EstimateJobBytes(spec); need.import_bytes > memory_budget_) {
    return Status::InvalidArgument("job spec: model " + spec.model() + " needs an estimated " + Mib(need.import_bytes) +
                                   " to import and tune, over this daemon's job memory of " + Mib(memory_budget_) +
                                   " (tuner-daemon --job-memory MiB)");
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (shutting_down_) return Status::FailedPrecondition("the daemon is shutting down");
  TUNEFARM_ASSIGN_OR_RETURN(int64_t id, db_->AddJob(JobJson(spec), options_.name));
  auto job = std::make_shared<Job>();
  job->proto.set_id(id);
  *job->proto.mutable_spec() = spec;
  job->proto.set_state("queued");
  jobs_[id] = job;
  Persist(*job);
  Launch(job);
  return job->proto;
}

std::vector<v1::TuningJob> JobManager::List() {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<v1::TuningJob> out;
  for (const auto& [id, job] : jobs_) out.push_back(job->proto);
  return out;
}

Result<v1::TuningJob> JobManager::Get(int64_t id) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = jobs_.find(id);
  if (it == jobs_.end()) return Status::NotFound("no job " + std::to_string(id));
  return it->second->proto;
}

Result<v1::TuningJob> JobManager::Cancel(int64_t id) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = jobs_.find(id);
  if (it == jobs_.end()) return Status::NotFound("no job " + std::to_string(id));
  Job& job = *it->second;
  if (!IsFinalJobState(job.proto.state())) {
    job.cancel_requested = true;
    job.stop = true;
    // Final and stored at once: a daemon killed before the batch in flight ends must not resume
    // the job when it starts again.
    job.proto.set_state("cancelled");
    job.proto.set_message("cancelled");
    job.line = "cancelled; the batch in flight finishes";
    Persist(job);
  }
  return job.proto;
}

Result<JobManager::Snapshot> JobManager::GetSnapshot(int64_t id) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = jobs_.find(id);
  if (it == jobs_.end()) return Status::NotFound("no job " + std::to_string(id));
  return Snapshot{it->second->proto, it->second->line, it->second->version};
}

Result<Measurer*> JobManager::MeasurerFor(const v1::TuningJobSpec& spec) {
  const std::string tracker = spec.tracker().empty() ? options_.tracker : spec.tracker();
  const std::string key = spec.tracker().empty() ? options_.key : spec.key();
  const std::string id = tracker.empty() ? "local/" + std::to_string(spec.threads()) : tracker + "/" + key;
  auto& m = measurers_[id];
  if (!m) {
    std::unique_ptr<Measurer> inner;
    if (tracker.empty()) {
      inner = std::make_unique<LocalMeasurer>(options_.measure_child, options_.tmp_root, spec.threads());
    } else {
      inner = std::make_unique<FarmMeasurer>(rpc_server::MeasureClientOptions{
          tracker, key, options_.token, "tuner-daemon", 0, 600000, options_.tls, [](const std::string& line) {
            std::printf("farm: %s\n", line.c_str());
            std::fflush(stdout);
          }});
    }
    m = std::make_unique<FairMeasurer>(std::move(inner));
  }
  return m.get();
}

void JobManager::RunJob(const std::shared_ptr<Job>& job) {
  std::unique_lock<std::mutex> lock(mu_);
  const v1::TuningJobSpec spec = job->proto.spec();
  // Memory first: the import is where a job peaks. The reservation shrinks to need.tune_bytes once
  // the model is imported and to 0 where the job leaves (a stop while queued, or `leave` below).
  const JobMemory need = EstimateJobBytes(spec);
  struct Reservation {
    JobManager* m;
    int64_t held = 0;
    void Keep(int64_t bytes) {  // with mu_ held
      m->memory_reserved_ -= held - bytes;
      held = bytes;
      m->changed_.notify_all();
    }
  } memory{this};
  auto cancelled_while_queued = [&] {
    if (job->cancel_requested) {
      job->proto.set_state("cancelled");
      Persist(*job);
    }
  };
  if (need.import_bytes > memory_budget_) {  // a job stored before the budget was lowered
    job->proto.set_state("failed");
    job->proto.set_message("model " + spec.model() + " needs an estimated " + Mib(need.import_bytes) +
                           ", over this daemon's job memory of " + Mib(memory_budget_) +
                           " (tuner-daemon --job-memory MiB)");
    Persist(*job);
    return;
  }
  if (memory_reserved_ + need.import_bytes > memory_budget_) {
    job->line = "waiting for memory: needs an estimated " + Mib(need.import_bytes) + "; running jobs hold " +
                Mib(memory_reserved_) + " of " + Mib(memory_budget_) + " (tuner-daemon --job-memory)";
    job->proto.set_message(job->line);
    Persist(*job);
  }
  changed_.wait(lock, [&] { return memory_reserved_ + need.import_bytes <= memory_budget_ || job->stop; });
  if (job->stop) return cancelled_while_queued();
  memory_reserved_ += need.import_bytes;
  memory.held = need.import_bytes;
  lock.unlock();
  // Tasks first (outside the lock: importing a model takes a while), to know what the job touches.
  auto target = compiler::ParseTarget(spec.target());
  std::vector<compiler::InputShape> input_shapes;
  for (const std::string& text : spec.input_shapes())
    input_shapes.push_back(*compiler::ParseInputShape(text));  // checked at submit
  Result<std::vector<compiler::Task>> tasks = target.ok()
                                                  ? compiler::ExtractTasks(spec.model(), *target, 3, input_shapes)
                                                  : Result<std::vector<compiler::Task>>(target.status());
  std::vector<std::string> keys;
  if (tasks.ok()) {
    for (const auto& t : *tasks) keys.push_back(t.workload.ImplementationKey() + " @ " + target->ToString());
  }
  auto overlaps = [&] {
    for (const auto& k : keys) {
      if (busy_.count(k)) return true;
    }
    return false;
  };
  lock.lock();
  memory.Keep(need.tune_bytes);  // the model is gone; its tasks remain
  changed_.wait(lock, [&] { return (running_ < options_.max_running && !overlaps()) || job->stop; });
  if (job->stop) {
    cancelled_while_queued();
    memory.Keep(0);
    return;
  }
  ++running_;
  busy_.insert(keys.begin(), keys.end());
  job->proto.set_state("running");
  Persist(*job);
  auto measurer = MeasurerFor(spec);
  lock.unlock();

  // Leaves the running set (with mu_ held) and wakes jobs waiting for a slot or a workload.
  auto leave = [&] {
    memory.Keep(0);
    --running_;
    for (const auto& k : keys) busy_.erase(busy_.find(k));
    changed_.notify_all();
  };
  auto finish = [&](const std::string& state, const std::string& message) {
    std::lock_guard<std::mutex> l(mu_);
    leave();
    job->proto.set_state(state);
    if (!message.empty()) job->proto.set_message(message);
    job->line = message;
    Persist(*job);
  };
  auto db = RecordsDb::Open(options_.records, RecordsDb::Mode::kCreate);  // this thread's connection
  if (!db.ok()) return finish("failed", db.status().message());
  if (!tasks.ok()) return finish("failed", tasks.status().message());
  if (!measurer.ok()) return finish("failed", measurer.status().message());

  TuneOptions o;
  o.tuner = spec.tuner();
  o.trials = spec.trials_per_task() > 0 ? spec.trials_per_task() : 64;
  o.early_stopping = spec.early_stopping();
  o.seed = spec.seed();
  o.keep_model_layout = spec.layouts() != "any";
  o.threads = spec.threads();
  o.build_jobs = options_.build_jobs;
  o.tmp_root = options_.tmp_root;
  o.job_id = job->proto.id();
  o.stop = &job->stop;
  ScheduleOptions schedule;
  if (spec.total_trials() > 0) {
    schedule.strategy = spec.scheduler();
    schedule.total_trials = spec.total_trials();
  }
  std::vector<ScheduledTask> scheduled;
  {
    std::lock_guard<std::mutex> l(mu_);
    for (const auto& t : *tasks) scheduled.push_back({t.workload, t.count, t.default_workload});
    StartJobTasks(*tasks, schedule.total_trials > 0 ? schedule.total_trials : o.trials * int(tasks->size()),
                  &job->proto);
    Persist(*job);
  }
  auto summaries = TuneTasks(scheduled, *target, o, schedule, **measurer, **db, [&](const TaskProgress& p) {
    std::lock_guard<std::mutex> l(mu_);
    RecordJobProgress(p, &job->proto);
    job->line = job->proto.message();
    Persist(*job);
  });
  if (!summaries.ok()) return finish("failed", summaries.status().message());
  {
    std::lock_guard<std::mutex> l(mu_);
    RecordJobSummaries(*summaries, &job->proto);
  }
  if (job->stop && !job->cancel_requested) {
    // The daemon is stopping: the job stays `running` in the database and resumes on restart.
    std::lock_guard<std::mutex> l(mu_);
    leave();
    return;
  }
  finish(job->cancel_requested ? "cancelled" : "done", job->cancel_requested ? "cancelled" : "finished");
}

}  // namespace tunefarm::tuner
