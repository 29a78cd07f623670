// Prometheus metrics of the farm's services: each service fills a prometheus-cpp registry (or adds
// a collectable that reads its state at scrape time), and MetricsEndpoint serves it, with the
// standard process_* metrics, as GET /metrics in the text exposition format (version 0.0.4) over
// HttpServer (Boost.Beast). Off by default: a daemon starts an endpoint only for `--metrics HOST:PORT`.
//
// Contract:
//  - Start binds host:port (port 0: a free one; address() says which); the destructor stops it.
//    A bind failure is an InvalidArgument naming --metrics and the address.
//  - GET /metrics: 200, `text/plain; version=0.0.4; charset=utf-8`. Any other path: 404; any
//    other method: 405. Connection limits and timeouts are HttpServer's (http_server.h).
//  - ProcessMetrics(): process_cpu_seconds_total, process_resident_memory_bytes,
//    process_virtual_memory_bytes, process_open_fds, process_max_fds, process_start_time_seconds,
//    read from /proc/self at scrape time (Prometheus's client conventions; prometheus-cpp has none).
#ifndef TUNEFARM_SERVICE_METRICS_H_
#define TUNEFARM_SERVICE_METRICS_H_

#include <prometheus/collectable.h>
#include <prometheus/metric_family.h>
#include <prometheus/registry.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "tunefarm/runtime/result.h"

namespace tunefarm::service {

class MetricsEndpoint {
 public:
  static Result<std::unique_ptr<MetricsEndpoint>> Start(const std::string& host_port,
                                                        std::vector<std::shared_ptr<prometheus::Collectable>> sources);
  ~MetricsEndpoint();
  MetricsEndpoint(const MetricsEndpoint&) = delete;
  MetricsEndpoint& operator=(const MetricsEndpoint&) = delete;
  std::string address() const;  // "127.0.0.1:43121"

  struct Impl;

 private:
  explicit MetricsEndpoint(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

std::shared_ptr<prometheus::Collectable> ProcessMetrics();

// A collectable whose families a function builds at each scrape (a service's state as gauges).
std::shared_ptr<prometheus::Collectable> CollectWith(std::function<std::vector<prometheus::MetricFamily>()> collect);

// Building blocks for such functions: one family of a type, and one sample with labels.
prometheus::MetricFamily Family(const std::string& name, const std::string& help, prometheus::MetricType type);
void AddSample(prometheus::MetricFamily* family, double value,
               const std::vector<std::pair<std::string, std::string>>& labels = {});

}  // namespace tunefarm::service

#endif  // TUNEFARM_SERVICE_METRICS_H_
