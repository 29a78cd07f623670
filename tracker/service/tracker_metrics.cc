#include "tunefarm/tracker/tracker_metrics.h"

#include "tunefarm/farm_net/metrics.h"

namespace tunefarm::tracker {

std::shared_ptr<prometheus::Collectable> TrackerMetrics(TrackerCore* core) {
  using farm_net::AddSample;
  using farm_net::Family;
  using prometheus::MetricType;
  return farm_net::CollectWith([core] {
    const FarmStatus status = core->GetStatus();
    auto servers = Family("tunefarm_tracker_servers", "Servers registered, per device key and state.", MetricType::Gauge);
    auto queue = Family("tunefarm_tracker_queue_length", "Lease requests waiting, per device key.", MetricType::Gauge);
    for (const KeyInfo& k : status.keys) {
      AddSample(&servers, k.free, {{"key", k.key}, {"state", "free"}});
      AddSample(&servers, k.busy, {{"key", k.key}, {"state", "busy"}});
      AddSample(&queue, k.pending, {{"key", k.key}});
    }
    auto granted = Family("tunefarm_tracker_leases_granted_total", "Leases granted since the tracker started.", MetricType::Counter);
    AddSample(&granted, double(status.leases_granted));
    auto expired = Family("tunefarm_tracker_leases_expired_total",
                          "Leases that expired without being renewed or released.", MetricType::Counter);
    AddSample(&expired, double(status.leases_expired));
    auto lost = Family("tunefarm_tracker_servers_lost_total", "Servers dropped after missing heartbeats.", MetricType::Counter);
    AddSample(&lost, double(status.servers_lost));
    auto uptime = Family("tunefarm_tracker_uptime_seconds", "Seconds since the tracker started.", MetricType::Gauge);
    AddSample(&uptime, double(status.uptime_ms) / 1000.0);
    return std::vector<prometheus::MetricFamily>{servers, queue, granted, expired, lost, uptime};
  });
}

}  // namespace tunefarm::tracker
