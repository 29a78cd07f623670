// tunefarm tune MODEL [--target T] [--trials N | --total-trials N [--scheduler S]] ... (DeclareTune
// below declares every flag; `tunefarm tune --help` lists them).
// Tunes every task of the model, committing each trial to the records database as it completes;
// the same command again resumes without re-measuring. Ctrl-C stops once the measurement in flight is
// done (what it measured is recorded).
// With --daemon the job goes to a tuner-daemon (tune_daemon_client.cc) and its progress streams back.
#include <unistd.h>

#include <chrono>
#include <climits>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <thread>

#include "tools/tunefarm/command_table.h"
#include "tools/tunefarm/commands/tune_daemon_client.h"
#include "tools/tunefarm/common_flags.h"
#include "tools/tunefarm/records_option.h"
#include "tunefarm/compiler/kernel.h"
#include "tunefarm/compiler/model.h"
#include "tunefarm/runtime/mutex.h"
#include "tunefarm/service/auth.h"
#include "tunefarm/tuner/job_progress.h"
#include "tunefarm/tuner/tuner.h"
#include "tunefarm/tuner/tuning_job.h"
#include "tunefarm/tuner/tuning_run.h"

namespace tunefarm::cli {
namespace {

std::atomic<bool> g_stop{false};

std::string TmpRoot() {
  const char* tmp = std::getenv("TMPDIR");
  return tmp && *tmp ? tmp : "/tmp";
}

void PrintSummaryTable(const std::vector<tuner::TaskSummary>& summaries, double wall_s) {
  std::printf("\n%-6s %-8s %8s %10s %10s %8s  %s\n", "task", "trials", "resumed", "best", "fallback", "speedup",
              "errors / workload");
  for (size_t i = 0; i < summaries.size(); ++i) {
    const auto& s = summaries[i];
    std::string errors;
    for (const auto& [kind, n] : s.errors) errors += kind + ":" + std::to_string(n) + " ";
    std::printf("%-6zu %-8d %8d %10.2f %10.2f %7.2fx  %s%s\n", i + 1, s.trials, s.resumed, s.best_gflops,
                s.fallback_gflops, s.fallback_gflops > 0 ? s.best_gflops / s.fallback_gflops : 0.0, errors.c_str(),
                s.workload.ImplementationKey().c_str());
  }
  // Where this run's time went, over every task: what to speed up when the farm is slow. Builds,
  // measurements and the search overlap (tuner/search/tuning_pipeline.h): the measurer's time
  // splits into measuring and waiting for a built candidate; the builders' into work and idle.
  tuner::TaskSummary all;
  for (const auto& s : summaries) {
    all.search_s += s.search_s, all.build_s += s.build_s, all.measure_s += s.measure_s, all.record_s += s.record_s;
    all.load_s += s.load_s, all.run_s += s.run_s, all.measured += s.measured;
    all.build_lower_s += s.build_lower_s, all.build_codegen_s += s.build_codegen_s, all.build_tool_s += s.build_tool_s;
    all.built += s.built, all.build_jobs = std::max(all.build_jobs, s.build_jobs);
  }
  if (all.measured > 0 && wall_s > 0) {
    std::printf(
        "\ntime: %.1f s for %d measurements (%.1f per second); measurer: measuring %.1f s (loading kernels %.1f s, "
        "timing %.1f s, transport %.1f s), waiting for builds %.1f s; tuner: search %.1f s, records %.1f s\n",
        wall_s, all.measured, all.measured / wall_s, all.measure_s, all.load_s, all.run_s - all.load_s,
        std::max(0.0, all.measure_s - all.run_s), all.build_s, all.search_s, all.record_s);
    if (all.built > 0) {
      const double per = 1e3 / all.built;
      const double work_s = all.build_lower_s + all.build_codegen_s + all.build_tool_s;
      std::printf(
          "build: %d candidates on %d jobs, per candidate: lowering %.0f ms, code generation %.0f ms, "
          "assembler/linker %.0f ms; %.1f s of work, %.1f of the %d jobs busy on average\n",
          all.built, all.build_jobs, all.build_lower_s * per, all.build_codegen_s * per, all.build_tool_s * per, work_s,
          work_s / wall_s, all.build_jobs);
    }
  }
  for (size_t i = 0; i < summaries.size(); ++i) {
    if (summaries[i].skipped_records == 0) continue;
    std::fprintf(stderr,
                 "warning: task %zu: skipped %d record(s) read back from the database whose config is not a point of "
                 "this space, whose status is none tunefarm writes or whose time is not a finite positive number; "
                 "none steered the search\n",
                 i + 1, summaries[i].skipped_records);
  }
}

struct TuneFlags {
  std::string model, target = "native", tuner = "xgb", scheduler = "gradient", records = kDefaultRecordsDb,
                     layouts = "model";
  int trials = 64, total_trials = 0, threads = 0, early_stopping = 0, seed = 0, time_limit = 0;
  bool no_transfer = false, local = false;
  std::string tracker, key, daemon;
  FarmClientFlags farm;
  std::vector<compiler::InputShape> input_shapes;
};

// The run the flags ask for, as a tuner-daemon takes it and as the jobs table records it.
tuner::TuningJobSpec SpecOf(const TuneFlags& f) {
  tuner::TuningJobSpec spec;
  // A model path is resolved: a daemon runs elsewhere in the file system.
  char resolved[PATH_MAX];
  spec.model = access(f.model.c_str(), R_OK) == 0 && realpath(f.model.c_str(), resolved) ? resolved : f.model;
  spec.target = f.target;
  spec.tuner = *tuner::ParseTunerKind(f.tuner);  // checked by the flag
  if (f.total_trials > 0) {
    spec.total_trials = f.total_trials;
    spec.scheduler = *tuner::ParseSchedulerKind(f.scheduler);  // checked by the flag
  } else {
    spec.trials_per_task = f.trials;
  }
  spec.early_stopping = f.early_stopping;
  spec.threads = f.threads;
  spec.seed = uint64_t(f.seed);
  spec.keep_model_layout = f.layouts == "model";
  spec.transfer = !f.no_transfer;
  spec.tracker = f.tracker;
  spec.key = f.key;
  for (const auto& shape : f.input_shapes) spec.input_shapes.push_back(shape.ToString());
  return spec;
}

// The records for this run: a file is locked for it (one tuner at a time, and the runs a killed
// tuner left `running` are marked ended); on PostgreSQL tuners on many machines share the database
// and claims keep them from measuring a config twice.
Result<std::unique_ptr<tuner::RecordsDb>> OpenRecords(const TuneFlags& f, std::unique_ptr<tuner::TuningLock>* lock) {
  TUNEFARM_ASSIGN_OR_RETURN(auto db, tuner::RecordsDb::Open(f.records, tuner::RecordsDb::Mode::kCreate));
  if (db->shared()) return db;
  TUNEFARM_ASSIGN_OR_RETURN(*lock, tuner::TuningLock::Acquire(f.records, "tunefarm tune " + f.model));
  if (Status marked = tuner::MarkEndedTuneRuns(*db); !marked.ok()) {
    std::fprintf(stderr, "warning: cannot mark the killed runs of the jobs table: %s\n", marked.message().c_str());
  }
  return db;
}

Result<std::unique_ptr<tuner::Measurer>> MeasurerOf(const TuneFlags& f) {
  tuner::MeasurerOptions o;
  o.tracker = f.tracker;
  o.key = f.key;
  o.client_name = "tunefarm tune";
  o.threads = f.threads;
  o.measure_child = rpc_server::DefaultMeasureChild();
  o.tmp_root = TmpRoot();
  if (!f.tracker.empty()) {
    TUNEFARM_ASSIGN_OR_RETURN(o.token, service::LoadToken(f.farm.token_file));
    TUNEFARM_ASSIGN_OR_RETURN(o.tls, service::LoadTlsFlags(f.farm.tls_cert, f.farm.tls_key, f.farm.tls_ca));
    o.log = [](const std::string& line) { std::fprintf(stderr, "farm: %s\n", line.c_str()); };
  } else {
    rpc_server::SweepStaleMeasureDirs(o.tmp_root);  // what a killed tune or daemon left (its pid is gone)
  }
  return tuner::MakeMeasurer(o);
}

// --time-limit: sets the stop flag like Ctrl-C once the time is up, unless the run ended first.
class TimeLimit {
 public:
  TimeLimit(int seconds, std::atomic<bool>* stop) {
    if (seconds <= 0) return;
    thread_ = std::thread([this, seconds, stop] {
      MutexLock lock(&mu_);
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
      while (!finished_ && cv_.WaitUntil(&mu_, deadline)) {
      }
      if (!finished_) {
        reached_ = true;
        *stop = true;
      }
    });
  }
  ~TimeLimit() {
    {
      MutexLock lock(&mu_);
      finished_ = true;
    }
    cv_.SignalAll();
    if (thread_.joinable()) thread_.join();
  }
  bool reached() const { return reached_; }

 private:
  Mutex mu_;
  CondVar cv_;
  bool finished_ GUARDED_BY(mu_) = false;
  std::atomic<bool> reached_{false};
  std::thread thread_;
};

// The run's row in the jobs table (as a daemon's job, tunefarm/tuner/job_progress.h) and its
// progress lines: on a terminal a task's line is rewritten in place, a new task starts a new line.
class RunReporter {
 public:
  RunReporter(tuner::JobStore& jobs, tuner::TuningJob* run) : jobs_(jobs), run_(run) {}
  void Update(const std::function<void(tuner::TuningJob*)>& change, const tuner::TaskProgress* p) {
    change(run_);
    if (!p) return Save();
    if (std::chrono::steady_clock::now() - last_saved_ > std::chrono::seconds(1)) Save();  // a write a second
    if (tty_ && last_task_ && p->task != last_task_) std::printf("\n");
    last_task_ = p->task;
    std::printf("%s%s%s", tty_ ? "\r" : "", tuner::FormatProgress(*p).c_str(), tty_ ? "" : "\n");
    std::fflush(stdout);
  }
  void EndLine() const {
    if (tty_ && last_task_) std::printf("\n");
  }

 private:
  void Save() {
    last_saved_ = std::chrono::steady_clock::now();
    Status saved = jobs_.UpdateJob(run_->id, run_->state, tuner::StoredProgressJson(*run_));
    if (!saved.ok() && !save_failed_) {
      save_failed_ = true;  // the trials are what matters: say it once and go on
      std::fprintf(stderr, "warning: cannot record this run's progress in the jobs table: %s\n",
                   saved.message().c_str());
    }
  }
  tuner::JobStore& jobs_;
  tuner::TuningJob* run_;
  const bool tty_ = isatty(fileno(stdout));
  int last_task_ = 0;
  bool save_failed_ = false;
  std::chrono::steady_clock::time_point last_saved_;
};

std::string BudgetText(const TuneFlags& f) {
  std::string budget = f.total_trials > 0
                           ? std::to_string(f.total_trials) + " trials in all (" + f.scheduler + " scheduler)"
                           : std::to_string(f.trials) + " trials each";
  if (f.time_limit > 0) budget += ", at most " + std::to_string(f.time_limit) + " s";
  return budget;
}

int Fail(const Status& status) {
  std::fprintf(stderr, "tunefarm tune: %s\n", status.message().c_str());
  return 1;
}

int Tune(const TuneFlags& f) {
  if (!f.daemon.empty()) {
    auto tls = service::LoadTlsFlags(f.farm.tls_cert, f.farm.tls_key, f.farm.tls_ca);
    return tls.ok() ? TuneThroughDaemon(f.daemon, f.farm.token_file, *tls, SpecOf(f)) : Fail(tls.status());
  }
  auto target = compiler::ParseTarget(f.target);
  if (!target.ok()) return Fail(target.status());
  if (f.tracker.empty()) {
    if (Status here = compiler::CheckMeasurableHere(*target); !here.ok()) return Fail(here);
  }
  auto plan = tuner::PlanTuningRun(SpecOf(f));
  if (!plan.ok()) return Fail(plan.status());
  std::unique_ptr<tuner::TuningLock> lock;
  auto db = OpenRecords(f, &lock);
  if (!db.ok()) return Fail(db.status());
  auto measurer = MeasurerOf(f);
  if (!measurer.ok()) return Fail(measurer.status());
  const std::string& shown = (*db)->location();  // never a password
  tuner::TuningJob run;  // the dashboard lists it by model with its progress; its trials carry its id
  run.spec = plan->spec;
  run.spec.target = plan->target.ToString();
  auto run_id = (*db)->AddJob(tuner::StoredSpecJson(run.spec), tuner::kTuneCommandRunner);
  if (!run_id.ok()) return Fail(run_id.status());
  run.id = *run_id;
  run.state = tuner::JobState::kRunning;
  RunReporter reporter(**db, &run);
  std::printf("tuning %zu tasks of %s on %s with %s, %s; records: %s\n", plan->tasks.size(), f.model.c_str(),
              plan->target.ToString().c_str(), f.tuner.c_str(), BudgetText(f).c_str(), shown.c_str());
  tuner::TuningRunContext context;
  context.trials = db->get();
  context.measurer = measurer->get();
  context.job_id = run.id;
  context.tmp_root = TmpRoot();
  context.stop = &g_stop;
  std::signal(SIGINT, [](int) { g_stop = true; });
  TimeLimit time_limit(f.time_limit, &g_stop);
  context.stop_cause = [&] {
    return time_limit.reached() ? tuner::StopCause::kTimeLimit : tuner::StopCause::kCancelled;
  };
  context.update = [&](const auto& change, const tuner::TaskProgress* p) { reporter.Update(change, p); };
  const auto started = std::chrono::steady_clock::now();
  const tuner::TuningRunEnd end = tuner::RunTuningJob(*plan, context);
  const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  reporter.EndLine();
  if (!end.summaries.empty()) PrintSummaryTable(end.summaries, wall_s);
  if (end.state == tuner::JobState::kCancelled) {
    std::printf("stopped by Ctrl-C; run the same command again to resume (every finished trial is in %s)\n",
                shown.c_str());
  } else if (end.state == tuner::JobState::kDone && time_limit.reached()) {
    std::printf("stopped at the time limit (%d s); run again to go on (every finished trial is in %s)\n", f.time_limit,
                shown.c_str());
  }
  std::printf(
      "records: %s, measured at %d thread%s (compile with: tunefarm compile %s --target \"%s\" --records %s "
      "--threads %d -o OUT)\n",
      shown.c_str(), f.threads, f.threads == 1 ? "" : "s", f.model.c_str(), plan->target.ToString().c_str(),
      shown.c_str(), f.threads);
  std::fflush(stdout);
  if (end.state == tuner::JobState::kCancelled) return 130;
  if (end.state != tuner::JobState::kFailed) return 0;
  std::fprintf(
      stderr, "tunefarm tune: %s%s\n", end.message.c_str(),
      end.no_trial_succeeded ? (": see `tunefarm records list --records " + shown + "` for the messages").c_str() : "");
  return 1;
}

}  // namespace

Action DeclareTune(CLI::App& app) {
  auto f = std::make_shared<TuneFlags>();
  app.add_option("MODEL", f->model, "an ONNX file or a zoo model (resnet-18, squeezenet-1.1, ...)")->required();
  AddTargetFlag(app, &f->target);
  AddInputShapeFlag(app, &f->input_shapes);
  auto* trials = AddIntFlag(app, "--trials", &f->trials, 1, tuner::kMaxTrialsPerTask, "trials per task (default 64)");
  auto* total = AddIntFlag(app, "--total-trials", &f->total_trials, 1, tuner::kMaxTotalTrials,
                           "trials over all tasks, shared by the scheduler");
  trials->excludes(total);
  app.add_option("--scheduler", f->scheduler, "how --total-trials is shared: gradient (default) or round-robin")
      ->check(CLI::IsMember(tuner::SchedulerKindNames()))
      ->needs(total);
  app.add_option("--tuner", f->tuner, "the search: xgb (default; cost model + simulated annealing), ga, random or grid")
      ->check(CLI::IsMember(tuner::TunerKindNames()));
  AddIntFlag(app, "--early-stopping", &f->early_stopping, 0, tuner::kMaxEarlyStopping,
             "stop a task after N trials without a better one (0: never)");
  auto* time_limit =
      AddIntFlag(app, "--time-limit", &f->time_limit, 0, 31536000, "stop after S seconds like Ctrl-C (0: no limit)");
  app.add_flag("--no-transfer", f->no_transfer, "do not warm-start the cost model from records of similar workloads");
  app.add_option("--layouts", f->layouts,
                 "model (default): only configs in the layouts untuned neighbours use; any: every channel block, "
                 "and compile plans the blocks over the graph")
      ->check(CLI::IsMember({"model", "any"}));
  AddIntFlag(app, "--seed", &f->seed, 0, 2147483647, "the search's random seed (default 0)");
  auto* records =
      AddRecordsFlag(app, &f->records, "where every trial goes, and what a run resumes from (default ./tunefarm.db)");
  auto* local = app.add_flag("--local", f->local, "measure on this machine (the default without --tracker)");
  auto* tracker =
      app.add_option("--tracker", f->tracker, "measure on the farm of this rpc_tracker")->type_name("HOST:PORT");
  auto* key = app.add_option("--key", f->key, "the device key to lease on --tracker (e.g. rasp4b, h200)");
  tracker->needs(key)->excludes(local);
  key->needs(tracker);
  AddThreadsFlag(app, &f->threads, "threads each measurement runs on; records are kept per thread count");
  AddFarmClientFlags(app, &f->farm, /*tls=*/true);
  app.add_option("--daemon", f->daemon, "submit the job to this tuner-daemon, which owns the records, and follow it")
      ->type_name("HOST:PORT")
      ->excludes(records)
      ->excludes(local)
      ->excludes(time_limit);
  return [f] {
    // Measured here for this machine: on its cores, as `compile` and `run` default to.
    // A daemon resolves 0 itself, for the machine it measures on.
    if (f->threads == 0 && f->daemon.empty())
      f->threads = tuner::DefaultThreads(f->tracker.empty() && f->target == "native");
    return Tune(*f);
  };
}

}  // namespace tunefarm::cli
