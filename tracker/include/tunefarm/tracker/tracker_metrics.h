// The tracker's Prometheus metrics, read from the core's status at each scrape:
//   tunefarm_tracker_servers{key, state="free"|"busy"}   servers registered per device key
//   tunefarm_tracker_queue_length{key}                   lease requests waiting per key
//   tunefarm_tracker_leases_granted_total, tunefarm_tracker_leases_expired_total,
//   tunefarm_tracker_servers_lost_total                   since the tracker started
//   tunefarm_tracker_uptime_seconds
//   tunefarm_tracker_lease_wait_seconds{key}             time lease requests waited (histogram)
// Device keys are a deployment's handful of board kinds: bounded labels.
#ifndef TUNEFARM_TRACKER_TRACKER_METRICS_H_
#define TUNEFARM_TRACKER_TRACKER_METRICS_H_

#include <memory>
#include <string>
#include <vector>

#include <prometheus/collectable.h>
#include <prometheus/family.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include "tunefarm/tracker/tracker_core.h"

namespace tunefarm::tracker {

class TrackerMetrics {
 public:
  TrackerMetrics();
  // TrackerOptions::on_grant.
  void ObserveLeaseWait(const std::string& key, int64_t wait_ms);
  // What MetricsEndpoint serves: the lease wait histogram and the core's status at each scrape.
  std::vector<std::shared_ptr<prometheus::Collectable>> Sources(TrackerCore* core) const;

 private:
  std::shared_ptr<prometheus::Registry> registry_;
  prometheus::Family<prometheus::Histogram>* lease_wait_ = nullptr;
};

}  // namespace tunefarm::tracker

#endif  // TUNEFARM_TRACKER_TRACKER_METRICS_H_
