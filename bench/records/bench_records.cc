// bench_records [--trials N] [--records URL]
// What committing a trial costs the tuner (issue 17's bar: < 2 ms per trial at p95 to PostgreSQL
// on loopback), PostgreSQL and SQLite side by side in one run.
//
// Without --records it starts a real PostgreSQL server (Debian's, fsync on as in production) on
// 127.0.0.1 in a temporary directory. Each round does what a tuner's batch does: claim 16 configs,
// then commit one trial per config (RecordsDb::AddTrial, completing its claim); the time of each
// commit is recorded. A warm-up batch is not counted. Prints p50/p95/p99/max per engine.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "common/postgres_server.h"
#include "tunefarm/command_line/command_line.h"
#include "tunefarm/tuner/records.h"

namespace {

using Clock = std::chrono::steady_clock;
namespace tt = tunefarm::tuner;

tt::TrialRecord Trial(int64_t config) {
  tt::TrialRecord t;
  t.workload_key = "conv2d|N1_C64_H56_W56|K64_R3x3_S1x1_P1_1_1_1_D1x1_G1|NCHW|float32";
  t.template_name = "conv2d_nchwc";
  t.flops = 231211008.0;
  t.target = "llvm -mtriple=x86_64-pc-linux-gnu -mcpu=znver4";
  t.target_keys = "cpu";
  t.config_index = config;
  t.config_json = R"({"tile_ic":16,"tile_oc":16,"tile_ow":7,"unroll_kw":true,"tile_oh":2,"order":"nchw"})";
  t.costs_ms = {1.52, 1.51, 1.53};
  t.mean_ms = 1.52;
  t.device_key = "x86-avx512";
  t.build_ms = 48;
  t.run_ms = 12;
  return t;
}

double Percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, size_t(p * double(v.size())))];
}

// Commit times in ms, `trials` of them after one warm-up batch.
std::vector<double> Run(const std::string& location, int trials) {
  auto db = tt::RecordsDb::Open(location, tt::RecordsDb::Mode::kCreate);
  if (!db.ok()) {
    std::fprintf(stderr, "bench_records: %s\n", db.status().message().c_str());
    std::exit(1);
  }
  const tt::TrialRecord task = Trial(0);
  std::vector<double> ms;
  int64_t next = 0;
  constexpr int kBatch = 16;
  for (int done = -kBatch; done < trials; done += kBatch) {
    std::vector<int64_t> configs;
    for (int i = 0; i < kBatch; ++i) configs.push_back(next++);
    auto claimed = (*db)->Claim(task, configs, "bench", 60000);
    if (!claimed.ok() || claimed->size() != configs.size()) {
      std::fprintf(stderr, "bench_records: claim failed: %s\n",
                   claimed.ok() ? "not every config" : claimed.status().message().c_str());
      std::exit(1);
    }
    for (int64_t c : *claimed) {
      tt::TrialRecord t = Trial(c);
      const auto t0 = Clock::now();
      auto s = (*db)->AddTrial(&t, "bench");
      const double elapsed = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
      if (!s.ok()) {
        std::fprintf(stderr, "bench_records: %s\n", s.message().c_str());
        std::exit(1);
      }
      if (done >= 0) ms.push_back(elapsed);
    }
  }
  return ms;
}

void Report(const char* engine, const std::vector<double>& ms) {
  std::printf("%-10s %6zu trials  p50 %.3f ms  p95 %.3f ms  p99 %.3f ms  max %.3f ms\n", engine, ms.size(),
              Percentile(ms, 0.5), Percentile(ms, 0.95), Percentile(ms, 0.99), *std::max_element(ms.begin(), ms.end()));
}

}  // namespace

int main(int argc, char** argv) {
  int trials = 2000;
  std::string records;
  CLI::App app{"bench_records: the cost of committing a trial, PostgreSQL and SQLite", "bench_records"};
  tunefarm::AddIntFlag(app, "--trials", &trials, 16, 1000000, "trials committed per engine (default 2000)");
  app.add_option("--records", records, "a PostgreSQL database to use instead of starting a server")->type_name("URL");
  if (auto exit_code = tunefarm::ParseCommandLine(app, argc, argv)) return *exit_code;

  tunefarm::testing::PostgresServer server;
  if (records.empty()) {
    std::string error;
    if (!server.Start(&error, /*durable=*/true)) {
      std::fprintf(stderr, "bench_records: %s\n", error.c_str());
      return 1;
    }
    records = server.CreateDatabase("bench", &error);
    if (records.empty()) {
      std::fprintf(stderr, "bench_records: %s\n", error.c_str());
      return 1;
    }
    std::printf("PostgreSQL %s (fsync on), loopback\n", tunefarm::testing::PostgresServer::BinDir().c_str());
  }
  const std::string sqlite = "/tmp/bench_records_" + std::to_string(getpid()) + ".db";
  const auto pg = Run(records, trials);
  const auto lite = Run(sqlite, trials);
  for (const char* suffix : {"", "-wal", "-shm"}) std::remove((sqlite + suffix).c_str());
  Report("postgresql", pg);
  Report("sqlite", lite);
  const double p95 = Percentile(pg, 0.95);
  std::printf("bar: PostgreSQL commit p95 < 2 ms: %s (%.3f ms)\n", p95 < 2.0 ? "met" : "MISSED", p95);
  return 0;
}
