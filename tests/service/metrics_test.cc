// Prometheus /metrics on the farm's daemons: rpc_tracker with --metrics as a real process next to a
// registered rpc_server, scraped over HTTP; promtool (Debian's prometheus package) lints the text;
// the endpoint answers other paths and methods with 404/405 and refuses a bad --metrics address.
#include "tunefarm/service/metrics.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/asio/ip/tcp.hpp>
#include <cstdio>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <thread>

#include "common/http_client.h"
#include "common/process.h"
#include "tunefarm/rpc_server/measure_client.h"

namespace tunefarm::service {
namespace {

using tunefarm::testing::ChildProcess;

const char* kToken = "metrics-test-token-0123456789";
std::vector<std::string> Env() { return {std::string("TUNEFARM_TOKEN=") + kToken}; }

// Status and body of one request (tests/common/http_client.h).
std::pair<int, std::string> Http(const std::string& address, const std::string& target,
                                 const std::string& method = "GET") {
  const auto r = tunefarm::testing::Http(address, target, method);
  return {r.status, r.body};
}
using tunefarm::testing::Promtool;

TEST(Metrics, EveryDaemonServesPrometheusMetricsThatPromtoolAccepts) {
  const std::string dir = ::testing::TempDir() + "tunefarm_metrics_" + std::to_string(getpid());
  ASSERT_EQ(system(("rm -rf " + dir + " && mkdir -p " + dir).c_str()), 0);
  ChildProcess tracker, server;
  ASSERT_TRUE(tracker.Start(
      {RPC_TRACKER, "--listen", "127.0.0.1:0", "--heartbeat-ms", "200", "--metrics", "127.0.0.1:0"}, Env()));
  const std::string tracker_address = tunefarm::testing::AddressFromLine(tracker.WaitForLine("listening on", 10000));
  const std::string metrics = tunefarm::testing::AddressFromLine(tracker.WaitForLine("metrics on", 10000));
  ASSERT_FALSE(metrics.empty());
  ASSERT_TRUE(server.Start({RPC_SERVER, "--tracker", tracker_address, "--key", "x86-test", "--listen", "127.0.0.1:0",
                            "--tmp", dir, "--child", MEASURE_CHILD, "--metrics", "127.0.0.1:0"},
                           Env()));
  const std::string server_metrics = tunefarm::testing::AddressFromLine(server.WaitForLine("metrics on", 10000));
  ASSERT_FALSE(server.WaitForLine("registered with", 10000).empty());
  {
    auto [code, text] = Http(server_metrics, "/metrics");
    ASSERT_EQ(code, 200) << text;
    for (const char* result :
         {"ok", "instantiation_error", "compile_error", "runtime_error", "timeout", "wrong_answer"}) {
      EXPECT_NE(
          text.find(std::string("tunefarm_server_measurements_total{key=\"x86-test\",result=\"") + result + "\"} 0"),
          std::string::npos)
          << result << "\n"
          << text;
    }
    EXPECT_NE(text.find("# TYPE tunefarm_server_measure_duration_seconds histogram"), std::string::npos) << text;
    EXPECT_NE(text.find("tunefarm_server_leased{key=\"x86-test\"} 0"), std::string::npos) << text;
    auto [lint, why] = Promtool(text);
    EXPECT_EQ(lint, 0) << "promtool check metrics on rpc_server's /metrics: " << why;
  }

  auto [status, body] = Http(metrics, "/metrics");
  ASSERT_EQ(status, 200) << body;
  EXPECT_NE(body.find("tunefarm_tracker_servers{key=\"x86-test\",state=\"free\"} 1"), std::string::npos) << body;
  EXPECT_NE(body.find("tunefarm_tracker_queue_length{key=\"x86-test\"} 0"), std::string::npos) << body;
  EXPECT_NE(body.find("# TYPE tunefarm_tracker_leases_granted_total counter"), std::string::npos) << body;
  for (const char* process :
       {"process_cpu_seconds_total", "process_resident_memory_bytes", "process_virtual_memory_bytes",
        "process_open_fds", "process_max_fds", "process_start_time_seconds"}) {
    EXPECT_NE(body.find(std::string("\n") + process + " "), std::string::npos) << process;
  }
  auto [lint, why] = Promtool(body);
  EXPECT_EQ(lint, 0) << "promtool check metrics (Debian's prometheus package; scripts/setup.sh installs it): " << why;

  ChildProcess daemon;
  ASSERT_TRUE(daemon.Start(
      {TUNER_DAEMON, "--listen", "127.0.0.1:0", "--records", dir + "/records.db", "--metrics", "127.0.0.1:0"}, Env()));
  const std::string daemon_metrics = tunefarm::testing::AddressFromLine(daemon.WaitForLine("metrics on", 10000));
  {
    auto [code, text] = Http(daemon_metrics, "/metrics");
    ASSERT_EQ(code, 200) << text;
    EXPECT_NE(text.find("tunefarm_daemon_jobs{state=\"running\"} 0"), std::string::npos) << text;
    EXPECT_NE(text.find("tunefarm_daemon_trials_total 0"), std::string::npos) << text;
    auto [lint, why] = Promtool(text);
    EXPECT_EQ(lint, 0) << "promtool check metrics on tuner-daemon's /metrics: " << why;
  }

  EXPECT_EQ(Http(metrics, "/../etc/passwd").first, 404);
  EXPECT_EQ(Http(metrics, "/metrics", "POST").first, 405);
  ASSERT_EQ(system(("rm -rf " + dir).c_str()), 0);
}

// A free loopback port (bound and released: the next bind takes it unless a race intervenes).
int FreePort() {
  using tcp = boost::asio::ip::tcp;
  boost::asio::io_context io;
  tcp::acceptor a(io, tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), 0));
  return a.local_endpoint().port();
}

// A real Prometheus server (Debian's prometheus) scraping the three daemons on loopback every
// second: every target is up, and the measurement counter of the server that measured a kernel
// reaches Prometheus.
TEST(Metrics, ARealPrometheusServerScrapesEveryDaemon) {
  const char* kPrometheus = "/usr/bin/prometheus";
  ASSERT_EQ(access(kPrometheus, X_OK), 0)
      << kPrometheus << " is missing (apt install prometheus; scripts/setup.sh does)";
  const std::string dir = ::testing::TempDir() + "tunefarm_prometheus_" + std::to_string(getpid());
  ASSERT_EQ(system(("rm -rf " + dir + " && mkdir -p " + dir + "/tsdb").c_str()), 0);
  ChildProcess tracker, server, daemon, prometheus;
  ASSERT_TRUE(tracker.Start(
      {RPC_TRACKER, "--listen", "127.0.0.1:0", "--heartbeat-ms", "200", "--metrics", "127.0.0.1:0"}, Env()));
  const std::string tracker_address = tunefarm::testing::AddressFromLine(tracker.WaitForLine("listening on", 10000));
  const std::string tracker_metrics = tunefarm::testing::AddressFromLine(tracker.WaitForLine("metrics on", 10000));
  ASSERT_TRUE(server.Start({RPC_SERVER, "--tracker", tracker_address, "--key", "x86-prom", "--listen", "127.0.0.1:0",
                            "--tmp", dir, "--child", MEASURE_CHILD, "--metrics", "127.0.0.1:0"},
                           Env()));
  const std::string server_metrics = tunefarm::testing::AddressFromLine(server.WaitForLine("metrics on", 10000));
  ASSERT_FALSE(server.WaitForLine("registered with", 10000).empty());
  ASSERT_TRUE(daemon.Start(
      {TUNER_DAEMON, "--listen", "127.0.0.1:0", "--records", dir + "/records.db", "--metrics", "127.0.0.1:0"}, Env()));
  const std::string daemon_metrics = tunefarm::testing::AddressFromLine(daemon.WaitForLine("metrics on", 10000));
  ASSERT_FALSE(tracker_metrics.empty() || server_metrics.empty() || daemon_metrics.empty());

  // One measurement through the farm: a library that is not one is a failed trial, and still a
  // measurement the server counts.
  rpc_server::MeasureClientOptions options;
  options.tracker = tracker_address;
  options.key = "x86-prom";
  options.token = kToken;
  rpc_server::MeasureClient client(options);
  rpc_server::MeasureInput in;
  in.library = "not a shared library";
  in.spec.symbol = "k";
  in.spec.args = {rpc_server::ArgSpec{{4}, "float32", "output"}};
  auto outcomes = client.Measure({in}, 30000);
  ASSERT_TRUE(outcomes.ok()) << outcomes.status().ToString();
  ASSERT_EQ(outcomes->size(), 1u);
  EXPECT_NE((*outcomes)[0].kind, rpc_server::OutcomeKind::kOk);
  client.Release();
  {  // the grant was observed: one lease wait in the tracker's histogram
    auto [code, text] = Http(tracker_metrics, "/metrics");
    EXPECT_NE(text.find("tunefarm_tracker_lease_wait_seconds_count{key=\"x86-prom\"} 1"), std::string::npos) << text;
    auto [lint, why] = Promtool(text);
    EXPECT_EQ(lint, 0) << why;
  }

  const int port = FreePort();
  const std::string web = "127.0.0.1:" + std::to_string(port);
  std::ofstream(dir + "/prometheus.yml") << "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\nscrape_configs:\n"
                                         << "  - job_name: tunefarm\n    static_configs:\n      - targets: ['"
                                         << tracker_metrics << "', '" << server_metrics << "', '" << daemon_metrics
                                         << "']\n";
  ASSERT_TRUE(prometheus.Start({kPrometheus, "--config.file=" + dir + "/prometheus.yml",
                                "--storage.tsdb.path=" + dir + "/tsdb", "--web.listen-address=" + web}));
  // Polls a PromQL query until pred accepts its result vector or 30 s pass.
  auto query_until = [&](const std::string& promql, const std::function<bool(const nlohmann::json&)>& pred) {
    nlohmann::json last;
    for (int i = 0; i < 150; ++i) {
      auto [code, body] = Http(web, "/api/v1/query?query=" + promql);
      if (code == 200) {
        last = nlohmann::json::parse(body, nullptr, false);
        if (!last.is_discarded() && last.value("status", "") == "success" && pred(last["data"]["result"])) return last;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    return last;
  };
  auto all_up = query_until("up", [](const nlohmann::json& r) {
    if (r.size() != 3) return false;
    for (const auto& s : r) {
      if (s["value"][1] != "1") return false;
    }
    return true;
  });
  EXPECT_EQ(all_up["data"]["result"].size(), 3u) << all_up.dump();
  auto measured = query_until("sum(tunefarm_server_measurements_total)", [](const nlohmann::json& r) {
    return r.size() == 1 && std::stod(r[0]["value"][1].get<std::string>()) >= 1;
  });
  ASSERT_EQ(measured["data"]["result"].size(), 1u) << measured.dump();
  EXPECT_GE(std::stod(measured["data"]["result"][0]["value"][1].get<std::string>()), 1.0) << measured.dump();
  prometheus.Kill(SIGTERM);
  prometheus.Wait();
  ASSERT_EQ(system(("rm -rf " + dir).c_str()), 0);
}

TEST(Metrics, ABadMetricsAddressIsRefusedByName) {
  auto endpoint = MetricsEndpoint::Start("localhost:0", {});
  ASSERT_FALSE(endpoint.ok());
  EXPECT_NE(endpoint.status().message().find("--metrics localhost:0: the host must be an IP address"),
            std::string::npos)
      << endpoint.status().ToString();
  ChildProcess tracker;
  ASSERT_TRUE(tracker.Start({RPC_TRACKER, "--listen", "127.0.0.1:0", "--metrics", "127.0.0.1:99999"}, Env()));
  const std::string line = tracker.WaitForLine("--metrics", 10000);
  EXPECT_NE(line.find("rpc_tracker: --metrics '127.0.0.1:99999': the port must be a number in 0..65535"),
            std::string::npos)
      << line;
  tracker.Wait();
}

}  // namespace
}  // namespace tunefarm::service
