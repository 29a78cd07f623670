// tunefarm tune MODEL [--target T] [--trials N | --total-trials N [--scheduler S]] ... (DeclareTune
// below declares every flag; `tunefarm tune --help` lists them).
// Tunes every task of the model, committing each trial to the records database as it completes;
// the same command again resumes without re-measuring. Ctrl-C stops after the batch in flight.
// With --daemon the job goes to a tuner-daemon (tune_daemon_client.cc) and its progress streams back.
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <map>
#include <thread>

#include "tools/tunefarm/command_table.h"
#include "tools/tunefarm/commands/tune_daemon_client.h"
#include "tools/tunefarm/common_flags.h"
#include "tools/tunefarm/records_option.h"
#include "tunefarm/compiler/model.h"
#include "tunefarm/runtime/cuda_driver.h"
#include "tunefarm/runtime/mutex.h"
#include "tunefarm/service/auth.h"
#include "tunefarm/tuner/job_progress.h"
#include "tunefarm/tuner/tuner.h"
#include "tunefarm/tuner/tuning_job.h"

namespace tunefarm::cli {
namespace {

std::atomic<bool> g_stop{false};

// What the --time-limit timer waits for, at most the limit: the end of the tune.
struct TimerState {
  Mutex mu;
  CondVar cv;
  bool finished GUARDED_BY(mu) = false;
};

void PrintSummaryTable(const std::vector<tuner::TaskSummary>& summaries) {
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
  // Where this run's time went, over every task: what to speed up when the farm is slow.
  tuner::TaskSummary all;
  for (const auto& s : summaries) {
    all.search_s += s.search_s, all.build_s += s.build_s, all.measure_s += s.measure_s, all.record_s += s.record_s;
    all.load_s += s.load_s, all.run_s += s.run_s, all.measured += s.measured;
    all.build_lower_s += s.build_lower_s, all.build_codegen_s += s.build_codegen_s, all.build_tool_s += s.build_tool_s;
    all.built += s.built, all.build_jobs = std::max(all.build_jobs, s.build_jobs), all.carried += s.carried;
  }
  const double total_s = all.search_s + all.build_s + all.measure_s + all.record_s;
  if (all.measured > 0 && total_s > 0) {
    std::printf(
        "\ntime: %.1f s for %d measurements (%.1f per second): search %.1f s, build %.1f s, measure %.1f s "
        "(loading kernels %.1f s, timing %.1f s, transport %.1f s), records %.1f s\n",
        total_s, all.measured, all.measured / total_s, all.search_s, all.build_s, all.measure_s, all.load_s,
        all.run_s - all.load_s, std::max(0.0, all.measure_s - all.run_s), all.record_s);
    // Per candidate, and the work summed over the jobs against the time the tuner waited for
    // builds (on a GPU target, builds overlap the measurements: the wait is what they did not hide).
    if (all.built > 0) {
      const double per = 1e3 / all.built;
      std::printf(
          "build: %d candidates on %d jobs, per candidate: lowering %.0f ms, code generation %.0f ms, "
          "assembler/linker %.0f ms; %.1f s of work, %.1f s waited for; %d carried to a later batch\n",
          all.built, all.build_jobs, all.build_lower_s * per, all.build_codegen_s * per, all.build_tool_s * per,
          all.build_lower_s + all.build_codegen_s + all.build_tool_s, all.build_s, all.carried);
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
  int trials = 64, total_trials = 0, threads = 1, early_stopping = 0, seed = 0, time_limit = 0;
  bool no_transfer = false, local = false;
  std::string tracker, key, daemon;
  FarmClientFlags farm;
  std::vector<compiler::InputShape> input_shapes;
};

int Tune(const TuneFlags& f) {
  tuner::TuneOptions options;
  const int threads = f.threads, trials = f.trials, total = f.total_trials, time_limit = f.time_limit;
  tuner::ScheduleOptions schedule;
  if (total > 0) {
    schedule.total_trials = total;
    schedule.scheduler = *tuner::ParseSchedulerKind(f.scheduler);  // checked by the flag
  }
  options.trials = trials;
  options.threads = threads;
  options.early_stopping = f.early_stopping;
  options.seed = uint64_t(f.seed);
  options.tuner = *tuner::ParseTunerKind(f.tuner);  // checked by the flag
  options.transfer = !f.no_transfer;
  options.keep_model_layout = f.layouts == "model";
  if (!f.daemon.empty()) {
    return TuneThroughDaemon({f.daemon, f.farm.token_file, f.model, f.target, f.tracker, f.key, f.input_shapes},
                             options, schedule);
  }
  const bool farm = !f.tracker.empty();
  auto target = compiler::ParseTarget(f.target);
  if (!target.ok()) {
    std::fprintf(stderr, "tunefarm tune: %s\n", target.status().message().c_str());
    return 1;
  }
  if (!farm && target->is_cuda()) {
    // Local GPU tuning measures on this machine's first GPU (rpc_server --device cuda does the
    // same for the farm).
    auto driver = CudaDriver::Load();
    Result<int> count = driver.ok() ? (*driver)->DeviceCount() : Result<int>(driver.status());
    if (!count.ok() || *count == 0) {
      std::fprintf(
          stderr,
          "tunefarm tune: --local with target %s measures on this machine's GPU, and %s; measure it "
          "through the farm instead (--tracker HOST:PORT --key KEY, rpc_server --device cuda on the GPU host)\n",
          target->ToString().c_str(), count.ok() ? "it has none" : count.status().message().c_str());
      return 1;
    }
  } else if (!farm && !target->is_host) {
    std::fprintf(stderr,
                 "tunefarm tune: target %s does not run on this machine; measure it through the farm "
                 "(--tracker HOST:PORT --key KEY)\n",
                 target->ToString().c_str());
    return 1;
  }
  auto tasks = compiler::ExtractTasks(f.model, *target, 3, f.input_shapes);
  if (!tasks.ok()) {
    std::fprintf(stderr, "tunefarm tune: %s\n", tasks.status().message().c_str());
    return 1;
  }
  const std::string& db_path = f.records;
  auto db = tuner::RecordsDb::Open(db_path, tuner::RecordsDb::Mode::kCreate);
  if (!db.ok()) {
    std::fprintf(stderr, "tunefarm tune: %s\n", db.status().message().c_str());
    return 1;
  }
  const std::string& shown = (*db)->location();  // never a password
  // A file takes one tuner at a time; on PostgreSQL tuners on many machines share the database
  // and claims keep them from measuring a config twice.
  std::unique_ptr<tuner::TuningLock> tuning_lock;
  if (!(*db)->shared()) {
    auto acquired = tuner::TuningLock::Acquire(db_path, "tunefarm tune " + f.model);
    if (!acquired.ok()) {
      std::fprintf(stderr, "tunefarm tune: %s\n", acquired.status().message().c_str());
      return 1;
    }
    tuning_lock = std::move(*acquired);
    if (Status marked = tuner::MarkEndedTuneRuns(**db); !marked.ok()) {
      std::fprintf(stderr, "warning: cannot mark the killed runs of the jobs table: %s\n", marked.message().c_str());
    }
  }
  std::unique_ptr<tuner::Measurer> measurer;
  if (farm) {
    auto token = service::LoadToken(f.farm.token_file);
    if (!token.ok()) {
      std::fprintf(stderr, "tunefarm tune: %s\n", token.status().message().c_str());
      return 1;
    }
    measurer = std::make_unique<tuner::FarmMeasurer>(rpc_server::MeasureClientOptions{
        f.tracker, f.key, *token, "tunefarm tune", 0, 600000, {}, [](const std::string& line) {
          std::fprintf(stderr, "farm: %s\n", line.c_str());
        }});
  } else {
    const char* tmp = std::getenv("TMPDIR");
    // Work directories a killed tune or daemon left behind (their pid is gone) go first.
    rpc_server::SweepStaleMeasureDirs(tmp ? tmp : "/tmp");
    measurer = std::make_unique<tuner::LocalMeasurer>(rpc_server::DefaultMeasureChild(), tmp ? tmp : "/tmp", threads);
  }
  // The run in the jobs table, as a tuner-daemon job is (tunefarm/tuner/job_progress.h): the
  // dashboard lists it by model with its progress, and its trials carry its id.
  tuner::TuningJob run;
  run.spec = TuningJobSpecOf({"", f.farm.token_file, f.model, target->ToString(), f.tracker, f.key, f.input_shapes},
                             options, schedule);
  auto run_id = (*db)->AddJob(tuner::StoredSpecJson(run.spec), tuner::kTuneCommandRunner);
  if (!run_id.ok()) {
    std::fprintf(stderr, "tunefarm tune: %s\n", run_id.status().message().c_str());
    return 1;
  }
  run.id = *run_id;
  options.job_id = *run_id;
  run.state = tuner::JobState::kRunning;
  tuner::StartJobTasks(*tasks, total > 0 ? total : trials * int(tasks->size()), &run);
  bool run_record_failed = false;
  auto save_run = [&] {
    Status saved = (*db)->UpdateJob(run.id, run.state, tuner::StoredProgressJson(run));
    if (!saved.ok() && !run_record_failed) {
      run_record_failed = true;  // the trials are what matters: say it once and go on
      std::fprintf(stderr, "warning: cannot record this run's progress in the jobs table: %s\n",
                   saved.message().c_str());
    }
  };
  save_run();
  options.stop = &g_stop;
  std::signal(SIGINT, [](int) { g_stop = true; });
  std::atomic<bool> timed_out{false};
  std::thread timer;
  TimerState timer_state;
  if (time_limit > 0) {  // --time-limit: stop like Ctrl-C once the time is up
    timer = std::thread([&] {
      MutexLock lock(&timer_state.mu);
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(time_limit);
      while (!timer_state.finished && timer_state.cv.WaitUntil(&timer_state.mu, deadline)) {
      }
      if (!timer_state.finished) {
        timed_out = true;
        g_stop = true;
      }
    });
  }
  const bool tty = isatty(fileno(stdout));
  std::string budget = total > 0 ? std::to_string(total) + " trials in all (" +
                                       std::string(tuner::NameOf(schedule.scheduler)) + " scheduler)"
                                 : std::to_string(trials) + " trials each";
  if (time_limit > 0) budget += ", at most " + std::to_string(time_limit) + " s";
  std::printf("tuning %zu tasks of %s on %s with %s, %s; records: %s\n", tasks->size(), f.model.c_str(),
              target->ToString().c_str(), std::string(tuner::NameOf(options.tuner)).c_str(), budget.c_str(),
              shown.c_str());
  std::vector<tuner::ScheduledTask> scheduled;
  for (const auto& t : *tasks) scheduled.push_back({t.workload, t.count, t.default_workload});
  int last_task = 0;
  auto last_saved = std::chrono::steady_clock::now();
  auto summaries =
      tuner::TuneTasks(scheduled, *target, options, schedule, *measurer, **db, [&](const tuner::TaskProgress& p) {
        tuner::RecordJobProgress(p, &run);
        if (std::chrono::steady_clock::now() - last_saved >
            std::chrono::seconds(1)) {  // a row write per second at most
          save_run();
          last_saved = std::chrono::steady_clock::now();
        }
        // On a terminal the line is rewritten in place while one task runs; a new task starts a new line.
        if (tty && last_task && p.task != last_task) std::printf("\n");
        last_task = p.task;
        std::printf("%s%s%s", tty ? "\r" : "", tuner::FormatProgress(p).c_str(), tty ? "" : "\n");
        std::fflush(stdout);
      });
  if (tty && last_task) std::printf("\n");
  if (timer.joinable()) {
    {
      MutexLock lock(&timer_state.mu);
      timer_state.finished = true;
    }
    timer_state.cv.SignalAll();
    timer.join();
  }
  if (!summaries.ok()) {
    run.state = tuner::JobState::kFailed;
    run.message = summaries.status().message();
    save_run();
    std::fprintf(stderr, "tunefarm tune: %s\n", summaries.status().message().c_str());
    return 1;
  }
  tuner::RecordJobSummaries(*summaries, &run);
  bool any_success = false;
  for (const auto& s : *summaries) any_success = any_success || s.best_gflops > 0;
  // Stopped at the time limit: done with what the time allowed; by Ctrl-C: cancelled; no trial
  // succeeded (the command fails below and says why): failed.
  const bool cancelled = g_stop && !timed_out, failed = !cancelled && !summaries->empty() && !any_success;
  run.state = cancelled ? tuner::JobState::kCancelled : failed ? tuner::JobState::kFailed : tuner::JobState::kDone;
  run.message = cancelled   ? "stopped by Ctrl-C"
                : failed    ? "no trial succeeded: the measurements fail, not the configs"
                : timed_out ? "stopped at the time limit (" + std::to_string(time_limit) + " s)"
                            : "finished";
  save_run();
  PrintSummaryTable(*summaries);
  if (g_stop && !timed_out) {
    std::printf("stopped by Ctrl-C; run the same command again to resume (every finished trial is in %s)\n",
                shown.c_str());
  } else if (timed_out) {
    std::printf("stopped at the time limit (%d s); run again to go on (every finished trial is in %s)\n", time_limit,
                shown.c_str());
  }
  std::printf("records: %s (compile with: tunefarm compile %s --target \"%s\" --records %s -o OUT)\n", shown.c_str(),
              f.model.c_str(), target->ToString().c_str(), shown.c_str());
  if (g_stop && !timed_out) return 130;
  // Every task without one successful trial (this run's or resumed): the measurements are broken,
  // not slow -- say so instead of exiting 0 with nothing to compile from.
  std::map<std::string, int> errors;
  for (const auto& s : *summaries) {
    for (const auto& [status, n] : s.errors) errors[status] += n;
  }
  if (!summaries->empty() && !any_success) {
    std::fflush(stdout);  // after the summary table
    std::string why;
    for (const auto& [status, n] : errors) why += (why.empty() ? "" : ", ") + status + " " + std::to_string(n);
    std::fprintf(
        stderr,
        "tunefarm tune: no trial succeeded (%s); the measurements fail, not the configs: see `tunefarm records list "
        "--records %s` for the messages\n",
        why.empty() ? "no trials" : why.c_str(), shown.c_str());
    return 1;
  }
  return 0;
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
  AddIntFlag(app, "--threads", &f->threads, 1, 1024, "threads each measurement runs on (default 1)");
  AddFarmClientFlags(app, &f->farm, /*tls=*/false);
  app.add_option("--daemon", f->daemon, "submit the job to this tuner-daemon, which owns the records, and follow it")
      ->type_name("HOST:PORT")
      ->excludes(records)
      ->excludes(local)
      ->excludes(time_limit);
  return [f] { return Tune(*f); };
}

}  // namespace tunefarm::cli
