// bench_dashboard [--trials N] [--tasks T] [--updates U] [--keep PATH]
// The dashboard over a large records database (issue 14's bar: 200,000 trials; the overview and a
// task view load in under 1 s; an incremental update answers in under 50 ms at p95).
//
// Builds the database through the records layer (ImportJsonLines, one transaction): T workloads of
// one job, 10% of trials failed with one of a few messages. Starts the dashboard in-process on
// loopback and times, over real HTTP, what the page requests:
//   overview  = /api/config + /api/overview + /api/models
//   task view = /api/task + /api/trials pages (limit 50000) until `more` is false, for the largest task
//   model     = /api/model of the job (not under the bar; reported)
//   update    = commit one trial (AddTrial), then /api/last + /api/trials?task=..&after=POS, U times
// Best and median of 5 for the loads; p50/p95/max over U for updates.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <string>

#include "common/http_client.h"
#include "tunefarm/command_line/command_line.h"
#include "tunefarm/tuner/dashboard.h"
#include "tunefarm/tuner/records.h"

namespace {

using Clock = std::chrono::steady_clock;
using tunefarm::testing::Http;

double Ms(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double, std::milli>(b - a).count(); }

size_t Get(const std::string& address, const std::string& target, nlohmann::json* out = nullptr) {
  const auto r = Http(address, target);
  if (r.status != 200) {
    std::fprintf(stderr, "bench_dashboard: %s answered %d: %s\n", target.c_str(), r.status,
                 r.body.substr(0, 300).c_str());
    std::exit(1);
  }
  if (out) *out = nlohmann::json::parse(r.body);
  return r.body.size();
}

double Percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, size_t(p * double(v.size() - 1) + 0.5))];
}

}  // namespace

int main(int argc, char** argv) {
  int64_t trials = 200000, tasks = 20, updates = 200;
  std::string path;
  CLI::App app{"bench_dashboard: the dashboard API's answer times over a large records database", "bench_dashboard"};
  tunefarm::AddIntFlag(app, "--trials", &trials, 1, 100000000, "trials in the database (default 200000)");
  tunefarm::AddIntFlag(app, "--tasks", &tasks, 1, 100000, "workloads they spread over (default 20)");
  tunefarm::AddIntFlag(app, "--updates", &updates, 1, 1000000, "live updates timed (default 200)");
  app.add_option("--keep", path, "keep the database there")->type_name("PATH");
  if (auto exit_code = tunefarm::ParseCommandLine(app, argc, argv)) return *exit_code;
  const bool keep = !path.empty();
  if (!keep) path = "/tmp/bench_dashboard_" + std::to_string(getpid()) + ".db";
  std::remove(path.c_str());
  auto db = tunefarm::tuner::RecordsDb::Open(path, tunefarm::tuner::RecordsDb::Mode::kCreate);
  if (!db.ok()) {
    std::fprintf(stderr, "bench_dashboard: %s\n", db.status().message().c_str());
    return 1;
  }
  // One job over every task, so the model view has weights.
  nlohmann::json progress = {{"trials_done", trials}, {"trials_budget", trials}, {"tasks", nlohmann::json::array()}};
  std::vector<std::string> keys;
  for (int64_t t = 0; t < tasks; ++t) {
    keys.push_back("conv2d|N1_C" + std::to_string(64 + t) + "_H56_W56|K64_R3x3_S1x1_P1_1_1_1_D1x1_G1|NCHW|float32");
    progress["tasks"].push_back({{"workload", "conv2d_nchwc:" + keys.back()}, {"weight", 1 + t % 3}, {"flops", 2.3e8}});
  }
  const int64_t job = *(*db)->AddJob(R"({"model":"bench","target":"native"})");
  (void)(*db)->UpdateJob(job, tunefarm::tuner::JobState::kRunning, progress.dump());

  const auto build_start = Clock::now();
  std::mt19937_64 rng(7);
  std::stringstream lines;
  const char* messages[] = {"compile_error", "runtime_error", "timeout"};
  for (int64_t i = 0; i < trials; ++i) {
    const int64_t t = i % tasks;
    const int tile = 1 << (rng() % 6), unroll = int(rng() % 4), vec = 1 << (rng() % 4);
    const bool failed = rng() % 10 == 0;
    const double ms = 1.0 / (tile * 0.5 + vec * 0.3 + unroll * 0.1 + 1) * (1 + 0.05 * double(rng() % 100) / 100);
    nlohmann::json line = {
        {"workload", keys[size_t(t)]},
        {"template", "conv2d_nchwc"},
        {"flops", 2.3e8},
        {"target", "llvm -mtriple=x86_64-pc-linux-gnu -mcpu=znver4"},
        {"target_keys", "cpu"},
        {"config_index", i / tasks},
        {"config",
         nlohmann::json{{"index", i / tasks}, {"knobs", {{"tile", tile}, {"unroll", unroll}, {"vec", vec}}}}.dump()},
        {"status", failed ? messages[i % 3] : "ok"},
        {"error_message",
         failed ? std::string("error ") + std::to_string(rng() % 5) + ": register spill in the inner loop" : ""},
        {"costs_ms", failed ? nlohmann::json::array() : nlohmann::json::array({ms, ms})},
        {"mean_ms", failed ? 0.0 : ms},
        {"device_key", "x86-" + std::to_string(t % 2)},
        {"build_ms", 40.0 + double(rng() % 100)},
        {"job_id", job}};
    lines << line.dump() << "\n";
  }
  auto imported = (*db)->ImportJsonLines(lines);
  if (!imported.ok()) {
    std::fprintf(stderr, "bench_dashboard: %s\n", imported.status().message().c_str());
    return 1;
  }
  std::printf("database: %lld trials, %lld tasks, built in %.1f s (%s)\n", (long long)*imported, (long long)tasks,
              Ms(build_start, Clock::now()) / 1000, path.c_str());

  tunefarm::tuner::DashboardOptions options;
  options.records = {path};
  options.listen = "127.0.0.1:0";
  auto dashboard = tunefarm::tuner::Dashboard::Start(options);
  if (!dashboard.ok()) {
    std::fprintf(stderr, "bench_dashboard: %s\n", dashboard.status().message().c_str());
    return 1;
  }
  const std::string address = (*dashboard)->address();
  const int64_t task_id = (*db)->FindWorkloads(keys[0])->front().id;

  auto time_load = [&](const char* name, const std::function<size_t()>& load) {
    std::vector<double> ms;
    size_t bytes = 0;
    for (int r = 0; r < 5; ++r) {
      const auto a = Clock::now();
      bytes = load();
      ms.push_back(Ms(a, Clock::now()));
    }
    std::printf("%-10s best %7.1f ms  median %7.1f ms  (%zu KiB of JSON)\n", name,
                *std::min_element(ms.begin(), ms.end()), Percentile(ms, 0.5), bytes / 1024);
  };
  time_load("overview",
            [&] { return Get(address, "/api/config") + Get(address, "/api/overview") + Get(address, "/api/models"); });
  time_load("task view", [&] {
    size_t bytes = Get(address, "/api/task?id=" + std::to_string(task_id));
    int64_t after = 0;
    for (;;) {
      nlohmann::json page;
      bytes += Get(address,
                   "/api/trials?task=" + std::to_string(task_id) + "&after=" + std::to_string(after) + "&limit=50000",
                   &page);
      after = page["last_id"];
      if (!page["more"]) break;
    }
    return bytes;
  });
  time_load("model", [&] { return Get(address, "/api/model?job=" + std::to_string(job)); });

  nlohmann::json last;
  Get(address, "/api/trials?task=" + std::to_string(task_id) + "&after=0&limit=1", &last);
  Get(address, "/api/last", &last);
  int64_t position = last["last_id"];
  std::vector<double> update_ms;
  for (int64_t u = 0; u < updates; ++u) {
    tunefarm::tuner::TrialRecord t;
    t.workload_key = keys[0];
    t.template_name = "conv2d_nchwc";
    t.flops = 2.3e8;
    t.target = "llvm -mtriple=x86_64-pc-linux-gnu -mcpu=znver4";
    t.config_index = 1000000 + u;
    t.config_json = R"({"index":0,"knobs":{"tile":4,"unroll":1,"vec":2}})";
    t.costs_ms = {0.5};
    t.mean_ms = 0.5;
    t.job_id = job;
    (void)(*db)->AddTrial(&t);
    const auto a = Clock::now();
    nlohmann::json fresh;
    Get(address, "/api/last");
    Get(address, "/api/trials?task=" + std::to_string(task_id) + "&after=" + std::to_string(position), &fresh);
    update_ms.push_back(Ms(a, Clock::now()));
    if (fresh["count"] != 1) {
      std::fprintf(stderr, "bench_dashboard: update %lld returned %s trials, not 1\n", (long long)u,
                   fresh["count"].dump().c_str());
      return 1;
    }
    position = fresh["last_id"];
  }
  std::printf(
      "update     p50 %7.2f ms  p95 %7.2f ms  max %7.2f ms  (%lld updates: commit one trial, /api/last + "
      "/api/trials?after=)\n",
      Percentile(update_ms, 0.5), Percentile(update_ms, 0.95), *std::max_element(update_ms.begin(), update_ms.end()),
      (long long)updates);
  dashboard->reset();
  db->reset();
  if (!keep) {
    std::remove(path.c_str());
    std::remove((path + "-wal").c_str());
    std::remove((path + "-shm").c_str());
  }
  return 0;
}
