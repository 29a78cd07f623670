// tunefarm tune MODEL --target T [--trials N] [--tuner xgb|ga|random|grid] [--early-stopping N]
//                [--records DB] [--local | --tracker HOST:PORT --key KEY] [--threads N] [--token-file PATH]
// Tunes every task of the model, committing each trial to the records database as it completes;
// the same command again resumes without re-measuring. Ctrl-C stops after the batch in flight.
#include <unistd.h>

#include <csignal>
#include <set>
#include <cstdio>

#include "tools/tunefarm/command_table.h"
#include "tools/tunefarm/records_option.h"
#include "tunefarm/compiler/model.h"
#include "tunefarm/tracker/auth.h"
#include "tunefarm/tuner/tuner.h"

namespace tunefarm::cli {
namespace {

std::atomic<bool> g_stop{false};

std::string SelfDir() {
  char buf[4096];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  std::string p(buf, size_t(std::max<ssize_t>(n, 0)));
  return p.substr(0, p.rfind('/'));
}

bool ParsePositive(const std::string& s, int* out) {
  char* end = nullptr;
  long v = std::strtol(s.c_str(), &end, 10);
  if (s.empty() || *end || v < 0 || v > 1000000) return false;
  *out = int(v);
  return true;
}

}  // namespace

int TuneCommand(const Args& args) {
  const char* usage =
      "usage: tunefarm tune MODEL --target T [--trials N] [--tuner xgb|ga|random|grid] [--early-stopping N]\n"
      "                     [--records DB] [--local | --tracker HOST:PORT --key KEY] [--threads N] [--token-file PATH]";
  static const std::set<std::string> kFlags = {"--target", "--trials", "--tuner", "--early-stopping", "--records", "--local",
                                               "--tracker", "--key", "--threads", "--token-file", "--seed"};
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
  int threads = 1, trials = 64, early = 0, seed = 0;
  if (!ParsePositive(args.Get("--trials", "64"), &trials) || trials < 1 || !ParsePositive(args.Get("--threads", "1"), &threads) ||
      threads < 1 || !ParsePositive(args.Get("--early-stopping", "0"), &early) || !ParsePositive(args.Get("--seed", "0"), &seed)) {
    std::fprintf(stderr, "tunefarm tune: --trials, --threads, --early-stopping and --seed take non-negative integers\n%s\n", usage);
    return 2;
  }
  options.trials = trials;
  options.threads = threads;
  options.early_stopping = early;
  options.seed = uint64_t(seed);
  options.tuner = args.Get("--tuner", "xgb");
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
  if (!farm && !target->is_host) {
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
  std::unique_ptr<tuner::Measurer> measurer;
  if (farm) {
    auto token = tracker::LoadToken(args.Get("--token-file", ""));
    if (!token.ok()) {
      std::fprintf(stderr, "tunefarm tune: %s\n", token.status().message().c_str());
      return 1;
    }
    measurer = std::make_unique<tuner::FarmMeasurer>(
        rpc_server::MeasureClientOptions{args.Get("--tracker", ""), args.Get("--key", ""), *token, "tunefarm tune", 0, 600000, {}});
  } else {
    const char* tmp = std::getenv("TMPDIR");
    measurer = std::make_unique<tuner::LocalMeasurer>(SelfDir() + "/tunefarm-measure-child", tmp ? tmp : "/tmp", threads);
  }
  options.stop = &g_stop;
  std::signal(SIGINT, [](int) { g_stop = true; });
  const bool tty = isatty(fileno(stdout));
  std::printf("tuning %zu tasks of %s on %s with %s, %d trials each; records: %s\n", tasks->size(), args.positional[0].c_str(),
              target->ToString().c_str(), options.tuner.c_str(), trials, db_path.c_str());
  std::vector<tuner::TaskSummary> summaries;
  for (size_t i = 0; i < tasks->size() && !g_stop; ++i) {
    auto summary = tuner::TuneTask((*tasks)[i].workload, *target, options, *measurer, **db, int(i + 1), int(tasks->size()),
                                   [&](const tuner::TaskProgress& p) {
                                     std::printf("%s[Task %2d/%2d]  Current/Best: %7.2f/%7.2f GFLOPS | Progress: (%d/%d) | %.2f s%s",
                                                 tty ? "\r" : "", p.task, p.tasks, p.current_gflops, p.best_gflops, p.done,
                                                 p.budget, p.elapsed_s, tty ? "" : "\n");
                                     std::fflush(stdout);
                                   });
    if (tty) std::printf("\n");
    if (!summary.ok()) {
      std::fprintf(stderr, "tunefarm tune: task %zu (%s): %s\n", i + 1, (*tasks)[i].workload.Key().c_str(),
                   summary.status().message().c_str());
      return 1;
    }
    summaries.push_back(*summary);
  }
  std::printf("\n%-6s %-8s %8s %10s %10s %8s  %s\n", "task", "trials", "resumed", "best", "fallback", "speedup", "errors / workload");
  for (size_t i = 0; i < summaries.size(); ++i) {
    const auto& s = summaries[i];
    std::string errors;
    for (const auto& [kind, n] : s.errors) errors += kind + ":" + std::to_string(n) + " ";
    std::printf("%-6zu %-8d %8d %10.2f %10.2f %7.2fx  %s%s\n", i + 1, s.trials, s.resumed, s.best_gflops, s.fallback_gflops,
                s.fallback_gflops > 0 ? s.best_gflops / s.fallback_gflops : 0.0, errors.c_str(), s.workload.Key().c_str());
  }
  if (g_stop) std::printf("stopped by Ctrl-C; run the same command again to resume (every finished trial is in %s)\n", db_path.c_str());
  std::printf("records: %s (compile with: tunefarm compile %s --target \"%s\" --records %s -o OUT)\n", db_path.c_str(),
              args.positional[0].c_str(), target->ToString().c_str(), db_path.c_str());
  return g_stop ? 130 : 0;
}

}  // namespace tunefarm::cli
