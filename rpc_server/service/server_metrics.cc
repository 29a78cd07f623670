#include "tunefarm/rpc_server/server_metrics.h"

#if TUNEFARM_HAVE_METRICS
#include <prometheus/counter.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <map>

#include "tunefarm/service/metrics.h"
#endif

// The one place rpc_server knows whether this build has Prometheus (tunefarm/service/daemon.h).
namespace tunefarm::rpc_server {
#if TUNEFARM_HAVE_METRICS
struct ServerMetrics::Impl {
  std::shared_ptr<prometheus::Registry> registry = std::make_shared<prometheus::Registry>();
  std::map<OutcomeKind, prometheus::Counter*> by_result;
  prometheus::Histogram* duration = nullptr;
  prometheus::Counter* crashes = nullptr;
  std::shared_ptr<prometheus::Collectable> leased;
};

Result<std::unique_ptr<ServerMetrics>> ServerMetrics::Create(const std::string& key,
                                                             const std::function<bool()>& leased) {
  auto impl = std::make_unique<Impl>();
  auto& measurements = prometheus::BuildCounter()
                           .Name("tunefarm_server_measurements_total")
                           .Help("Measurements made, by outcome.")
                           .Register(*impl->registry);
  // Every outcome from the start (at 0), so rates and ratios exist before the first failure.
  for (OutcomeKind k : kAllTrialStatuses) {
    impl->by_result[k] = &measurements.Add({{"key", key}, {"result", TrialStatusName(k)}});
  }
  impl->duration = &prometheus::BuildHistogram()
                        .Name("tunefarm_server_measure_duration_seconds")
                        .Help("Wall time of one measurement: child start, load, warm-up, timed runs.")
                        .Register(*impl->registry)
                        .Add({{"key", key}}, prometheus::Histogram::BucketBoundaries{0.005, 0.01, 0.025, 0.05, 0.1,
                                                                                     0.25, 0.5, 1, 2.5, 5, 10, 30, 60});
  impl->crashes = &prometheus::BuildCounter()
                       .Name("tunefarm_server_child_crashes_total")
                       .Help("Measurement children that crashed or hung and were replaced.")
                       .Register(*impl->registry)
                       .Add({{"key", key}});
  impl->leased = service::CollectWith([key, leased] {
    auto f =
        service::Family("tunefarm_server_leased", "1 while a lease holds this server.", prometheus::MetricType::Gauge);
    service::AddSample(&f, leased() ? 1 : 0, {{"key", key}});
    return std::vector<prometheus::MetricFamily>{f};
  });
  return std::unique_ptr<ServerMetrics>(new ServerMetrics(std::move(impl)));
}

void ServerMetrics::Observe(OutcomeKind kind, double seconds) {
  impl_->by_result.at(kind)->Increment();
  impl_->duration->Observe(seconds);
  if (kind == OutcomeKind::kRuntimeCrash || kind == OutcomeKind::kTimeout) impl_->crashes->Increment();
}

service::MetricSources ServerMetrics::sources() const { return {impl_->registry, impl_->leased}; }
#else
struct ServerMetrics::Impl {};
Result<std::unique_ptr<ServerMetrics>> ServerMetrics::Create(const std::string&, const std::function<bool()>&) {
  return service::MetricsUnavailable();
}
void ServerMetrics::Observe(OutcomeKind, double) {}
service::MetricSources ServerMetrics::sources() const { return {}; }
#endif

ServerMetrics::ServerMetrics(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ServerMetrics::~ServerMetrics() = default;

}  // namespace tunefarm::rpc_server
