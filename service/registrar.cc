#include "tunefarm/service/registrar.h"

#include <algorithm>
#include <chrono>

#include "tunefarm/service/status_grpc.h"
#include "tunefarm/v1/tracker.grpc.pb.h"

namespace tunefarm::service {
namespace {

class GrpcLink final : public TrackerLink {
 public:
  GrpcLink(const std::string& tracker, const TlsFiles& tls, std::string token, int64_t timeout_ms)
      : stub_(v1::Tracker::NewStub(FarmChannel(tracker, tls))), token_(std::move(token)), timeout_ms_(timeout_ms) {}

  Result<v1::RegisterResponse> Register(const v1::RegisterRequest& request) override {
    grpc::ClientContext ctx;
    Prepare(&ctx);
    // Wait for the connection (within the call's timeout): a tracker that just came back is
    // reached the moment the channel reconnects, not one backoff period later.
    ctx.set_wait_for_ready(true);
    v1::RegisterResponse response;
    TUNEFARM_RETURN_IF_ERROR(FromGrpcStatus(stub_->Register(&ctx, request, &response)));
    return response;
  }
  Result<v1::HeartbeatResponse> Heartbeat(const v1::HeartbeatRequest& request) override {
    grpc::ClientContext ctx;
    Prepare(&ctx);
    v1::HeartbeatResponse response;
    TUNEFARM_RETURN_IF_ERROR(FromGrpcStatus(stub_->Heartbeat(&ctx, request, &response)));
    return response;
  }

 private:
  void Prepare(grpc::ClientContext* ctx) const {
    AttachToken(ctx, token_);
    ctx->set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(timeout_ms_));
  }
  std::unique_ptr<v1::Tracker::Stub> stub_;
  const std::string token_;
  const int64_t timeout_ms_;
};

}  // namespace

std::unique_ptr<TrackerLink> GrpcTrackerLink(const std::string& tracker, const TlsFiles& tls, const std::string& token,
                                             int64_t call_timeout_ms) {
  return std::make_unique<GrpcLink>(tracker, tls, token, call_timeout_ms);
}

Registrar::Registrar(RegistrarOptions options, TrackerLink* link, Clock clock)
    : options_(std::move(options)), link_(link), clock_(std::move(clock)) {
  backoff_ms_ = options_.initial_backoff_ms;
  next_at_ = clock_();
}

int64_t SteadyMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void Registrar::set_address(const std::string& address) {
  MutexLock lock(&mu_);
  options_.address = address;
}

void Registrar::Log(const std::string& line) const {
  if (log_) log_(line);
}

std::string Registrar::server_id() const {
  MutexLock lock(&mu_);
  return server_id_;
}

std::string Registrar::lease_id() const {
  MutexLock lock(&mu_);
  return lease_.lease_id();
}

int64_t Registrar::registrations() const {
  MutexLock lock(&mu_);
  return registrations_;
}

void Registrar::AdoptLeaseLocked(const v1::ServerLease& lease) {
  lease_ = lease;
  reported_ = lease;
}

Status Registrar::RegisterLocked(int64_t now) {
  v1::RegisterRequest request;
  {
    MutexLock lock(&mu_);
    request.set_key(options_.key);
    request.set_address(options_.address);
    *request.mutable_device() = options_.device;
    request.set_previous_server_id(previous_server_id_);
    if (!reported_.lease_id().empty()) *request.mutable_current_lease() = reported_;
  }
  auto response = link_->Register(request);
  MutexLock lock(&mu_);
  if (!response.ok()) {
    next_at_ = now + backoff_ms_;
    backoff_ms_ = std::min(backoff_ms_ * 2, options_.max_backoff_ms);
    return response.status();
  }
  server_id_ = previous_server_id_ = response->server_id();
  heartbeat_ms_ = std::max<int64_t>(10, response->heartbeat_interval_ms());
  backoff_ms_ = options_.initial_backoff_ms;
  next_at_ = now + heartbeat_ms_;
  ++registrations_;
  const std::string had = reported_.lease_id();
  AdoptLeaseLocked(response->lease());
  std::string line = "registered as " + server_id_;
  if (!had.empty())
    line += had == lease_.lease_id() ? " (still serving lease " + had + ")" : " (lease " + had + " ended)";
  Log(line);
  return Status::OK();
}

Status Registrar::HeartbeatLocked(int64_t now) {
  v1::HeartbeatRequest request;
  {
    MutexLock lock(&mu_);
    request.set_server_id(server_id_);
    request.set_measurements_done(measurements_done_ ? measurements_done_() : 0);
    request.set_current_lease_id(lease_.lease_id());
  }
  auto response = link_->Heartbeat(request);
  MutexLock lock(&mu_);
  if (!response.ok()) {
    // Unreachable: keep serving the lease we hold (nobody can be granted this server meanwhile)
    // and register again, reporting it.
    Log("lost the tracker (" + response.status().message() + "); registering again");
    server_id_.clear();
    next_at_ = now;
    return response.status();
  }
  if (!response->known()) {
    // Restarted, or dropped us: the lease is unconfirmed until the tracker says otherwise.
    Log("the tracker does not know this server any more; registering again");
    reported_ = lease_;
    lease_.Clear();
    server_id_.clear();
    next_at_ = now;
    return Status::FailedPrecondition("the tracker does not know this server");
  }
  AdoptLeaseLocked(response->lease());
  next_at_ = now + heartbeat_ms_;
  return Status::OK();
}

int64_t Registrar::Step() {
  MutexLock calls(&call_mu_);
  const int64_t now = clock_();
  bool registered;
  {
    MutexLock lock(&mu_);
    if (now < next_at_) return next_at_ - now;
    registered = !server_id_.empty();
  }
  Status s = registered ? HeartbeatLocked(now) : RegisterLocked(now);
  if (!s.ok() && !registered &&
      (s.code() == StatusCode::kUnauthenticated || s.code() == StatusCode::kInvalidArgument)) {
    Log("the tracker refused registration: " + s.message());
  }
  MutexLock lock(&mu_);
  return std::max<int64_t>(0, next_at_ - clock_());
}

Result<std::string> Registrar::RefreshLease() {
  MutexLock calls(&call_mu_);
  const int64_t now = clock_();
  bool registered;
  {
    MutexLock lock(&mu_);
    registered = !server_id_.empty();
  }
  Status s = registered ? HeartbeatLocked(now) : RegisterLocked(now);
  if (!s.ok() && s.code() == StatusCode::kFailedPrecondition) s = RegisterLocked(now);  // forgotten: register now
  if (!s.ok()) return s;
  MutexLock lock(&mu_);
  return lease_.lease_id();
}

}  // namespace tunefarm::service
