// tuner-daemon's Prometheus metrics (docs/metrics.md), read from the job list at each scrape:
//   tunefarm_daemon_jobs{state}        jobs by state (queued, running, done, failed, cancelled)
//   tunefarm_daemon_trials_total       trials the jobs measured and committed (resumed ones included)
// The tuner is built only where Prometheus is (CMakeLists.txt), so this needs no fallback.
#ifndef TUNEFARM_TUNER_DAEMON_DAEMON_METRICS_H_
#define TUNEFARM_TUNER_DAEMON_DAEMON_METRICS_H_

#include <prometheus/collectable.h>

#include <memory>

#include "tuner/daemon/job_manager.h"

namespace tunefarm::tuner {

// `jobs` must outlive the collectable's scrapes (RunDaemon stops the endpoint first).
std::shared_ptr<prometheus::Collectable> DaemonJobMetrics(JobManager* jobs);

}  // namespace tunefarm::tuner

#endif  // TUNEFARM_TUNER_DAEMON_DAEMON_METRICS_H_
