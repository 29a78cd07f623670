#include "tuner/dashboard/farm_view.h"

#include "tunefarm/service/status_grpc.h"

namespace tunefarm::tuner::dashboard {
namespace {

constexpr auto kDeadline = std::chrono::seconds(3);

}  // namespace

FarmView::FarmView(std::string tracker, std::string daemon, std::string token, const service::TlsFiles& tls)
    : tracker_(std::move(tracker)), daemon_(std::move(daemon)), token_(std::move(token)) {
  if (!tracker_.empty()) tracker_stub_ = v1::Tracker::NewStub(service::FarmChannel(tracker_, tls));
  if (!daemon_.empty()) daemon_stub_ = v1::TunerDaemon::NewStub(service::FarmChannel(daemon_, tls));
}

Json FarmView::Farm() {
  if (!tracker_stub_) return nullptr;
  grpc::ClientContext ctx;
  service::AttachToken(&ctx, token_);
  ctx.set_deadline(std::chrono::system_clock::now() + kDeadline);
  v1::FarmStatusResponse status;
  const grpc::Status s = tracker_stub_->FarmStatus(&ctx, v1::FarmStatusRequest(), &status);
  if (!s.ok()) {
    return Json{{"address", tracker_}, {"error", "tracker " + tracker_ + ": " + service::FromGrpcStatus(s).message()}};
  }
  Json servers = Json::array();
  int64_t total = 0;
  for (const auto& sv : status.servers()) {
    total += sv.measurements_done();
    servers.push_back(Json{{"server_id", sv.server_id()},
                           {"key", sv.key()},
                           {"address", sv.address()},
                           {"state", sv.state() == v1::ServerStatus::BUSY ? "busy" : "free"},
                           {"device", sv.device().gpu_name().empty() ? sv.device().cpu_name() : sv.device().gpu_name()},
                           {"measurements_done", sv.measurements_done()},
                           {"last_heartbeat_ms_ago", sv.last_heartbeat_ms_ago()}});
  }
  Json keys = Json::array();
  for (const auto& k : status.keys()) {
    keys.push_back(Json{{"key", k.key()}, {"free", k.free()}, {"busy", k.busy()}, {"pending", k.pending()}});
  }
  double rate;
  {
    // Measurements per second between this call and the previous one (servers that left take
    // their counts with them: a drop is not a negative rate).
    MutexLock lock(&mu_);
    const auto now = std::chrono::steady_clock::now();
    const double dt = std::chrono::duration<double>(now - last_sample_time_).count();
    if (last_sample_total_ >= 0 && dt >= 0.5) {
      rate_ = total >= last_sample_total_ ? double(total - last_sample_total_) / dt : 0.0;
    }
    if (last_sample_total_ < 0 || dt >= 0.5) {
      last_sample_time_ = now;
      last_sample_total_ = total;
    }
    rate = rate_;
  }
  return Json{{"address", tracker_},
              {"uptime_s", double(status.uptime_ms()) / 1000.0},
              {"servers", servers},
              {"keys", keys},
              {"measurements_total", total},
              {"measurements_per_s", rate < 0 ? Json(nullptr) : Json(rate)},
              {"leases_granted", status.leases_granted()},
              {"leases_expired", status.leases_expired()},
              {"servers_lost", status.servers_lost()}};
}

Result<Json> FarmView::CancelJob(int64_t job_id) {
  if (!daemon_stub_) {
    return Status::FailedPrecondition(
        "this dashboard has no daemon to cancel jobs through: start it with --daemon HOST:PORT");
  }
  grpc::ClientContext ctx;
  service::AttachToken(&ctx, token_);
  ctx.set_deadline(std::chrono::system_clock::now() + kDeadline);
  v1::CancelJobRequest request;
  request.set_job_id(job_id);
  v1::CancelJobResponse response;
  const grpc::Status s = daemon_stub_->CancelJob(&ctx, request, &response);
  if (!s.ok()) return service::FromGrpcStatus(s).WithContext("daemon " + daemon_);
  return Json{{"id", response.job().id()}, {"state", response.job().state()}};
}

}  // namespace tunefarm::tuner::dashboard
