#include "tunefarm/service/daemon.h"

#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <thread>

#include "tunefarm/command_line/command_line.h"
#if TUNEFARM_HAVE_METRICS
#include "tunefarm/service/metrics.h"
#endif

namespace tunefarm::service {
namespace {

std::atomic<bool> g_stop{false};

void RequestStop(int) { g_stop = true; }

// The metrics endpoint of --metrics, or nothing: the one place that knows whether this build has
// Prometheus.
class Endpoint {
 public:
  Status Start(const std::string& address, MetricSources sources) {
#if TUNEFARM_HAVE_METRICS
    TUNEFARM_ASSIGN_OR_RETURN(endpoint_, MetricsEndpoint::Start(address, std::move(sources)));
    address_ = endpoint_->address();
    return Status::OK();
#else
    (void)address;
    (void)sources;
    return MetricsUnavailable();
#endif
  }
  const std::string& address() const { return address_; }
  void Stop() {
#if TUNEFARM_HAVE_METRICS
    endpoint_.reset();
#endif
  }

 private:
#if TUNEFARM_HAVE_METRICS
  std::unique_ptr<MetricsEndpoint> endpoint_;
#endif
  std::string address_;
};

int Fail(const std::string& name, const Status& status, FarmServer* server = nullptr) {
  std::fprintf(stderr, "%s: %s\n", name.c_str(), status.message().c_str());
  if (server) server->Shutdown();
  return 1;
}

}  // namespace

bool HaveMetrics() {
#if TUNEFARM_HAVE_METRICS
  return true;
#else
  return false;
#endif
}

Status MetricsUnavailable() {
  return Status::Unimplemented("--metrics: this build has no Prometheus metrics (prometheus-cpp was not found)");
}

void AddDaemonFlags(CLI::App& app, DaemonFlags* out) {
  AddCommonDaemonFlags(app, &out->common);
  app.add_option("--metrics", out->metrics,
                 "serve Prometheus metrics on GET /metrics there (off by default; 127.0.0.1:0 picks a port)")
      ->type_name("HOST:PORT");
}

Result<DaemonSecrets> LoadDaemonSecrets(const DaemonFlags& flags) {
  DaemonSecrets secrets;
  TUNEFARM_ASSIGN_OR_RETURN(secrets.token, LoadToken(flags.common.token_file));
  TUNEFARM_ASSIGN_OR_RETURN(secrets.tls,
                            LoadTlsFlags(flags.common.tls_cert, flags.common.tls_key, flags.common.tls_ca));
  return secrets;
}

void PrepareDaemonProcess(const std::string& name) {
  static bool prepared = false;
  if (prepared) return;
  prepared = true;
  std::signal(SIGXFSZ, SIG_IGN);
  if (struct rlimit limit{}; getrlimit(RLIMIT_FSIZE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY) {
    std::fprintf(stderr,
                 "%s: warning: this process may write files of at most %llu bytes (ulimit -f): a write past it "
                 "fails, and what it was writing (a records database, a measurement) says so\n",
                 name.c_str(), static_cast<unsigned long long>(limit.rlim_cur));
  }
}

int RunDaemon(const DaemonFlags& flags, const DaemonSecrets& secrets, const Daemon& daemon) {
  PrepareDaemonProcess(daemon.name);
  // Before anything is announced: a SIGTERM right after "listening on" still stops it cleanly.
  std::signal(SIGTERM, RequestStop);
  std::signal(SIGINT, RequestStop);
  auto started = StartFarmServer(
      {daemon.name, flags.common.listen, secrets.tls, secrets.token, daemon.max_request_bytes}, daemon.services);
  if (!started.ok()) return Fail(daemon.name, started.status());
  Endpoint metrics;
  if (!flags.metrics.empty()) {
    if (!HaveMetrics() || !daemon.metrics) return Fail(daemon.name, MetricsUnavailable(), &*started);
    auto sources = daemon.metrics();
    if (!sources.ok()) return Fail(daemon.name, sources.status(), &*started);
    if (Status s = metrics.Start(flags.metrics, std::move(*sources)); !s.ok()) return Fail(daemon.name, s, &*started);
    std::printf("%s metrics on %s\n", daemon.name.c_str(), metrics.address().c_str());
    std::fflush(stdout);
  }
  if (daemon.on_started) {
    if (Status s = daemon.on_started(*started); !s.ok()) {
      metrics.Stop();
      return Fail(daemon.name, s, &*started);
    }
  }
  while (!g_stop) {
    const int64_t wait_ms = daemon.tick ? daemon.tick() : 100;
    std::this_thread::sleep_for(std::chrono::milliseconds(std::clamp<int64_t>(wait_ms, 1, 100)));
  }
  metrics.Stop();  // its sources may read what stopping() tears down
  if (daemon.stopping) daemon.stopping();
  started->Shutdown();
  return daemon.stopped ? daemon.stopped() : 0;
}

}  // namespace tunefarm::service
