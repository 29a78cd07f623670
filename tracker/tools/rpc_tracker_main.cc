// rpc_tracker --listen HOST:PORT [--token-file PATH] [--heartbeat-ms N] [--metrics HOST:PORT]
//             [--tls-cert PEM --tls-key PEM --tls-ca PEM]
// Serves tunefarm.v1.Tracker and the gRPC health service. The bind address is explicit (no
// default); PORT 0 picks a free port, and the first line printed says which: "rpc_tracker
// listening on HOST:PORT". Servers joining and lost, leases granted and ended are logged to stdout
// with a UTC timestamp. With --metrics, Prometheus metrics are served on GET /metrics there
// ("rpc_tracker metrics on HOST:PORT").
#include <algorithm>
#include <cstdio>
#include <ctime>
#include <deque>
#include <string>
#include <thread>

#include "tunefarm/command_line/command_line.h"
#include "tunefarm/runtime/mutex.h"
#include "tunefarm/service/daemon.h"
#include "tunefarm/tracker/tracker_metrics.h"
#include "tunefarm/tracker/tracker_service.h"

namespace {

// The core logs under its lock: lines are queued here (never blocking) and written by a thread,
// so a slow or full stdout (a pipe nobody reads) cannot stall the tracker. Past kMaxQueued lines
// waiting, further ones are counted and reported as dropped.
class AsyncLog {
 public:
  AsyncLog() : writer_([this] { Run(); }) {}
  ~AsyncLog() {
    {
      tunefarm::MutexLock lock(&mu_);
      stopping_ = true;
    }
    cv_.SignalAll();
    writer_.join();
  }
  void Add(const std::string& line) EXCLUDES(mu_) {
    char stamp[32];
    const std::time_t now = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&now, &tm);
    std::strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%SZ", &tm);
    {
      tunefarm::MutexLock lock(&mu_);
      if (lines_.size() >= kMaxQueued) {
        ++dropped_;
        return;
      }
      lines_.push_back(std::string(stamp) + " info: " + line);
    }
    cv_.Signal();
  }

 private:
  static constexpr size_t kMaxQueued = 10000;
  void Run() EXCLUDES(mu_) {
    tunefarm::MutexLock lock(&mu_);
    while (true) {
      while (!stopping_ && lines_.empty()) cv_.Wait(&mu_);
      if (lines_.empty() && stopping_) return;
      std::deque<std::string> batch;
      batch.swap(lines_);
      const int64_t dropped = dropped_;
      dropped_ = 0;
      lock.Unlock();
      if (dropped > 0)
        std::printf("(%lld log lines dropped: the output was not being read)\n", static_cast<long long>(dropped));
      for (const auto& l : batch) std::printf("%s\n", l.c_str());
      std::fflush(stdout);
      lock.Lock();
    }
  }
  tunefarm::Mutex mu_;
  tunefarm::CondVar cv_;
  std::deque<std::string> lines_ GUARDED_BY(mu_);
  int64_t dropped_ GUARDED_BY(mu_) = 0;
  bool stopping_ GUARDED_BY(mu_) = false;
  std::thread writer_;
};

}  // namespace

int main(int argc, char** argv) {
  tunefarm::service::DaemonFlags flags;
  int64_t heartbeat_ms = 1000;
  CLI::App app{
      "rpc_tracker: the farm's device registry; rpc_servers register by key, tuners lease them by priority "
      "(token: --token-file or $TUNEFARM_TOKEN; with the --tls-* files, clients need a certificate from the CA)",
      "rpc_tracker"};
  tunefarm::service::AddDaemonFlags(app, &flags);
  tunefarm::AddIntFlag(app, "--heartbeat-ms", &heartbeat_ms, 10, 600000,
                       "how often servers heartbeat (default 1000); 3 missed drop a server");
  if (auto exit_code = tunefarm::ParseCommandLine(app, argc, argv)) return *exit_code;
  auto secrets = tunefarm::service::LoadDaemonSecrets(flags);
  if (!secrets.ok()) {
    std::fprintf(stderr, "rpc_tracker: %s\n", secrets.status().message().c_str());
    return 1;
  }
  tunefarm::tracker::TrackerOptions options;
  options.heartbeat_interval_ms = heartbeat_ms;
  AsyncLog log;
  options.log = [&log](const std::string& line) { log.Add(line); };
  // The lease wait histogram observes grants from the start, so it exists before the core.
  std::unique_ptr<tunefarm::tracker::TrackerMetrics> metrics;
  if (!flags.metrics.empty() && tunefarm::service::HaveMetrics()) {
    auto created = tunefarm::tracker::TrackerMetrics::Create();
    if (!created.ok()) {
      std::fprintf(stderr, "rpc_tracker: %s\n", created.status().message().c_str());
      return 1;
    }
    metrics = std::move(*created);
    tunefarm::tracker::TrackerMetrics* m = metrics.get();
    options.on_grant = [m](const std::string& key, int64_t wait_ms) { m->ObserveLeaseWait(key, wait_ms); };
  }
  tunefarm::tracker::TrackerCore core(options, tunefarm::tracker::SteadyClock());
  tunefarm::tracker::TrackerService service(&core);

  tunefarm::service::Daemon daemon;
  daemon.name = "rpc_tracker";
  daemon.max_request_bytes = tunefarm::service::kTrackerMessageCap;
  daemon.services = {{tunefarm::v1::Tracker::service_full_name(), &service}};
  daemon.metrics = [&]() -> tunefarm::Result<tunefarm::service::MetricSources> { return metrics->Sources(&core); };
  // Time-based transitions (lost servers, expired leases, deadlines) happen even when no call
  // comes; each change wakes the lease streams through the core's subscribers.
  daemon.tick = [&core, heartbeat_ms] {
    core.Tick();
    return std::min<int64_t>(50, heartbeat_ms / 2);
  };
  return tunefarm::service::RunDaemon(flags, *secrets, daemon);
}
