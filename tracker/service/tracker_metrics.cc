#include "tunefarm/tracker/tracker_metrics.h"

#if TUNEFARM_HAVE_METRICS
#include <prometheus/family.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include "tunefarm/service/metrics.h"
#endif

// The one place the tracker knows whether this build has Prometheus (tunefarm/service/daemon.h).
namespace tunefarm::tracker {
#if TUNEFARM_HAVE_METRICS
struct TrackerMetrics::Impl {
  std::shared_ptr<prometheus::Registry> registry = std::make_shared<prometheus::Registry>();
  prometheus::Family<prometheus::Histogram>* lease_wait = nullptr;
};

TrackerMetrics::TrackerMetrics(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
TrackerMetrics::~TrackerMetrics() = default;

Result<std::unique_ptr<TrackerMetrics>> TrackerMetrics::Create() {
  auto impl = std::make_unique<Impl>();
  impl->lease_wait = &prometheus::BuildHistogram()
                          .Name("tunefarm_tracker_lease_wait_seconds")
                          .Help("Time lease requests waited in the queue before a grant, per device key.")
                          .Register(*impl->registry);
  return std::unique_ptr<TrackerMetrics>(new TrackerMetrics(std::move(impl)));
}

void TrackerMetrics::ObserveLeaseWait(const std::string& key, int64_t wait_ms) {
  static const prometheus::Histogram::BucketBoundaries kBuckets = {0.001, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300};
  impl_->lease_wait->Add({{"key", key}}, kBuckets).Observe(double(wait_ms) / 1000.0);
}

service::MetricSources TrackerMetrics::Sources(TrackerCore* core) const {
  using prometheus::MetricType;
  using service::AddSample;
  using service::Family;
  auto status_metrics = service::CollectWith([core] {
    const FarmStatus status = core->GetStatus();
    auto servers =
        Family("tunefarm_tracker_servers", "Servers registered, per device key and state.", MetricType::Gauge);
    auto queue = Family("tunefarm_tracker_queue_length", "Lease requests waiting, per device key.", MetricType::Gauge);
    for (const KeyInfo& k : status.keys) {
      AddSample(&servers, k.free, {{"key", k.key}, {"state", "free"}});
      AddSample(&servers, k.busy, {{"key", k.key}, {"state", "busy"}});
      AddSample(&queue, k.pending, {{"key", k.key}});
    }
    auto granted = Family("tunefarm_tracker_leases_granted_total", "Leases granted since the tracker started.",
                          MetricType::Counter);
    AddSample(&granted, double(status.leases_granted));
    auto expired = Family("tunefarm_tracker_leases_expired_total",
                          "Leases that expired without being renewed or released.", MetricType::Counter);
    AddSample(&expired, double(status.leases_expired));
    auto lost =
        Family("tunefarm_tracker_servers_lost_total", "Servers dropped after missing heartbeats.", MetricType::Counter);
    AddSample(&lost, double(status.servers_lost));
    auto uptime = Family("tunefarm_tracker_uptime_seconds", "Seconds since the tracker started.", MetricType::Gauge);
    AddSample(&uptime, double(status.uptime_ms) / 1000.0);
    return std::vector<prometheus::MetricFamily>{servers, queue, granted, expired, lost, uptime};
  });
  return {impl_->registry, status_metrics};
}
#else
struct TrackerMetrics::Impl {};
TrackerMetrics::TrackerMetrics(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
TrackerMetrics::~TrackerMetrics() = default;
Result<std::unique_ptr<TrackerMetrics>> TrackerMetrics::Create() { return service::MetricsUnavailable(); }
void TrackerMetrics::ObserveLeaseWait(const std::string&, int64_t) {}
service::MetricSources TrackerMetrics::Sources(TrackerCore*) const { return {}; }
#endif
}  // namespace tunefarm::tracker
