// rpc_tracker --listen HOST:PORT [--token-file PATH] [--heartbeat-ms N] [--metrics HOST:PORT]
//             [--tls-cert PEM --tls-key PEM --tls-ca PEM]
// Serves tunefarm.v1.Tracker and the gRPC health service. The bind address is explicit (no
// default); PORT 0 picks a free port, and the first line printed says which: "rpc_tracker
// listening on HOST:PORT". Servers joining and lost, leases granted and ended are logged to stdout
// with a UTC timestamp. With --metrics, Prometheus metrics are served on GET /metrics there
// ("rpc_tracker metrics on HOST:PORT").
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <ctime>
#include <deque>
#include <mutex>
#include <string>
#include <thread>

#include "tunefarm/farm_net/auth.h"
#include "tunefarm/farm_net/flags.h"
#include "tunefarm/command_line/command_line.h"
#if TUNEFARM_HAVE_METRICS
#include "tunefarm/farm_net/metrics.h"
#endif
#include "tunefarm/farm_net/server.h"
#include "tunefarm/tracker/tracker_service.h"
#if TUNEFARM_HAVE_METRICS
#include "tunefarm/tracker/tracker_metrics.h"
#endif

namespace {

volatile std::sig_atomic_t g_stop = 0;

// The core logs under its lock: lines are queued here (never blocking) and written by a thread,
// so a slow or full stdout (a pipe nobody reads) cannot stall the tracker. Past kMaxQueued lines
// waiting, further ones are counted and reported as dropped.
class AsyncLog {
 public:
  AsyncLog() : writer_([this] { Run(); }) {}
  ~AsyncLog() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stopping_ = true;
    }
    cv_.notify_all();
    writer_.join();
  }
  void Add(const std::string& line) {
    char stamp[32];
    const std::time_t now = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&now, &tm);
    std::strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%SZ", &tm);
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (lines_.size() >= kMaxQueued) {
        ++dropped_;
        return;
      }
      lines_.push_back(std::string(stamp) + " info: " + line);
    }
    cv_.notify_one();
  }

 private:
  static constexpr size_t kMaxQueued = 10000;
  void Run() {
    std::unique_lock<std::mutex> lock(mu_);
    while (true) {
      cv_.wait(lock, [this] { return stopping_ || !lines_.empty(); });
      if (lines_.empty() && stopping_) return;
      std::deque<std::string> batch;
      batch.swap(lines_);
      const int64_t dropped = dropped_;
      dropped_ = 0;
      lock.unlock();
      if (dropped > 0) std::printf("(%lld log lines dropped: the output was not being read)\n", static_cast<long long>(dropped));
      for (const auto& l : batch) std::printf("%s\n", l.c_str());
      std::fflush(stdout);
      lock.lock();
    }
  }
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::string> lines_;
  int64_t dropped_ = 0;
  bool stopping_ = false;
  std::thread writer_;
};

}  // namespace

int main(int argc, char** argv) {
  tunefarm::farm_net::CommonDaemonFlags common;
  int64_t heartbeat_ms = 1000;
  std::string metrics_address;
  CLI::App app{"rpc_tracker: the farm's device registry; rpc_servers register by key, tuners lease them by priority "
               "(token: --token-file or $TUNEFARM_TOKEN; with the --tls-* files, clients need a certificate from the CA)",
               "rpc_tracker"};
  tunefarm::farm_net::AddCommonDaemonFlags(app, &common);
  tunefarm::AddIntFlag(app, "--heartbeat-ms", &heartbeat_ms, 10, 600000,
                       "how often servers heartbeat (default 1000); 3 missed drop a server");
  app.add_option("--metrics", metrics_address, "serve Prometheus metrics on GET /metrics there (off by default; 127.0.0.1:0 picks a port)")
      ->type_name("HOST:PORT");
  if (auto exit_code = tunefarm::ParseCommandLine(app, argc, argv)) return *exit_code;
  auto token = tunefarm::farm_net::LoadToken(common.token_file);
  if (!token.ok()) {
    std::fprintf(stderr, "rpc_tracker: %s\n", token.status().message().c_str());
    return 1;
  }
  auto tls = tunefarm::farm_net::LoadTlsFlags(common.tls_cert, common.tls_key, common.tls_ca);
  if (!tls.ok()) {
    std::fprintf(stderr, "rpc_tracker: %s\n", tls.status().message().c_str());
    return 1;
  }
  tunefarm::tracker::TrackerOptions options;
  options.heartbeat_interval_ms = heartbeat_ms;
  AsyncLog log;
  options.log = [&log](const std::string& line) { log.Add(line); };
#if TUNEFARM_HAVE_METRICS
  std::unique_ptr<tunefarm::tracker::TrackerMetrics> tracker_metrics;
  if (!metrics_address.empty()) {
    tracker_metrics = std::make_unique<tunefarm::tracker::TrackerMetrics>();
    tunefarm::tracker::TrackerMetrics* m = tracker_metrics.get();
    options.on_grant = [m](const std::string& key, int64_t wait_ms) { m->ObserveLeaseWait(key, wait_ms); };
  }
#endif
  tunefarm::tracker::TrackerCore core(options, tunefarm::tracker::SteadyClock());
  tunefarm::tracker::TrackerService service(&core);
  auto started = tunefarm::farm_net::StartFarmServer(
      {"rpc_tracker", common.listen, *tls, *token, tunefarm::farm_net::kTrackerMessageCap}, {{tunefarm::v1::Tracker::service_full_name(), &service}});
  if (!started.ok()) {
    std::fprintf(stderr, "rpc_tracker: %s\n", started.status().message().c_str());
    return 1;
  }
#if TUNEFARM_HAVE_METRICS
  std::unique_ptr<tunefarm::farm_net::MetricsEndpoint> metrics;
  if (!metrics_address.empty()) {
    auto endpoint = tunefarm::farm_net::MetricsEndpoint::Start(metrics_address, tracker_metrics->Sources(&core));
    if (!endpoint.ok()) {
      std::fprintf(stderr, "rpc_tracker: %s\n", endpoint.status().message().c_str());
      started->Shutdown();
      return 1;
    }
    metrics = std::move(*endpoint);
    std::printf("rpc_tracker metrics on %s\n", metrics->address().c_str());
    std::fflush(stdout);
  }
#else
  if (!metrics_address.empty()) {
    std::fprintf(stderr, "rpc_tracker: --metrics: this build has no Prometheus metrics (prometheus-cpp was not found)\n");
    started->Shutdown();
    return 1;
  }
#endif
  std::signal(SIGTERM, [](int) { g_stop = 1; });
  std::signal(SIGINT, [](int) { g_stop = 1; });
  // Time-based transitions (lost servers, expired leases, deadlines) happen even when no call
  // comes; each change wakes the lease streams through the core's subscribers.
  while (!g_stop) {
    core.Tick();
    std::this_thread::sleep_for(std::chrono::milliseconds(std::min<int64_t>(50, heartbeat_ms / 2)));
  }
  started->Shutdown();
  return 0;
}
