// The tracker's Prometheus metrics, read from the core's status at each scrape:
//   tunefarm_tracker_servers{key, state="free"|"busy"}   servers registered per device key
//   tunefarm_tracker_queue_length{key}                   lease requests waiting per key
//   tunefarm_tracker_leases_granted_total, tunefarm_tracker_leases_expired_total,
//   tunefarm_tracker_servers_lost_total                   since the tracker started
//   tunefarm_tracker_uptime_seconds
// Device keys are a deployment's handful of board kinds: bounded labels.
#ifndef TUNEFARM_TRACKER_TRACKER_METRICS_H_
#define TUNEFARM_TRACKER_TRACKER_METRICS_H_

#include <memory>

#include <prometheus/collectable.h>

#include "tunefarm/tracker/tracker_core.h"

namespace tunefarm::tracker {

std::shared_ptr<prometheus::Collectable> TrackerMetrics(TrackerCore* core);

}  // namespace tunefarm::tracker

#endif  // TUNEFARM_TRACKER_TRACKER_METRICS_H_
