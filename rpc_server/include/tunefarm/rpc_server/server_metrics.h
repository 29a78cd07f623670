// rpc_server's Prometheus metrics (docs/metrics.md), fed by MeasureService's observer:
//   tunefarm_server_measurements_total{key, result}      every measurement, by outcome
//   tunefarm_server_measure_duration_seconds{key}         wall time of one measurement (histogram)
//   tunefarm_server_child_crashes_total{key}              measurement children that crashed or hung
//                                                         (each one is replaced: the server goes on)
//   tunefarm_server_leased{key}                           1 while a lease holds this server
// `key` is the server's device key (one per server: a bounded label).
#ifndef TUNEFARM_RPC_SERVER_SERVER_METRICS_H_
#define TUNEFARM_RPC_SERVER_SERVER_METRICS_H_

#include <functional>
#include <map>
#include <memory>
#include <string>

#include <prometheus/counter.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include "tunefarm/rpc_server/measurement.h"

namespace tunefarm::rpc_server {

class ServerMetrics {
 public:
  // leased(): whether a lease holds the server now (read at each scrape).
  ServerMetrics(const std::string& key, std::function<bool()> leased);
  void Observe(OutcomeKind kind, double seconds);
  // The registry and the lease gauge: what MetricsEndpoint serves.
  std::vector<std::shared_ptr<prometheus::Collectable>> sources() const;

 private:
  std::shared_ptr<prometheus::Registry> registry_ = std::make_shared<prometheus::Registry>();
  std::map<OutcomeKind, prometheus::Counter*> by_result_;
  prometheus::Histogram* duration_ = nullptr;
  prometheus::Counter* crashes_ = nullptr;
  std::shared_ptr<prometheus::Collectable> leased_;
};

}  // namespace tunefarm::rpc_server

#endif  // TUNEFARM_RPC_SERVER_SERVER_METRICS_H_
