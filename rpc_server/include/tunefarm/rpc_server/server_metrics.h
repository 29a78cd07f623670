// rpc_server's Prometheus metrics (docs/metrics.md), fed by MeasureService's observer:
//   tunefarm_server_measurements_total{key, result}      every measurement, by outcome
//   tunefarm_server_measure_duration_seconds{key}         wall time of one measurement (histogram)
//   tunefarm_server_child_crashes_total{key}              measurement children that crashed or hung
//                                                         (each one is replaced: the server goes on)
//   tunefarm_server_leased{key}                           1 while a lease holds this server
// `key` is the server's device key (one per server: a bounded label).
// Create fails (service::MetricsUnavailable) in a build without Prometheus; RunDaemon refuses
// --metrics there before asking.
#ifndef TUNEFARM_RPC_SERVER_SERVER_METRICS_H_
#define TUNEFARM_RPC_SERVER_SERVER_METRICS_H_

#include <functional>
#include <memory>
#include <string>

#include "tunefarm/rpc_server/measurement.h"
#include "tunefarm/runtime/result.h"
#include "tunefarm/service/daemon.h"

namespace tunefarm::rpc_server {

class ServerMetrics {
 public:
  // leased(): whether a lease holds the server now (read at each scrape).
  static Result<std::unique_ptr<ServerMetrics>> Create(const std::string& key, const std::function<bool()>& leased);
  ~ServerMetrics();
  ServerMetrics(const ServerMetrics&) = delete;
  ServerMetrics& operator=(const ServerMetrics&) = delete;
  void Observe(OutcomeKind kind, double seconds);
  // The registry and the lease gauge: what the metrics endpoint serves.
  service::MetricSources sources() const;

 private:
  struct Impl;
  explicit ServerMetrics(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace tunefarm::rpc_server

#endif  // TUNEFARM_RPC_SERVER_SERVER_METRICS_H_
