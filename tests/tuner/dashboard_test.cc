// The dashboard: its JSON API over a records database written through the records layer (figures
// checked against sums done here), the names and speeds the page shows as sent, the incremental
// trial stream, knob importance, hostile parameters, the embedded page files, the cancel guard and
// the records metrics. The page itself runs in headless Chromium in dashboard_browser_test.cc.
#include "tunefarm/tuner/dashboard.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "common/http_client.h"
#include "common/process.h"
#include "common/small_model.h"
#include "common/test_files.h"
#include "tunefarm/service/metrics.h"
#include "tunefarm/tuner/records.h"
#include "tuner/dashboard/dashboard_views.h"

namespace tunefarm::tuner {
namespace {

using Json = nlohmann::json;
using tunefarm::testing::Http;

const char* kTarget = "llvm -mtriple=x86_64-pc-linux-gnu -mcpu=znver4";
// Target-neutral workload keys; a task is a key and its implementation (template), as a job's
// progress names it "template:key".
const char* kConvKey = "conv2d|N1_C16_H14_W14|K32_R3x3_S1x1_P1_1_1_1_D1x1_G1|NCHW|float32";
const char* kDenseKey = "dense|N1_I32|O10|NC|float32";
const char* kConvTask = "conv2d_nchw:conv2d|N1_C16_H14_W14|K32_R3x3_S1x1_P1_1_1_1_D1x1_G1|NCHW|float32";
const char* kDenseTask = "dense:dense|N1_I32|O10|NC|float32";
const char* kDenseAltTask = "dense_pack:dense|N1_I32|O10|NC|float32";  // another implementation of the dense
constexpr double kConvFlops = 2.0 * 32 * 14 * 14 * 16 * 9, kDenseFlops = 2.0 * 32 * 10;

std::string TempDir(const std::string& name) {
  const std::string dir = ::testing::TempDir() + "tunefarm_" + name + "_" + std::to_string(getpid());
  EXPECT_EQ(system(("rm -rf " + dir + " && mkdir -p " + dir).c_str()), 0);
  return dir;
}

Json GetJson(const std::string& address, const std::string& target, int expect_status = 200) {
  const auto r = Http(address, target);
  EXPECT_EQ(r.status, expect_status) << target << ": " << r.body;
  Json j = Json::parse(r.body, nullptr, false);
  EXPECT_FALSE(j.is_discarded()) << target << ": " << r.body;
  return j;
}

// A database as a daemon job would leave it: job 1 tunes the conv (weight 2) and the dense
// (weight 1). The conv's latency is decided by its "tile" knob alone; "unroll" is noise-free and
// irrelevant. Two failures with messages, one outside the job.
class DashboardApi : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = TempDir("dashboard_api");
    path_ = dir_ + "/records.db";
    auto db = RecordsDb::Open(path_, RecordsDb::Mode::kCreate);
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    db_ = std::move(*db);
    auto job = db_->AddJob(R"({"model":"small.onnx","target":"native","total_trials":40})");
    ASSERT_TRUE(job.ok());
    job_ = *job;
    const Json progress = {
        {"trials_done", 11},
        {"trials_budget", 40},
        {"tasks",
         {{{"workload", kConvTask}, {"weight", 2}, {"flops", kConvFlops}},
          {{"workload", kDenseTask}, {"weight", 1}, {"flops", kDenseFlops}},
          {{"workload", kDenseAltTask}, {"weight", 1}, {"flops", kDenseFlops}, {"alternative_of", kDenseTask}}}}};
    ASSERT_TRUE(db_->UpdateJob(job_, JobState::kRunning, progress.dump()).ok());
    const int tiles[] = {1, 2, 4, 8};
    for (int i = 0; i < 8; ++i) {
      const int tile = tiles[i % 4];
      // Configs as the compiler writes them: the index is not a knob.
      Add(kConvKey, "conv2d_nchw", kConvFlops, i,
          Json{{"index", i}, {"knobs", {{"tile", tile}, {"unroll", i / 4}}}}.dump(), "ok", "", 1.0 / tile);
    }
    Add(kConvKey, "conv2d_nchw", kConvFlops, 8, R"({"tile":16,"unroll":0})", "compile_error",
        "llvm: <script>alert(1)</script> register spill", 0);
    Add(kDenseKey, "dense", kDenseFlops, 0, R"({"tile_k":4})", "ok", "", 0.002);
    Add(kDenseKey, "dense", kDenseFlops, 1, R"({"tile_k":8})", "ok", "", 0.0015);
    Add(kDenseKey, "dense", kDenseFlops, 2, R"({"tile_k":16})", "timeout", "timed out after 10 s", 0, /*job=*/0);
    Add(kDenseKey, "dense_pack", kDenseFlops, 0, R"({"tile_k":4})", "ok", "", 0.001);
    DashboardOptions options;
    options.records = {path_};
    options.listen = "127.0.0.1:0";
    auto dashboard = Dashboard::Start(options);
    ASSERT_TRUE(dashboard.ok()) << dashboard.status().ToString();
    dashboard_ = std::move(*dashboard);
    address_ = dashboard_->address();
  }
  void TearDown() override {
    dashboard_.reset();
    db_.reset();
    ASSERT_EQ(system(("rm -rf " + dir_).c_str()), 0);
  }

  int64_t Add(const std::string& key, const std::string& tmpl, double flops, int64_t index, const std::string& config,
              const std::string& status, const std::string& message, double ms, int64_t job = -1) {
    TrialRecord t;
    t.workload_key = key;
    t.template_name = tmpl;
    t.flops = flops;
    t.target = kTarget;
    t.target_keys = "cpu";
    t.config_index = index;
    t.config_json = config;
    t.status = status;
    t.error_message = message;
    if (status == "ok") {
      t.costs_ms = {ms, ms};
      t.mean_ms = ms;
    }
    t.device_key = "x86-test";
    t.build_ms = 40 + index;
    t.job_id = job < 0 ? job_ : job;
    EXPECT_TRUE(db_->AddTrial(&t).ok());
    return t.id;
  }

  int64_t WorkloadId(const std::string& key, const std::string& implementation) {
    auto rows = db_->FindWorkloads(key);
    EXPECT_TRUE(rows.ok());
    for (const WorkloadInfo& w : rows.ok() ? *rows : std::vector<WorkloadInfo>()) {
      if (w.template_name == implementation) return w.id;
    }
    ADD_FAILURE() << "no " << implementation << " " << key;
    return -1;
  }

  std::string dir_, path_, address_;
  std::unique_ptr<RecordsDb> db_;
  std::unique_ptr<Dashboard> dashboard_;
  int64_t job_ = 0;
};

TEST_F(DashboardApi, ModelViewHasMetaScheduleTaskTableFigures) {
  const Json m = GetJson(address_, "/api/model?job=" + std::to_string(job_));
  ASSERT_EQ(m["tasks"].size(), 3u) << m.dump();
  const Json& conv = m["tasks"][0];
  EXPECT_EQ(conv["workload"], kConvKey);
  // The page shows each task by the name the API gives it (it never parses a key).
  EXPECT_EQ(conv["name"], "conv2d_nchw conv2d N1_C16_H14_W14 K32_R3x3_S1x1_P1_1_1_1_D1x1_G1");
  EXPECT_EQ(m["tasks"][1]["name"], "dense dense N1_I32 O10");
  EXPECT_EQ(m["tasks"][2]["name"], "dense_pack dense N1_I32 O10");
  EXPECT_EQ(conv["weight"], 2);
  EXPECT_EQ(conv["trials"], 9);  // 8 ok + the compile error
  EXPECT_EQ(conv["ok_trials"], 8);
  const double conv_best_ms = 1.0 / 8;
  EXPECT_NEAR(conv["best_gflops"].get<double>(), kConvFlops / (conv_best_ms * 1e6), 1e-9);
  EXPECT_NEAR(conv["latency_us"].get<double>(), conv_best_ms * 1e3, 1e-9);
  EXPECT_NEAR(conv["weighted_latency_us"].get<double>(), 2 * conv_best_ms * 1e3, 1e-9);
  const Json& dense = m["tasks"][1];
  EXPECT_EQ(dense["trials"], 2);  // the timeout is outside the job
  EXPECT_NEAR(dense["latency_us"].get<double>(), 1.5, 1e-9);
  // The dense's nodes run as the faster of its two implementations, counted once.
  EXPECT_EQ(m["tasks"][2]["alternative_of"], 1);
  EXPECT_TRUE(m["tasks"][1]["alternative_of"].is_null());
  EXPECT_NEAR(m["total_latency_ms"].get<double>(), 2 * conv_best_ms + 0.001, 1e-12);
  // The latency history ends at the total and never rises.
  const Json& history = m["latency_history"];
  ASSERT_FALSE(history.empty());
  EXPECT_NEAR(history.back()[1].get<double>(), 2 * conv_best_ms + 0.001, 1e-12);
  for (size_t i = 1; i < history.size(); ++i) EXPECT_LT(history[i][1].get<double>(), history[i - 1][1].get<double>());

  // Trials outside jobs are their own model (job 0), each task weighted 1.
  const Json outside = GetJson(address_, "/api/model?job=0");
  ASSERT_EQ(outside["tasks"].size(), 1u);
  EXPECT_EQ(outside["tasks"][0]["trials"], 1);
  EXPECT_TRUE(outside["total_latency_ms"].is_null());  // its one trial failed
  const Json models = GetJson(address_, "/api/models");
  ASSERT_EQ(models["models"].size(), 2u);
  EXPECT_EQ(models["models"][0]["model"], "small.onnx");
  EXPECT_EQ(models["models"][0]["trials_budget"], 40);
}

TEST_F(DashboardApi, TrialStreamAnswersOnlyWhatIsNew) {
  const Json all = GetJson(address_, "/api/trials?after=0");
  EXPECT_EQ(all["count"], 13);
  EXPECT_FALSE(all["more"]);
  const int64_t last = all["last_id"];
  EXPECT_EQ(all["trials"]["status"][8], "compile_error");
  EXPECT_TRUE(all["trials"]["mean_ms"][8].is_null());
  EXPECT_EQ(all["trials"]["threads"][0], 1);  // the count each trial was measured on

  const Json none = GetJson(address_, "/api/trials?after=" + std::to_string(last));
  EXPECT_EQ(none["count"], 0);
  EXPECT_EQ(none["last_id"], last);

  const int64_t a = Add(kDenseKey, "dense", kDenseFlops, 3, R"({"tile_k":2})", "ok", "", 0.003);
  const int64_t b = Add(kConvKey, "conv2d_nchw", kConvFlops, 9, R"({"tile":8,"unroll":2})", "ok", "", 0.2);
  const Json fresh = GetJson(address_, "/api/trials?after=" + std::to_string(last));
  ASSERT_EQ(fresh["count"], 2);
  EXPECT_EQ(fresh["trials"]["id"][0], a);
  EXPECT_EQ(fresh["trials"]["id"][1], b);
  EXPECT_EQ(fresh["last_id"], b);
  // Each trial's GFLOP/s comes with it (the page shows it as sent); 0 for a failed trial.
  EXPECT_NEAR(fresh["trials"]["gflops"][0].get<double>(), kDenseFlops / (0.003 * 1e6), 1e-9);
  EXPECT_NEAR(fresh["trials"]["gflops"][1].get<double>(), kConvFlops / (0.2 * 1e6), 1e-9);
  EXPECT_EQ(all["trials"]["gflops"][8].get<double>(), 0.0);

  // One task's stream: only its trials, and a position past the others.
  const int64_t conv = WorkloadId(kConvKey, "conv2d_nchw");
  const Json conv_new =
      GetJson(address_, "/api/trials?task=" + std::to_string(conv) + "&after=" + std::to_string(last));
  ASSERT_EQ(conv_new["count"], 1);
  EXPECT_EQ(conv_new["trials"]["id"][0], b);
  // Paging: limit cuts, `more` says so, and the next page starts where it stopped.
  const Json page1 = GetJson(address_, "/api/trials?after=0&limit=5");
  EXPECT_EQ(page1["count"], 5);
  EXPECT_TRUE(page1["more"]);
  const Json page2 =
      GetJson(address_, "/api/trials?after=" + std::to_string(page1["last_id"].get<int64_t>()) + "&limit=100");
  EXPECT_EQ(page2["count"], 10);
  EXPECT_FALSE(page2["more"]);
  EXPECT_EQ(GetJson(address_, "/api/last")["last_id"], b);
}

// A public port (issue 46, P6): what one answer reads is bounded by bytes, not by the database. 40
// trials with 1 MB configs: the trial stream pages them under its byte budget (`more`, then the
// rest), the Task view analyses a sample and says so, and the cheap /api/last answers at once
// while many expensive requests run (those beyond a few are told to come back: 503, Retry-After).
TEST_F(DashboardApi, AnswersAreBoundedByBytesAndCheapOnesStayAnswerable) {
  const std::string big_config = Json{{"tile", 4}, {"pad", std::string(1 << 20, 'x')}}.dump();
  const Json before = GetJson(address_, "/api/last");
  for (int i = 0; i < 40; ++i) Add(kConvKey, "conv2d_nchw", kConvFlops, 100 + i, big_config, "ok", "", 0.5);
  int64_t after = before["last_id"];
  int pages = 0, seen = 0;
  for (bool more = true; more; ++pages) {
    const auto r = Http(address_, "/api/trials?after=" + std::to_string(after));
    ASSERT_EQ(r.status, 200);
    EXPECT_LT(r.body.size(), size_t(12) << 20) << "a page past its byte budget";
    const Json page = Json::parse(r.body);
    seen += page["count"].get<int>();
    after = page["last_id"];
    more = page["more"];
    ASSERT_LT(pages, 40);
  }
  EXPECT_EQ(seen, 40);
  EXPECT_GE(pages, 4);
  const int64_t conv = WorkloadId(kConvKey, "conv2d_nchw");
  const Json task = GetJson(address_, "/api/task?id=" + std::to_string(conv));
  EXPECT_TRUE(task["sampled"]);

  std::atomic<int> ok{0}, busy{0}, other{0};
  std::mutex mu;
  std::string unexpected;
  std::vector<std::thread> load;
  for (int i = 0; i < 12; ++i) {
    load.emplace_back([&] {
      const auto r = Http(address_, "/api/task?id=" + std::to_string(conv));
      if (r.status == 200) {
        ++ok;
      } else if (r.status == 503 && r.body.find("ask again in a second") != std::string::npos) {
        ++busy;
      } else {
        ++other;
        std::lock_guard<std::mutex> lock(mu);
        unexpected = std::to_string(r.status) + ": " + r.body.substr(0, 200);
      }
    });
  }
  const auto start = std::chrono::steady_clock::now();
  const auto last = Http(address_, "/api/last");
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  for (auto& t : load) t.join();
  EXPECT_EQ(last.status, 200);
  EXPECT_LT(seconds, 5.0) << "/api/last waited behind the expensive answers";
  EXPECT_EQ(other.load(), 0) << unexpected;
  EXPECT_EQ(ok + busy, 12);
  EXPECT_GE(ok.load(), 1);
}

TEST_F(DashboardApi, TaskViewRanksTheDecidingKnobAndGroupsErrors) {
  const int64_t conv = WorkloadId(kConvKey, "conv2d_nchw");
  const Json t = GetJson(address_, "/api/task?id=" + std::to_string(conv));
  EXPECT_EQ(t["task"]["workload"], kConvKey);
  ASSERT_EQ(t["knobs"].size(), 2u) << t.dump();
  EXPECT_EQ(t["knobs"][0]["knob"], "tile");
  EXPECT_NEAR(t["knobs"][0]["importance"].get<double>(), 1.0, 1e-9);
  EXPECT_EQ(t["knobs"][1]["knob"], "unroll");
  EXPECT_NEAR(t["knobs"][1]["importance"].get<double>(), 0.0, 1e-9);
  ASSERT_EQ(t["errors"].size(), 1u);
  EXPECT_EQ(t["errors"][0]["status"], "compile_error");
  EXPECT_EQ(t["errors"][0]["message"],
            "llvm: <script>alert(1)</script> register spill");  // as text; the page never parses it
  ASSERT_EQ(t["fastest"].size(), 8u);
  EXPECT_NEAR(t["fastest"][0]["mean_ms"].get<double>(), 1.0 / 8, 1e-12);
  EXPECT_LE(t["fastest"][0]["mean_ms"].get<double>(), t["fastest"][1]["mean_ms"].get<double>());
  ASSERT_EQ(t["targets"].size(), 1u);
  EXPECT_EQ(t["targets"][0]["trials"], 9);
  // The task's name and its best over every target, which the page's cards show as sent.
  EXPECT_EQ(t["task"]["name"], "conv2d_nchw conv2d N1_C16_H14_W14 K32_R3x3_S1x1_P1_1_1_1_D1x1_G1");
  EXPECT_NEAR(t["task"]["best_ms"].get<double>(), 1.0 / 8, 1e-12);
  EXPECT_NEAR(t["task"]["best_gflops"].get<double>(), kConvFlops / (1.0 / 8 * 1e6), 1e-9);
  EXPECT_EQ(t["task"]["best_gflops"], t["targets"][0]["best_gflops"]);

  const Json overview = GetJson(address_, "/api/overview");
  EXPECT_EQ(overview["trials"], 13);
  ASSERT_EQ(overview["recent_errors"].size(), 2u);
  EXPECT_EQ(overview["recent_errors"][0]["status"], "timeout");  // newest first
  EXPECT_EQ(overview["recent_errors"][0]["task_name"], "dense dense N1_I32 O10");
  EXPECT_EQ(overview["recent_errors"][1]["task_name"],
            "conv2d_nchw conv2d N1_C16_H14_W14 K32_R3x3_S1x1_P1_1_1_1_D1x1_G1");
  EXPECT_EQ(overview["jobs"][0]["state"], "running");
  EXPECT_TRUE(overview["farm"].is_null());  // no --tracker

  // The key is target-neutral: the compare view lists every implementation of the workload.
  const Json compare = GetJson(address_, "/api/compare?workload=" + std::string("dense%7CN1_I32%7CO10%7CNC%7Cfloat32"));
  ASSERT_EQ(compare["rows"].size(), 2u);
  EXPECT_EQ(compare["name"], "dense N1_I32 O10");
  EXPECT_EQ(compare["rows"][0]["template"], "dense");
  // The bar's label: implementation, the target's kind and the device (one database: no prefix).
  EXPECT_EQ(compare["rows"][0]["label"], "dense llvm @ x86-test");
  EXPECT_EQ(compare["rows"][1]["label"], "dense_pack llvm @ x86-test");
  EXPECT_EQ(compare["rows"][0]["trials"], 3);
  EXPECT_NEAR(compare["rows"][0]["best_ms"].get<double>(), 0.0015, 1e-12);
  EXPECT_EQ(compare["rows"][1]["template"], "dense_pack");
  EXPECT_EQ(compare["rows"][1]["trials"], 1);
  EXPECT_NEAR(compare["rows"][1]["best_ms"].get<double>(), 0.001, 1e-12);

  // The Compare picker lists workloads by name, one entry per implementation.
  const Json workloads = GetJson(address_, "/api/workloads");
  ASSERT_EQ(workloads["workloads"].size(), 3u) << workloads.dump();
  for (const auto& w : workloads["workloads"]) {
    EXPECT_EQ(w["name"],
              w["key"] == kConvKey ? "conv2d N1_C16_H14_W14 K32_R3x3_S1x1_P1_1_1_1_D1x1_G1" : "dense N1_I32 O10")
        << w.dump();
  }
}

// What the page shows for a key: its operator and shapes, the dtype unless float32; a key of no known
// form is shown whole. (Keys of version-2 databases reach the views in this schema's form: the
// records layer converts them, DashboardOnAnOlderDatabase.)
TEST(DashboardNames, KeysAreShownByOperatorShapesAndDtype) {
  struct Case {
    std::string implementation, key, workload_name, task_name;
  };
  const std::vector<Case> cases = {
      {"conv2d_nchw", kConvKey, "conv2d N1_C16_H14_W14 K32_R3x3_S1x1_P1_1_1_1_D1x1_G1",
       "conv2d_nchw conv2d N1_C16_H14_W14 K32_R3x3_S1x1_P1_1_1_1_D1x1_G1"},
      {"dense", "dense|N1_I32|O10|NC|int8", "dense N1_I32 O10 int8", "dense dense N1_I32 O10 int8"},
      {"batch_matmul", "batch_matmul|B2_M4_K8|N16|BMN|float32", "batch_matmul B2_M4_K8 N16",
       "batch_matmul batch_matmul B2_M4_K8 N16"},
      {"", "custom-op", "custom-op", "custom-op"},
      {"dense", "dense|N1_I32|O10", "dense|N1_I32|O10", "dense dense|N1_I32|O10"},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(dashboard::WorkloadDisplayName(c.key), c.workload_name) << c.key;
    EXPECT_EQ(dashboard::TaskDisplayName(c.implementation, c.key), c.task_name) << c.implementation << " " << c.key;
  }
}

TEST_F(DashboardApi, HostileParametersGetClearClientErrors) {
  const int64_t before = *db_->CountTrials();
  struct Case {
    std::string target, method;
    int status;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"/api/task?id=999", "GET", 404, "no task 999 in " + path_},
      {"/api/task?id=1%3BDROP%20TABLE%20trials", "GET", 400,
       "parameter id must be an integer: got '1;DROP TABLE trials'"},
      {"/api/task?id=1'%20OR%20'1'='1", "GET", 400, "parameter id must be an integer: got '1' OR '1'='1'"},
      {"/api/task", "GET", 400, "parameter id (the task id) is required"},
      {"/api/task?id=0", "GET", 400, "parameter id must be in [1, 9223372036854775807]: got '0'"},
      {"/api/trials?after=99999999999999999999999", "GET", 400, "parameter after must be in [0, 9223372036854775807]"},
      {"/api/trials?after=5000000", "GET", 400, "after=5000000 is past the newest trial (13)"},
      {"/api/trials?after=-1", "GET", 400, "parameter after must be in [0, 9223372036854775807]: got '-1'"},
      {"/api/trials?limit=100000000", "GET", 400, "parameter limit must be in [1, 200000]"},
      {"/api/trials?task=77", "GET", 404, "no task 77"},
      {"/api/trials?after=1&after=2", "GET", 400, "query parameter \"after\" is given twice"},
      {"/api/trials?after=%zz", "GET", 400, "malformed percent escape"},
      {"/api/task?id=1&sql=1", "GET", 400, "unknown parameter sql for /api/task (it takes: db, id)"},
      {"/api/overview?db=3", "GET", 404, "no records database 3: this dashboard has 1"},
      {"/api/compare?workload=x'%3B%20DROP%20TABLE%20trials%3B--", "GET", 404,
       "no workload \"x'; DROP TABLE trials;--\""},
      {"/api/compare", "GET", 400, "parameter workload (a workload key) is required"},
      {"/assets/../../etc/passwd", "GET", 400, "no '..', '//' or escapes"},
      {"/assets/%2e%2e/%2e%2e/etc/passwd", "GET", 400, "no '..', '//' or escapes"},
      {"//etc/passwd", "GET", 400, "no '..', '//' or escapes"},
      {"/assets/secret.js", "GET", 404, "not found: /assets/secret.js"},
      {"/api/nothing", "GET", 404, "not found: /api/nothing"},
      {"/api/overview", "POST", 405, "method not allowed: this path answers GET"},
      {"/api/jobs/cancel?id=1", "GET", 405, "method not allowed: this path answers POST"},
      {"/api/jobs/cancel?id=1", "POST", 403, "this dashboard is read-only"},
  };
  for (const auto& c : cases) {
    const auto r = Http(address_, c.target, c.method);
    EXPECT_EQ(r.status, c.status) << c.method << " " << c.target << ": " << r.body;
    // API errors are {"error": MESSAGE}; the rest plain text.
    const Json j = Json::parse(r.body, nullptr, false);
    const std::string text = j.is_object() && j.contains("error") ? j["error"].get<std::string>() : r.body;
    EXPECT_NE(text.find(c.message), std::string::npos) << c.method << " " << c.target << " answered: " << r.body;
  }
  EXPECT_EQ(*db_->CountTrials(), before) << "nothing stored is lost or added";
  // The page's own files are served, and nothing else from the file system.
  const auto page = Http(address_, "/");
  EXPECT_EQ(page.status, 200);
  EXPECT_NE(page.body.find("/assets/echarts.min.js"), std::string::npos);
  const auto echarts = Http(address_, "/assets/echarts.min.js");
  EXPECT_EQ(echarts.status, 200);
  EXPECT_GT(echarts.body.size(), 500000u) << "ECharts is embedded whole";
  EXPECT_NE(page.headers.find("Content-Security-Policy: default-src 'self'"), std::string::npos) << page.headers;
}

// Every file of the page (tuner/dashboard/web: index.html, the stylesheet, the icon and each ES
// module under js/) is embedded and served byte for byte with its content type, so a module left
// out of tuner/CMakeLists.txt's DASHBOARD_FILES fails here and not only in a browser.
TEST_F(DashboardApi, ServesEveryFileOfThePageFromMemory) {
  namespace fs = std::filesystem;
  const fs::path web = fs::path(TUNEFARM_SOURCE_ROOT) / "tuner/dashboard/web";
  std::vector<fs::path> files = {web / "index.html", web / "style.css", web / "favicon.svg"};
  for (const auto& entry : fs::recursive_directory_iterator(web / "js")) {
    if (entry.is_regular_file()) files.push_back(entry.path());
  }
  ASSERT_GT(files.size(), 10u) << "the page's modules are under " << (web / "js");
  const std::map<std::string, std::string> types = {{".html", "text/html; charset=utf-8"},
                                                    {".js", "text/javascript; charset=utf-8"},
                                                    {".css", "text/css; charset=utf-8"},
                                                    {".svg", "image/svg+xml"}};
  for (const auto& file : files) {
    const std::string rel = fs::relative(file, web).string();
    const std::string url = rel == "index.html" ? "/" : "/assets/" + rel;
    std::ifstream in(file, std::ios::binary);
    std::stringstream content;
    content << in.rdbuf();
    const auto r = Http(address_, url);
    EXPECT_EQ(r.status, 200) << url << " (add " << rel << " to DASHBOARD_FILES in tuner/CMakeLists.txt)";
    EXPECT_EQ(r.body, content.str()) << url << " differs from " << file;
    ASSERT_TRUE(types.count(file.extension().string())) << file;
    EXPECT_NE(r.headers.find("Content-Type: " + types.at(file.extension().string())), std::string::npos)
        << url << ": " << r.headers;
  }
  // The page starts as ES modules; the one script of old is gone.
  EXPECT_NE(Http(address_, "/").body.find("<script type=\"module\" src=\"/assets/js/main.js\">"), std::string::npos);
  EXPECT_EQ(Http(address_, "/assets/app.js").status, 404);
}

TEST_F(DashboardApi, CancellingNeedsTheFarmTokenAndADaemon) {
  DashboardOptions options;
  options.records = {path_};
  options.listen = "127.0.0.1:0";
  options.token = "dashboard-test-token-0123456789";
  auto guarded = Dashboard::Start(options);
  ASSERT_TRUE(guarded.ok());
  const std::string address = (*guarded)->address();
  auto r = Http(address, "/api/jobs/cancel?id=1", "POST");
  EXPECT_EQ(r.status, 401);
  EXPECT_NE(r.body.find("cancelling a job needs the farm token"), std::string::npos) << r.body;
  r = Http(address, "/api/jobs/cancel?id=1", "POST", {"Authorization: Bearer wrong-token"});
  EXPECT_EQ(r.status, 401);
  r = Http(address, "/api/jobs/cancel?id=1", "POST", {"Authorization: Bearer " + options.token});
  EXPECT_EQ(r.status, 409);
  EXPECT_NE(r.body.find("no daemon to cancel jobs through: start it with --daemon HOST:PORT"), std::string::npos)
      << r.body;
  EXPECT_EQ(GetJson(address, "/api/config")["can_cancel"], false);
}

TEST_F(DashboardApi, StartNamesWhatIsWrong) {
  DashboardOptions options;
  options.listen = "127.0.0.1:0";
  auto none = Dashboard::Start(options);
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().message(), "the dashboard needs a records database (--records DB)");
  options.records = {dir_ + "/missing.db"};
  auto missing = Dashboard::Start(options);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find(dir_ + "/missing.db"), std::string::npos) << missing.status().message();
  options.records = {path_};
  options.listen = "localhost:99999";
  auto bad = Dashboard::Start(options);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("--listen"), std::string::npos) << bad.status().message();
}

// The dashboard as a user runs it, under slowloris: 200 connections that never finish their
// request do not keep a well-behaved client out, a DNS-rebinding Host is refused, and SIGTERM
// stops the process within 2 s with the slow connections still open.
TEST_F(DashboardApi, SlowClientsNeitherStarveItNorHoldItPastSigterm) {
  tunefarm::testing::ChildProcess process;
  ASSERT_TRUE(process.Start({TUNEFARM_CLI, "dashboard", "--records", path_, "--listen", "127.0.0.1:0", "--allow-host",
                             "tuning.example.lan"}));
  const std::string line = process.WaitForLine("dashboard on http://", 20000);
  ASSERT_FALSE(line.empty()) << process.Drain(1000);
  std::string address = line.substr(line.find("http://") + 7);
  while (!address.empty() && (address.back() == '/' || address.back() == '\n')) address.pop_back();
  tunefarm::testing::SlowClients slow(address, 200, 1000);
  ASSERT_EQ(slow.opened(), 200);
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  for (int i = 0; i < 3; ++i) {
    const auto start = std::chrono::steady_clock::now();
    const auto r = Http(address, "/api/config");
    EXPECT_EQ(r.status, 200) << r.body;
    EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 1.0);
  }
  const std::string port = address.substr(address.rfind(':'));
  const auto rebound = Http(address, "/api/config", "GET", {"Host: attacker.example" + port});
  EXPECT_EQ(rebound.status, 403);
  EXPECT_NE(rebound.body.find("Host \"attacker.example" + port + "\" is not allowed"), std::string::npos)
      << rebound.body;
  EXPECT_EQ(rebound.body.find(path_), std::string::npos) << "the refusal must not show the database path";
  EXPECT_EQ(Http(address, "/api/config", "GET", {"Host: tuning.example.lan" + port}).status, 200);
  EXPECT_TRUE(slow.Answers().empty());

  const auto start = std::chrono::steady_clock::now();
  process.Kill(SIGTERM);
  const int status = process.Wait();
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 2.0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "status " << status;
}

TEST_F(DashboardApi, RecordsAndRequestMetricsPassPromtool) {
  auto records = RecordsMetrics(path_);
  ASSERT_TRUE(records.ok());
  auto endpoint = service::MetricsEndpoint::Start("127.0.0.1:0", {dashboard_->metrics(), *records});
  ASSERT_TRUE(endpoint.ok());
  GetJson(address_, "/api/overview");
  Http(address_, "/api/task?id=999");
  auto text = Http((*endpoint)->address(), "/metrics").body;
  EXPECT_NE(text.find("tunefarm_trials_total{status=\"ok\"} 11"), std::string::npos) << text;
  EXPECT_NE(text.find("tunefarm_trials_total{status=\"compile_error\"} 1"), std::string::npos) << text;
  EXPECT_NE(text.find("tunefarm_build_duration_seconds_count 13"), std::string::npos) << text;
  EXPECT_NE(text.find("tunefarm_dashboard_requests_total{code=\"4xx\",route=\"/api/task\"} 1"), std::string::npos)
      << text;
  // Incremental: a new trial is counted once at the next scrape.
  Add(kDenseKey, "dense", kDenseFlops, 5, R"({"tile_k":1})", "ok", "", 0.004);
  text = Http((*endpoint)->address(), "/metrics").body;
  EXPECT_NE(text.find("tunefarm_trials_total{status=\"ok\"} 12"), std::string::npos) << text;
  auto [lint, why] = tunefarm::testing::Promtool(text);
  EXPECT_EQ(lint, 0) << why << text;
}

}  // namespace
}  // namespace tunefarm::tuner

namespace tunefarm::tuner {
namespace {

// A records database of schema version 2 (tests/data/records_v2.db, written before workload keys
// became target-neutral) is read as it is: a daemon job of it, whose progress names its tasks by the
// keys of then ("conv2d_nchwc|N1..."), lists each task with its trials.
TEST(DashboardOnAnOlderDatabase, AJobOfAVersionTwoDatabaseListsItsTasksWithTheirTrials) {
  const char* src = std::getenv("TUNEFARM_SOURCE_DIR");
  ASSERT_NE(src, nullptr) << "TUNEFARM_SOURCE_DIR is set by CTest";
  const std::string dir = TempDir("dashboard_v2"), db = dir + "/old.db";
  ASSERT_EQ(system(("cp " + std::string(src) + "/tests/data/records_v2.db " + db).c_str()), 0);
  // One task of the fixture becomes a daemon job's, as a version-2 tuner-daemon wrote it.
  const std::string key = tunefarm::testing::RunCommand("sqlite3 " + db +
                                                        " \"SELECT key FROM workloads WHERE template = "
                                                        "'conv2d_nchwc' ORDER BY id LIMIT 1\"")
                              .output;
  ASSERT_EQ(key.rfind("conv2d_nchwc|", 0), 0u) << key;
  const std::string stored = key.substr(0, key.size() - 1);  // without the newline
  const Json progress = {{"tasks", {{{"workload", stored}, {"weight", 1}, {"flops", 1e6}}}}};
  tunefarm::testing::WriteFile(
      dir + "/job.sql", "INSERT INTO jobs(id, spec, state, progress) VALUES (1, '{}', 'done', '" + progress.dump() +
                            "'); UPDATE trials SET job_id = 1 WHERE workload_id = "
                            "(SELECT id FROM workloads WHERE key = '" +
                            stored + "');");
  ASSERT_EQ(system(("sqlite3 " + db + " < " + dir + "/job.sql").c_str()), 0);
  DashboardOptions options;
  options.records = {db};
  options.listen = "127.0.0.1:0";
  auto dashboard = Dashboard::Start(options);
  ASSERT_TRUE(dashboard.ok()) << dashboard.status().ToString();
  const Json m = GetJson((*dashboard)->address(), "/api/model?job=1");
  ASSERT_EQ(m["tasks"].size(), 1u) << m.dump();
  EXPECT_EQ(m["tasks"][0]["template"], "conv2d_nchwc");
  EXPECT_EQ(m["tasks"][0]["workload"], "conv2d" + stored.substr(std::string("conv2d_nchwc").size()));
  EXPECT_GT(m["tasks"][0]["trials"].get<int>(), 0) << m.dump();
  // The comparison by workload key finds the task by its key in this schema's form.
  const std::string neutral = "conv2d" + stored.substr(std::string("conv2d_nchwc").size());
  auto reader = RecordsDb::Open(db, RecordsDb::Mode::kReadOnly);
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  auto found = (*reader)->FindWorkloads(neutral);
  ASSERT_TRUE(found.ok()) << found.status().ToString();
  ASSERT_FALSE(found->empty()) << neutral;
  for (const WorkloadInfo& w : *found) EXPECT_EQ(w.key, neutral);
  reader->reset();
  dashboard->reset();
  EXPECT_EQ(tunefarm::testing::RunCommand("sqlite3 " + db + " 'PRAGMA user_version'").output, "2\n") << "read as it is";
  ASSERT_EQ(system(("rm -rf " + dir).c_str()), 0);
}

// A `tunefarm tune` run is a model in the dashboard like a daemon job: listed by its model with
// its trials and budget, its tasks in the model view; a run killed before it said how it ended is
// marked failed by the next run on the file (which holds the file's tuning lock, so no other run
// is alive).
TEST(DashboardOfTuneRuns, ATuneRunIsListedByItsModelWithItsTrials) {
  const std::string dir = TempDir("dashboard_tune_run"), db_path = dir + "/records.db", model = dir + "/small.onnx";
  ASSERT_TRUE(tunefarm::testing::WriteSmallCnnOnnx(model));
  {
    // A run killed mid-way leaves its row running.
    auto db = RecordsDb::Open(db_path, RecordsDb::Mode::kCreate);
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    auto killed = (*db)->AddJob(R"({"model":"gone.onnx"})", "tunefarm tune");
    ASSERT_TRUE(killed.ok());
    ASSERT_TRUE((*db)->UpdateJob(*killed, JobState::kRunning, R"({"trials_done":3,"trials_budget":10})").ok());
  }
  const auto tune = tunefarm::testing::RunCommand(std::string(TUNEFARM_CLI) + " tune " + model +
                                                  " --total-trials 12 --seed 2 --records " + db_path + " 2>&1");
  ASSERT_EQ(tune.code, 0) << tune.output;
  DashboardOptions options;
  options.records = {db_path};
  options.listen = "127.0.0.1:0";
  auto dashboard = Dashboard::Start(options);
  ASSERT_TRUE(dashboard.ok()) << dashboard.status().ToString();
  const Json models = GetJson((*dashboard)->address(), "/api/models");
  ASSERT_EQ(models["models"].size(), 2u) << models.dump();  // no "trials outside jobs": every trial is the run's
  const Json& gone = models["models"][0];
  EXPECT_EQ(gone["model"], "gone.onnx");
  EXPECT_EQ(gone["state"], "failed");
  EXPECT_NE(gone["message"].get<std::string>().find("ended without saying how"), std::string::npos) << gone.dump();
  const Json& run = models["models"][1];
  EXPECT_EQ(run["model"], model);
  EXPECT_EQ(run["state"], "done");
  EXPECT_EQ(run["trials_done"], 12);
  EXPECT_EQ(run["trials_budget"], 12);
  EXPECT_EQ(run["tuner"], "xgb");
  EXPECT_EQ(run["runner"], "tunefarm tune");
  EXPECT_FALSE(run["cancellable"]) << "the daemon cannot cancel a tunefarm tune run";
  const Json view = GetJson((*dashboard)->address(), "/api/model?job=" + std::to_string(run["id"].get<int64_t>()));
  int trials = 0;
  for (const auto& t : view["tasks"]) trials += t["trials"].get<int>();
  EXPECT_EQ(trials, 12) << view.dump();
  EXPECT_FALSE(view["total_latency_ms"].is_null()) << view.dump();
  dashboard->reset();
  ASSERT_EQ(system(("rm -rf " + dir).c_str()), 0);
}

}  // namespace
}  // namespace tunefarm::tuner
