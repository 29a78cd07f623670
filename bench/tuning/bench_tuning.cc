// bench_tuning: tuning curves -- best GFLOP/s after 16, 32, ..., N trials for each tuner on
// ResNet-18 tasks of bench/kernels/workloads.h (default 2, 5, 8, 11), with the local runner and the
// timing protocol the issue names (number 10, repeat 3), and the tuning throughput (measured
// configs per second including builds and model refits).
//
//   bench_tuning [--tasks 2,5,8,11] [--tuners xgb,ga,random] [--trials 512] [--seed S]
//                [--threads 1] [--json PATH] [--keep-records DB]
//
// Each (task, tuner) run starts from an empty records database (no resume, no transfer), so runs
// are independent; --keep-records also copies every xgb trial into DB for later benches.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "bench/kernels/workloads.h"
#include "tunefarm/command_line/command_line.h"
#include "tunefarm/tuner/tuner.h"

namespace tunefarm::bench {
namespace {

struct Options {
  std::vector<int> tasks = {2, 5, 8, 11};
  std::vector<std::string> tuners = {"xgb", "ga", "random"};
  int trials = 512;
  uint64_t seed = 2026;
  int threads = 1;
  std::string json_path, keep_records;
};

int Run(const Options& opt) {
  const compiler::Target target = compiler::HostTarget();
  std::vector<BenchWorkload> all = BenchWorkloads();
  char dir_template[] = "/tmp/tunefarm_bench_tuning_XXXXXX";
  const char* dir = mkdtemp(dir_template);
  if (!dir) {
    std::fprintf(stderr, "bench_tuning: cannot create a temp directory\n");
    return 1;
  }
  tuner::LocalMeasurer measurer(rpc_server::DefaultMeasureChild(), dir, opt.threads);
  std::unique_ptr<tuner::RecordsDb> keep;
  if (!opt.keep_records.empty()) {
    auto db = tuner::RecordsDb::Open(opt.keep_records, tuner::RecordsDb::Mode::kCreate);
    if (!db.ok()) {
      std::fprintf(stderr, "bench_tuning: %s\n", db.status().message().c_str());
      return 1;
    }
    keep = std::move(*db);
  }
  std::vector<int> checkpoints;
  for (int c = 16; c <= opt.trials; c *= 2) checkpoints.push_back(c);
  std::printf("bench_tuning: target %s, %d thread(s), %d trials, number 10 repeat 3, seed %llu\n", target.cpu.c_str(),
              opt.threads, opt.trials, (unsigned long long)opt.seed);
  std::fflush(stdout);
  std::printf("%-12s %-7s", "task", "tuner");
  for (int c : checkpoints) std::printf(" %7d", c);
  std::printf(" %8s %9s\n", "seconds", "configs/s");
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (int task : opt.tasks) {
    if (task < 1 || task > 12) {
      std::fprintf(stderr, "bench_tuning: task %d is not one of ResNet-18's 12 tasks\n", task);
      return 2;
    }
    const BenchWorkload& bw = all[size_t(task - 1)];
    for (const std::string& name : opt.tuners) {
      const std::string db_path = std::string(dir) + "/" + bw.label + "." + name + ".db";
      auto db = tuner::RecordsDb::Open(db_path, tuner::RecordsDb::Mode::kCreate);
      if (!db.ok()) {
        std::fprintf(stderr, "bench_tuning: %s\n", db.status().message().c_str());
        return 1;
      }
      tuner::TuneOptions o;
      o.tuner = *tuner::ParseTunerKind(name);  // checked by the flag
      o.trials = opt.trials;
      o.seed = opt.seed;
      o.threads = opt.threads;
      o.tmp_root = dir;
      o.transfer = false;
      o.keep_model_layout = false;  // the kernel's whole space, as AutoTVM's task tuning
      o.cold_cache = false;
      auto t0 = std::chrono::steady_clock::now();
      auto tt = tuner::TaskTuner::Create(bw.workload, target, o, measurer, **db, task, 12);
      if (!tt.ok()) {
        std::fprintf(stderr, "bench_tuning: %s: %s\n", bw.label.c_str(), tt.status().message().c_str());
        return 1;
      }
      std::vector<std::pair<int, double>> curve;  // (trials, best GFLOP/s) after each batch
      while (!(*tt)->finished()) {
        auto n = (*tt)->RunBatch();
        if (!n.ok()) {
          std::fprintf(stderr, "bench_tuning: %s: %s\n", bw.label.c_str(), n.status().message().c_str());
          return 1;
        }
        if (*n == 0) break;
        curve.push_back({(*tt)->done(), (*tt)->summary().best_gflops});
      }
      const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      const int done = (*tt)->done();
      std::printf("%-12s %-7s", bw.label.c_str(), name.c_str());
      nlohmann::ordered_json best_at = nlohmann::ordered_json::object();
      for (int c : checkpoints) {
        double best = 0;
        for (const auto& [n, g] : curve) {
          if (n <= c) best = g;
        }
        best_at[std::to_string(c)] = best;
        std::printf(" %7.1f", best);
      }
      const auto& sm = (*tt)->summary();
      std::printf(" %8.1f %9.2f  (search %.1f s, build %.1f s, measure %.1f s)\n", seconds, done / seconds, sm.search_s,
                  sm.build_s, sm.measure_s);
      std::fflush(stdout);
      nlohmann::ordered_json curve_json = nlohmann::ordered_json::array();
      for (const auto& [n, g] : curve) curve_json.push_back({n, g});
      const auto& s = (*tt)->summary();
      out.push_back(
          {{"task", task},
           {"label", bw.label},
           {"workload", bw.workload.Key()},
           {"tuner", name},
           {"trials", done},
           {"seconds", seconds},
           {"configs_per_second", done / seconds},
           {"fallback_gflops", s.fallback_gflops},
           {"best_config", s.best_config},
           {"best_at", best_at},
           {"curve", curve_json},
           {"errors", s.errors},
           {"time_s",
            {{"search", s.search_s}, {"build", s.build_s}, {"measure", s.measure_s}, {"record", s.record_s}}}});
      if (keep && o.tuner == tuner::TunerKind::kXgb) {
        auto trials = (*db)->List();
        if (trials.ok()) {
          for (auto t : *trials) {
            t.id = 0;
            (void)keep->AddTrial(&t);
          }
        }
      }
      db->reset();
      unlink(db_path.c_str());
      unlink((db_path + "-wal").c_str());
      unlink((db_path + "-shm").c_str());
    }
  }
  rmdir(dir);
  if (!opt.json_path.empty()) {
    std::ofstream f(opt.json_path);
    f << out.dump(1) << "\n";
    if (!f) {
      std::fprintf(stderr, "bench_tuning: cannot write %s\n", opt.json_path.c_str());
      return 1;
    }
  }
  return 0;
}

}  // namespace
}  // namespace tunefarm::bench

int main(int argc, char** argv) {
  using namespace tunefarm::bench;  // NOLINT
  Options opt;
  CLI::App app{"bench_tuning: best GFLOP/s against trials for each tuner on a set of resnet-18 tasks", "bench_tuning"};
  app.add_option("--tasks", opt.tasks, "resnet-18 task indices (default 2,5,8,11)")->delimiter(',');
  app.add_option("--tuners", opt.tuners, "tuners to compare (default xgb,ga,random)")
      ->delimiter(',')
      ->check(CLI::IsMember(tunefarm::tuner::TunerKindNames()));
  tunefarm::AddIntFlag(app, "--trials", &opt.trials, 16, 1000000, "trials per task and tuner (default 512)");
  app.add_option("--seed", opt.seed, "random seed (default 2026)");
  tunefarm::AddIntFlag(app, "--threads", &opt.threads, 1, 1024, "measurement threads (default 1)");
  app.add_option("--json", opt.json_path, "also write the figures there")->type_name("PATH");
  app.add_option("--keep-records", opt.keep_records, "keep the trials in this database")->type_name("DB");
  if (auto exit_code = tunefarm::ParseCommandLine(app, argc, argv)) return *exit_code;
  return Run(opt);
}
