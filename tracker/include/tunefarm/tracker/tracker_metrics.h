// The tracker's Prometheus metrics, read from the core's status at each scrape:
//   tunefarm_tracker_servers{key, state="free"|"busy"}   servers registered per device key
//   tunefarm_tracker_queue_length{key}                   lease requests waiting per key
//   tunefarm_tracker_leases_granted_total, tunefarm_tracker_leases_expired_total,
//   tunefarm_tracker_servers_lost_total                   since the tracker started
//   tunefarm_tracker_uptime_seconds
//   tunefarm_tracker_lease_wait_seconds{key}             time lease requests waited (histogram)
// Device keys are a deployment's handful of board kinds: bounded labels.
// Create fails (service::MetricsUnavailable) in a build without Prometheus; RunDaemon refuses
// --metrics there before asking.
#ifndef TUNEFARM_TRACKER_TRACKER_METRICS_H_
#define TUNEFARM_TRACKER_TRACKER_METRICS_H_

#include <cstdint>
#include <memory>
#include <string>

#include "tunefarm/runtime/result.h"
#include "tunefarm/service/daemon.h"
#include "tunefarm/tracker/tracker_core.h"

namespace tunefarm::tracker {

class TrackerMetrics {
 public:
  static Result<std::unique_ptr<TrackerMetrics>> Create();
  ~TrackerMetrics();
  TrackerMetrics(const TrackerMetrics&) = delete;
  TrackerMetrics& operator=(const TrackerMetrics&) = delete;
  // TrackerOptions::on_grant.
  void ObserveLeaseWait(const std::string& key, int64_t wait_ms);
  // What the metrics endpoint serves: the lease wait histogram and the core's status at each scrape.
  service::MetricSources Sources(TrackerCore* core) const;

 private:
  struct Impl;
  explicit TrackerMetrics(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace tunefarm::tracker

#endif  // TUNEFARM_TRACKER_TRACKER_METRICS_H_
