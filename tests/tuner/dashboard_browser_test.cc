// The dashboard page end to end: tuner-daemon (with --dashboard) tunes a small model for real, then
// `tunefarm dashboard` serves its database and headless Chromium (Debian's chromium, driven by
// playwright-core; tests/tuner/dashboard_e2e.mjs) checks the task table's figures against the
// records and `tunefarm tasks`, that every chart renders with data, that a failing trial committed
// while the page is open appears within 5 s with its message, and the compare view; promtool lints
// the dashboard's /metrics. With
// TUNEFARM_DASHBOARD_SCREENSHOTS=DIR the script also saves a screenshot of each view there
// (scripts/dashboard_screenshots.sh refreshes docs/images/ that way).
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "common/http_client.h"
#include "common/process.h"
#include "common/small_model.h"
#include "common/test_files.h"
#include "tunefarm/tuner/records.h"

namespace tunefarm::tuner {
namespace {

using Json = nlohmann::json;
using tunefarm::testing::ChildProcess;
using tunefarm::testing::RunCommand;

const char* kToken = "dashboard-browser-test-token-0123";

std::string SourceDir() { return TUNEFARM_SOURCE_ROOT; }

TEST(DashboardBrowser, EveryViewShowsARealTuningRunAndUpdatesLive) {
  const std::string web_dir = SourceDir() + "/tuner/dashboard/web";
  ASSERT_EQ(access("/usr/bin/chromium", X_OK), 0)
      << "/usr/bin/chromium is missing (apt install chromium; scripts/setup.sh does)";
  ASSERT_EQ(access((web_dir + "/node_modules/playwright-core/package.json").c_str(), R_OK), 0)
      << "playwright-core is missing: npm ci --prefix " << web_dir << " (scripts/setup.sh does)";
  ASSERT_EQ(system("node --version > /dev/null"), 0)
      << "node is missing (apt install nodejs npm; scripts/setup.sh does)";

  const std::string dir = ::testing::TempDir() + "tunefarm_dashboard_browser_" + std::to_string(getpid());
  ASSERT_EQ(system(("rm -rf " + dir + " && mkdir -p " + dir).c_str()), 0);
  const std::string model = dir + "/small.onnx", db = dir + "/records.db";
  ASSERT_TRUE(tunefarm::testing::WriteSmallCnnOnnx(model));
  const std::string env = std::string("TUNEFARM_TOKEN=") + kToken + " TMPDIR=" + dir + " ";

  // A real tuning job through the daemon, which also serves the dashboard.
  ChildProcess daemon;
  ASSERT_TRUE(daemon.Start({TUNER_DAEMON, "--listen", "127.0.0.1:0", "--records", db, "--dashboard", "127.0.0.1:0"},
                           {std::string("TUNEFARM_TOKEN=") + kToken, "TMPDIR=" + dir}));
  const std::string daemon_address = tunefarm::testing::AddressFromLine(daemon.WaitForLine("listening on", 20000));
  std::string daemon_dashboard = tunefarm::testing::AddressFromLine(daemon.WaitForLine("dashboard on", 20000));
  if (!daemon_dashboard.empty() && daemon_dashboard.back() == '/') daemon_dashboard.pop_back();
  ASSERT_FALSE(daemon_dashboard.empty());
  auto tune =
      RunCommand(env + TUNEFARM_CLI + " tune " + model + " --daemon " + daemon_address + " --total-trials 24 --seed 7");
  ASSERT_EQ(tune.code, 0) << tune.output;
  std::printf("%s", tune.output.c_str());
  const auto config = tunefarm::testing::Http(daemon_dashboard.substr(daemon_dashboard.find("//") + 2), "/api/config");
  EXPECT_EQ(config.status, 200) << config.body;
  EXPECT_NE(config.body.find("\"can_cancel\":true"), std::string::npos)
      << "the daemon's dashboard cancels with its token: " << config.body;

  // Expected figures: the records read back whole (not the dashboard's SQL aggregates), weights from
  // `tunefarm tasks`.
  auto tasks = RunCommand(std::string(TUNEFARM_CLI) + " tasks " + model + " --json 2>/dev/null");
  ASSERT_EQ(tasks.code, 0) << tasks.output;
  const Json task_list = Json::parse(tasks.output, nullptr, false);
  ASSERT_TRUE(task_list.is_array()) << tasks.output;
  std::map<std::string, int> weight;
  // A task: its template and (target-neutral) workload key, as the page's rows name it.
  for (const auto& t : task_list)
    weight[t["template"].get<std::string>() + ":" + t["workload"].get<std::string>()] = t["count"];
  auto records = RecordsDb::Open(db, RecordsDb::Mode::kMustExist);
  ASSERT_TRUE(records.ok());
  auto trials = (*records)->List();
  ASSERT_TRUE(trials.ok());
  ASSERT_FALSE(trials->empty());
  struct Expected {
    int trials = 0;
    double best_ms = 0, flops = 0;
  };
  std::map<std::string, Expected> expected;
  TrialRecord sample;
  for (const auto& t : *trials) {
    Expected& e = expected[t.template_name + ":" + t.workload_key];
    ++e.trials;
    e.flops = t.flops;
    if (t.status == "ok" && (e.best_ms == 0 || t.mean_ms < e.best_ms)) e.best_ms = t.mean_ms;
    if (t.status == "ok") sample = t;
  }
  Json spec_tasks = Json::array();
  for (const auto& [task, e] : expected) {
    const std::string key = task.substr(task.find(':') + 1), implementation = task.substr(0, task.find(':'));
    auto rows = (*records)->FindWorkloads(key);
    ASSERT_TRUE(rows.ok());
    int64_t task_id = 0;
    for (const auto& w : *rows) task_id = w.template_name == implementation ? w.id : task_id;
    ASSERT_GT(task_id, 0) << task;
    ASSERT_GT(e.best_ms, 0) << task << " has no successful trial";
    spec_tasks.push_back({{"task", task},
                          {"workload", key},
                          {"task_id", task_id},
                          {"trials", e.trials},
                          {"best_ms", e.best_ms},
                          {"best_gflops", e.flops / (e.best_ms * 1e6)},
                          {"weight", weight.count(task) ? weight[task] : -1}});
  }
  // The failing trial to commit while the page is open: same workload and target as a real one.
  const std::string message = "injected failure 42: illegal instruction at the kernel's entry";
  const std::string inject_file = dir + "/inject.jsonl";
  {
    TrialRecord failing = sample;
    failing.uid.clear();
    failing.status = "runtime_error";
    failing.error_message = message;
    failing.costs_ms.clear();
    failing.mean_ms = 0;
    for (size_t i = 0; i < spec_tasks.size(); ++i) {
      if (spec_tasks[i]["task"] == sample.template_name + ":" + sample.workload_key)
        std::swap(spec_tasks[0], spec_tasks[i]);
    }
    std::ofstream(inject_file) << failing.ToJson() << "\n";
  }

  // The standalone dashboard over the same file, as a user starts it.
  ChildProcess dashboard;
  ASSERT_TRUE(dashboard.Start(
      {TUNEFARM_CLI, "dashboard", "--records", db, "--listen", "127.0.0.1:0", "--metrics", "127.0.0.1:0"}));
  std::string url = dashboard.WaitForLine("dashboard on http://", 20000);
  ASSERT_FALSE(url.empty()) << dashboard.Drain(1000);
  const std::string metrics = tunefarm::testing::AddressFromLine(dashboard.WaitForLine("metrics on", 20000));
  const auto scrape = tunefarm::testing::Http(metrics, "/metrics");
  ASSERT_EQ(scrape.status, 200);
  EXPECT_NE(scrape.body.find("tunefarm_trials_total{status=\"ok\"}"), std::string::npos) << scrape.body;
  auto [lint, why] = tunefarm::testing::Promtool(scrape.body);
  EXPECT_EQ(lint, 0) << "promtool check metrics on the dashboard's /metrics: " << why;
  url = url.substr(url.find("http://"));
  while (!url.empty() && (url.back() == '/' || url.back() == '\n' || url.back() == '\r')) url.pop_back();

  const char* shots = std::getenv("TUNEFARM_DASHBOARD_SCREENSHOTS");
  const Json spec = {
      {"url", url},
      {"web_dir", web_dir},
      {"expected", {{"job", 1}, {"tasks", spec_tasks}}},
      {"inject", {{"argv", {TUNEFARM_CLI, "records", "import", inject_file, "--records", db}}, {"message", message}}},
      {"screenshots", shots ? shots : ""}};
  const std::string spec_file = dir + "/spec.json";
  std::ofstream(spec_file) << spec.dump(1);
  auto e2e = RunCommand("node " + SourceDir() + "/tests/tuner/dashboard_e2e.mjs " + spec_file + " 2>&1");
  std::printf("%s", e2e.output.c_str());
  EXPECT_EQ(e2e.code, 0) << "failed checks:\n" << e2e.output;

  dashboard.Kill(SIGTERM);
  EXPECT_EQ(dashboard.Wait(), 0);
  daemon.Kill(SIGTERM);
  daemon.Wait();
  ASSERT_EQ(system(("rm -rf " + dir).c_str()), 0);
}

}  // namespace
}  // namespace tunefarm::tuner
