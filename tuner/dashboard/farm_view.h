// FarmView: what the dashboard asks the farm's services -- the tracker's FarmStatus for the
// overview (servers per key, free/busy, queues, measurements per second between two calls) and
// the daemon's CancelJob. Both optional; every call has a 3 s deadline, so an unreachable service
// shows as an error in the overview instead of stalling the page. Private to tuner/dashboard/.
#ifndef TUNEFARM_TUNER_DASHBOARD_FARM_VIEW_H_
#define TUNEFARM_TUNER_DASHBOARD_FARM_VIEW_H_

#include <chrono>
#include <memory>
#include <string>

#include "tunefarm/runtime/mutex.h"
#include "tunefarm/service/auth.h"
#include "tunefarm/v1/tracker.grpc.pb.h"
#include "tunefarm/v1/tuner.grpc.pb.h"
#include "tuner/dashboard/dashboard_views.h"

namespace tunefarm::tuner::dashboard {

class FarmView {
 public:
  FarmView(std::string tracker, std::string daemon, std::string token, const service::TlsFiles& tls);
  // null when no tracker was given; otherwise the status, or {"address", "error"}.
  Json Farm() EXCLUDES(mu_);
  bool has_daemon() const { return daemon_stub_ != nullptr; }
  // FailedPrecondition without a daemon; the daemon's own error otherwise.
  Result<Json> CancelJob(int64_t job_id);

 private:
  std::string tracker_, daemon_, token_;
  std::unique_ptr<v1::Tracker::Stub> tracker_stub_;
  std::unique_ptr<v1::TunerDaemon::Stub> daemon_stub_;
  Mutex mu_;  // the previous sample for the measurement rate
  std::chrono::steady_clock::time_point last_sample_time_ GUARDED_BY(mu_);
  int64_t last_sample_total_ GUARDED_BY(mu_) = -1;
  double rate_ GUARDED_BY(mu_) = -1;  // -1: no two samples yet
};

}  // namespace tunefarm::tuner::dashboard

#endif  // TUNEFARM_TUNER_DASHBOARD_FARM_VIEW_H_
