// tunefarm tune MODEL --target T [--trials N | --total-trials N [--scheduler gradient|round-robin]]
//                [--tuner xgb|ga|random|grid] [--early-stopping N] [--time-limit SECONDS] [--no-transfer]
//                [--records DB] [--local | --tracker HOST:PORT --key KEY] [--threads N] [--token-file PATH]
//                [--daemon HOST:PORT]
// Tunes every task of the model, committing each trial to the records database as it completes;
// the same command again resumes without re-measuring. Ctrl-C stops after the batch in flight.
// With --daemon the job goes to a tuner-daemon (tune_daemon_client.cc) and its progress streams back.
#include <unistd.h>

#include <condition_variable>
#include <csignal>
#include <mutex>
#include <thread>
#include <set>
#include <cstdio>
#include <map>

#include "tools/tunefarm/command_table.h"
#include "tunefarm/farm_net/flags.h"
#include "tools/tunefarm/records_option.h"
#include "tools/tunefarm/commands/tune_daemon_client.h"
#include "tunefarm/compiler/model.h"
#include "tunefarm/farm_net/auth.h"
#include "tunefarm/runtime/cuda_driver.h"
#include "tunefarm/tuner/tuner.h"

namespace tunefarm::cli {
namespace {

std::atomic<bool> g_stop{false};

}  // namespace

static void PrintSummaryTable(const std::vector<tuner::TaskSummary>& summaries) {
  std::printf("\n%-6s %-8s %8s %10s %10s %8s  %s\n", "task", "trials", "resumed", "best", "fallback", "speedup",
              "errors / workload");
  for (size_t i = 0; i < summaries.size(); ++i) {
    const auto& s = summaries[i];
    std::string errors;
    for (const auto& [kind, n] : s.errors) errors += kind + ":" + std::to_string(n) + " ";
    std::printf("%-6zu %-8d %8d %10.2f %10.2f %7.2fx  %s%s\n", i + 1, s.trials, s.resumed, s.best_gflops, s.fallback_gflops,
                s.fallback_gflops > 0 ? s.best_gflops / s.fallback_gflops : 0.0, errors.c_str(), s.workload.Key().c_str());
  }
}

int TuneCommand(const Args& args) {
  const char* usage =
      "usage: tunefarm tune MODEL --target T [--trials N | --total-trials N [--scheduler gradient|round-robin]]\n"
      "                     [--tuner xgb|ga|random|grid] [--early-stopping N] [--time-limit SECONDS] [--no-transfer]\n"
      "                     [--records DB] [--local | --tracker HOST:PORT --key KEY] [--threads N] [--token-file PATH]\n"
      "                     [--daemon HOST:PORT]";
  static const std::set<std::string> kFlags = {"--target", "--trials", "--total-trials", "--scheduler", "--tuner",
                                               "--early-stopping", "--time-limit", "--no-transfer", "--records",
                                               "--local", "--tracker", "--key", "--threads", "--token-file", "--seed",
                                               "--daemon"};
  for (const auto& [flag, value] : args.flags) {
    if (!kFlags.count(flag)) {
      std::fprintf(stderr, "tunefarm tune: unknown flag %s\n%s\n", flag.c_str(), usage);
      return 2;
    }
  }
  if (args.positional.size() != 1) {
    std::fprintf(stderr, "tunefarm tune: expected one MODEL\n%s\n", usage);
    return 2;
  }
  tuner::TuneOptions options;
  int threads = 1, trials = 64, total = 0, early = 0, seed = 0, time_limit = 0;
  // Each integer flag with its own range, so an error names the flag and what it takes
  // ("--threads '0': out of range, expected in [1, 1024]"); --total-trials 0 is not "unset".
  struct IntFlag {
    const char* name;
    int* out;
    int min, max;
  };
  for (const IntFlag& f : {IntFlag{"--trials", &trials, 1, 1000000}, IntFlag{"--total-trials", &total, 1, 100000000},
                           IntFlag{"--threads", &threads, 1, 1024}, IntFlag{"--early-stopping", &early, 0, 1000000},
                           IntFlag{"--seed", &seed, 0, 2147483647}, IntFlag{"--time-limit", &time_limit, 0, 31536000}}) {
    if (!args.Has(f.name)) continue;
    auto v = farm_net::ParseIntFlag(f.name, args.Get(f.name, ""), f.min, f.max);
    if (!v.ok()) {
      std::fprintf(stderr, "tunefarm tune: %s\n%s\n", v.status().message().c_str(), usage);
      return 2;
    }
    *f.out = int(*v);
  }
  if (args.Has("--trials") && args.Has("--total-trials")) {
    std::fprintf(stderr, "tunefarm tune: give --trials (per task) or --total-trials (over all tasks), not both\n%s\n", usage);
    return 2;
  }
  tuner::ScheduleOptions schedule;
  if (total > 0) {
    schedule.total_trials = total;
    schedule.strategy = args.Get("--scheduler", "gradient");
    if (schedule.strategy != "gradient" && schedule.strategy != "round-robin") {
      std::fprintf(stderr, "tunefarm tune: unknown --scheduler '%s' (gradient, round-robin)\n", schedule.strategy.c_str());
      return 2;
    }
  } else if (args.Has("--scheduler")) {
    std::fprintf(stderr, "tunefarm tune: --scheduler needs --total-trials\n%s\n", usage);
    return 2;
  }
  options.trials = trials;
  options.threads = threads;
  options.early_stopping = early;
  options.seed = uint64_t(seed);
  options.tuner = args.Get("--tuner", "xgb");
  options.transfer = !args.Has("--no-transfer");
  if (args.Has("--daemon")) {
    if (args.Has("--records") || args.Has("--local") || args.Has("--time-limit")) {
      std::fprintf(stderr, "tunefarm tune: with --daemon the daemon owns the records (--records, --local and "
                           "--time-limit do not apply)\n%s\n", usage);
      return 2;
    }
    return TuneThroughDaemon(args, options, schedule);
  }
  const bool farm = args.Has("--tracker");
  if (farm && (args.Has("--local") || args.Get("--key", "").empty())) {
    std::fprintf(stderr, "tunefarm tune: --tracker needs --key and excludes --local\n%s\n", usage);
    return 2;
  }
  auto target = compiler::ParseTarget(args.Get("--target", "native"));
  if (!target.ok()) {
    std::fprintf(stderr, "tunefarm tune: %s\n", target.status().message().c_str());
    return 1;
  }
  if (!farm && target->kind == "cuda") {
    // Local GPU tuning measures on this machine's first GPU (rpc_server --device cuda does the
    // same for the farm).
    auto driver = CudaDriver::Load();
    Result<int> count = driver.ok() ? (*driver)->DeviceCount() : Result<int>(driver.status());
    if (!count.ok() || *count == 0) {
      std::fprintf(stderr, "tunefarm tune: --local with target %s measures on this machine's GPU, and %s; measure it "
                           "through the farm instead (--tracker HOST:PORT --key KEY, rpc_server --device cuda on the GPU host)\n",
                   target->ToString().c_str(), count.ok() ? "it has none" : count.status().message().c_str());
      return 1;
    }
  } else if (!farm && !target->is_host) {
    std::fprintf(stderr, "tunefarm tune: target %s does not run on this machine; measure it through the farm "
                         "(--tracker HOST:PORT --key KEY)\n", target->ToString().c_str());
    return 1;
  }
  auto tasks = compiler::ExtractTasks(args.positional[0], *target);
  if (!tasks.ok()) {
    std::fprintf(stderr, "tunefarm tune: %s\n", tasks.status().message().c_str());
    return 1;
  }
  const std::string db_path = args.Get("--records", kDefaultRecordsDb);
  auto db = tuner::RecordsDb::Open(db_path, tuner::RecordsDb::Mode::kCreate);
  if (!db.ok()) {
    std::fprintf(stderr, "tunefarm tune: %s\n", db.status().message().c_str());
    return 1;
  }
  auto lock = tuner::TuningLock::Acquire(db_path, "tunefarm tune " + args.positional[0]);
  if (!lock.ok()) {
    std::fprintf(stderr, "tunefarm tune: %s\n", lock.status().message().c_str());
    return 1;
  }
  std::unique_ptr<tuner::Measurer> measurer;
  if (farm) {
    auto token = farm_net::LoadToken(args.Get("--token-file", ""));
    if (!token.ok()) {
      std::fprintf(stderr, "tunefarm tune: %s\n", token.status().message().c_str());
      return 1;
    }
    measurer = std::make_unique<tuner::FarmMeasurer>(
        rpc_server::MeasureClientOptions{args.Get("--tracker", ""), args.Get("--key", ""), *token, "tunefarm tune", 0, 600000, {},
                                         [](const std::string& line) { std::fprintf(stderr, "farm: %s\n", line.c_str()); }});
  } else {
    const char* tmp = std::getenv("TMPDIR");
    measurer = std::make_unique<tuner::LocalMeasurer>(rpc_server::DefaultMeasureChild(), tmp ? tmp : "/tmp", threads);
  }
  options.stop = &g_stop;
  std::signal(SIGINT, [](int) { g_stop = true; });
  std::atomic<bool> timed_out{false};
  std::thread timer;
  std::mutex timer_mu;
  std::condition_variable timer_cv;
  bool finished = false;
  if (time_limit > 0) {  // --time-limit: stop like Ctrl-C once the time is up
    timer = std::thread([&] {
      std::unique_lock<std::mutex> lock(timer_mu);
      if (!timer_cv.wait_for(lock, std::chrono::seconds(time_limit), [&] { return finished; })) {
        timed_out = true;
        g_stop = true;
      }
    });
  }
  const bool tty = isatty(fileno(stdout));
  std::string budget = total > 0 ? std::to_string(total) + " trials in all (" + schedule.strategy + " scheduler)"
                                 : std::to_string(trials) + " trials each";
  if (time_limit > 0) budget += ", at most " + std::to_string(time_limit) + " s";
  std::printf("tuning %zu tasks of %s on %s with %s, %s; records: %s\n", tasks->size(), args.positional[0].c_str(),
              target->ToString().c_str(), options.tuner.c_str(), budget.c_str(), db_path.c_str());
  std::vector<tuner::ScheduledTask> scheduled;
  for (const auto& t : *tasks) scheduled.push_back({t.workload, t.count});
  int last_task = 0;
  auto summaries = tuner::TuneTasks(scheduled, *target, options, schedule, *measurer, **db, [&](const tuner::TaskProgress& p) {
    // On a terminal the line is rewritten in place while one task runs; a new task starts a new line.
    if (tty && last_task && p.task != last_task) std::printf("\n");
    last_task = p.task;
    std::printf("%s%s%s", tty ? "\r" : "", tuner::FormatProgress(p).c_str(), tty ? "" : "\n");
    std::fflush(stdout);
  });
  if (tty && last_task) std::printf("\n");
  if (timer.joinable()) {
    {
      std::lock_guard<std::mutex> lock(timer_mu);
      finished = true;
    }
    timer_cv.notify_all();
    timer.join();
  }
  if (!summaries.ok()) {
    std::fprintf(stderr, "tunefarm tune: %s\n", summaries.status().message().c_str());
    return 1;
  }
  PrintSummaryTable(*summaries);
  if (g_stop && !timed_out) {
    std::printf("stopped by Ctrl-C; run the same command again to resume (every finished trial is in %s)\n", db_path.c_str());
  } else if (timed_out) {
    std::printf("stopped at the time limit (%d s); run again to go on (every finished trial is in %s)\n", time_limit,
                db_path.c_str());
  }
  std::printf("records: %s (compile with: tunefarm compile %s --target \"%s\" --records %s -o OUT)\n", db_path.c_str(),
              args.positional[0].c_str(), target->ToString().c_str(), db_path.c_str());
  if (g_stop && !timed_out) return 130;
  // Every task without one successful trial (this run's or resumed): the measurements are broken,
  // not slow -- say so instead of exiting 0 with nothing to compile from.
  std::map<std::string, int> errors;
  bool any_success = false;
  for (const auto& s : *summaries) {
    any_success = any_success || s.best_gflops > 0;
    for (const auto& [status, n] : s.errors) errors[status] += n;
  }
  if (!summaries->empty() && !any_success) {
    std::fflush(stdout);  // after the summary table
    std::string why;
    for (const auto& [status, n] : errors) why += (why.empty() ? "" : ", ") + status + " " + std::to_string(n);
    std::fprintf(stderr,
                 "tunefarm tune: no trial succeeded (%s); the measurements fail, not the configs: see `tunefarm records list "
                 "--records %s` for the messages\n",
                 why.empty() ? "no trials" : why.c_str(), db_path.c_str());
    return 1;
  }
  return 0;
}

}  // namespace tunefarm::cli
