// RunDaemon: what every tunefarm daemon (rpc_tracker, rpc_server, tuner-daemon) does around its
// services, in one place: the token and TLS files, the gRPC server, the Prometheus endpoint of
// --metrics, the stop signals and the shutdown order. A daemon's main parses its flags, builds its
// services and hands them here.
//
// Contract:
//  - AddDaemonFlags declares --listen, --token-file, the --tls-* files and --metrics.
//  - LoadDaemonSecrets reads the token ($TUNEFARM_TOKEN or --token-file) and the TLS files; errors
//    name the flag and the file.
//  - RunDaemon installs the SIGTERM/SIGINT handlers before the "listening on" line, starts the
//    services, then the metrics endpoint (only for --metrics: "NAME metrics on HOST:PORT"; a build
//    without Prometheus refuses the flag, naming it), then calls on_started; every error is printed
//    as "NAME: message" and ends the daemon with exit status 1, the server shut down first. Until a
//    signal it calls tick (which says how long to wait before the next call, capped at 100 ms).
//    On a signal: the metrics endpoint stops, then stopping() runs, the server shuts down, and
//    stopped() gives the exit status (0 without it).
//  - Not reentrant: one RunDaemon per process.
#ifndef TUNEFARM_SERVICE_DAEMON_H_
#define TUNEFARM_SERVICE_DAEMON_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "tunefarm/runtime/result.h"
#include "tunefarm/service/auth.h"
#include "tunefarm/service/flags.h"
#include "tunefarm/service/server.h"

namespace prometheus {
class Collectable;
}  // namespace prometheus

namespace tunefarm::service {

// What a metrics endpoint serves: prometheus-cpp collectables (tunefarm/service/metrics.h builds them).
using MetricSources = std::vector<std::shared_ptr<prometheus::Collectable>>;

// Whether this build serves Prometheus metrics (prometheus-cpp was found; board cross builds may
// lack it).
bool HaveMetrics();
// The error of asking such a build for metrics.
Status MetricsUnavailable();

struct DaemonFlags {
  CommonDaemonFlags common;
  std::string metrics;  // HOST:PORT; empty: no endpoint
};
void AddDaemonFlags(CLI::App& app, DaemonFlags* out);

struct DaemonSecrets {
  std::string token;
  TlsFiles tls;
};
Result<DaemonSecrets> LoadDaemonSecrets(const DaemonFlags& flags);

struct Daemon {
  std::string name;  // the program: the "listening on" line and every error's prefix
  int max_request_bytes = kTrackerMessageCap;
  std::vector<FarmService> services;
  // Called only for --metrics, once the services listen: what the endpoint serves.
  std::function<Result<MetricSources>()> metrics;
  // Once the services listen and the metrics are served (the bound address is known).
  std::function<Status(const FarmServer& server)> on_started;
  // Until a stop signal; returns the milliseconds to wait before the next call.
  std::function<int64_t()> tick;
  // After the signal, with the services still up; then the server shuts down.
  std::function<void()> stopping;
  // After the server shut down: the exit status.
  std::function<int()> stopped;
};

int RunDaemon(const DaemonFlags& flags, const DaemonSecrets& secrets, const Daemon& daemon);

// Under a file size limit (ulimit -f) a write past it would end the process by SIGXFSZ, taking a
// daemon's work with it: ignored, the write fails (EFBIG) and the code doing it says so. States the
// limit once on stderr when there is one. RunDaemon calls it; a daemon that writes files before
// RunDaemon (tuner-daemon's records database) calls it first. Idempotent.
void PrepareDaemonProcess(const std::string& name);

}  // namespace tunefarm::service

#endif  // TUNEFARM_SERVICE_DAEMON_H_
