#include "tunefarm/tracker/tracker_service.h"

#include <memory>

#include "tunefarm/service/event_stream.h"
#include "tunefarm/service/status_grpc.h"

namespace tunefarm::tracker {
namespace {

using service::ToGrpcStatus;

grpc::ServerUnaryReactor* Done(grpc::CallbackServerContext* ctx, const grpc::Status& status) {
  auto* reactor = ctx->DefaultReactor();
  reactor->Finish(status);
  return reactor;
}

v1::ServerLease ToProto(const LeaseInfo& lease) {
  v1::ServerLease out;
  out.set_lease_id(lease.lease_id);
  out.set_client(lease.client);
  out.set_lease_ms(lease.lease_ms);
  return out;
}

v1::LeaseEnded::Reason ToProto(LeaseEnd end) {
  switch (end) {
    case LeaseEnd::kReleased:
      return v1::LeaseEnded::RELEASED;
    case LeaseEnd::kExpired:
      return v1::LeaseEnded::EXPIRED;
    case LeaseEnd::kServerLost:
      return v1::LeaseEnded::SERVER_LOST;
    case LeaseEnd::kNone:
      break;
  }
  return v1::LeaseEnded::REASON_UNSPECIFIED;
}

// One RequestLease stream: Queued updates while the position changes, Granted, then Ended.
class LeaseStream final : public service::EventStream<v1::LeaseUpdate> {
 public:
  LeaseStream(TrackerCore* core, int64_t request_id) : core_(core), id_(request_id) {
    subscription_ = core_->Subscribe([this] { Pump(); });
    Pump();
  }

 private:
  Step Next(v1::LeaseUpdate* update, grpc::Status* status) override REQUIRES(mu_) {
    if (ended_sent_) {
      *status = grpc::Status::OK;
      return Step::kFinish;
    }
    RequestState s = core_->Poll(id_);
    update->Clear();
    if (s.kind == RequestState::kFailed) {
      *status = ToGrpcStatus(s.failure);
      return Step::kFinish;
    }
    if (s.kind == RequestState::kQueued) {
      if (s.position == last_position_) return Step::kNothing;
      last_position_ = s.position;
      update->mutable_queued()->set_position(s.position);
      update->mutable_queued()->set_servers(s.servers);
    } else if (!granted_sent_) {  // granted (perhaps already ended: the end follows)
      granted_sent_ = true;
      auto* g = update->mutable_granted();
      g->set_lease_id(s.lease_id);
      g->set_server_id(s.server_id);
      g->set_server_address(s.server_address);
      ToProto(s.device, g->mutable_device());
      g->set_expires_in_ms(s.expires_in_ms);
    } else if (s.kind == RequestState::kEnded) {
      ended_sent_ = true;
      update->mutable_ended()->set_reason(ToProto(s.end));
      update->mutable_ended()->set_message(std::string("lease ") + LeaseEndName(s.end));
    } else {
      return Step::kNothing;  // granted and still held: nothing new
    }
    return Step::kWrite;
  }

  void Cleanup() override {
    core_->Unsubscribe(subscription_);  // waits for a change callback running on another thread
    core_->Forget(id_);                 // a closed stream releases its lease
  }

  TrackerCore* const core_;
  const int64_t id_;
  int64_t subscription_ = 0;
  int last_position_ GUARDED_BY(mu_) = -1;  // the stream's lock: Next() runs under it
  bool granted_sent_ GUARDED_BY(mu_) = false;
  bool ended_sent_ GUARDED_BY(mu_) = false;
};

class FailedStream final : public grpc::ServerWriteReactor<v1::LeaseUpdate> {
 public:
  explicit FailedStream(const grpc::Status& status) { Finish(status); }
  void OnDone() override { delete this; }
};

}  // namespace

void ToProto(const Device& d, v1::DeviceInfo* out) {
  out->set_arch(d.arch);
  out->set_cpu_name(d.cpu_name);
  out->set_cpu_features(d.cpu_features);
  out->set_cores(d.cores);
  out->set_gpu_name(d.gpu_name);
  out->set_gpu_memory_bytes(d.gpu_memory_bytes);
  out->set_threads(d.threads);
}

Device FromProto(const v1::DeviceInfo& d) {
  Device out;
  out.arch = d.arch().substr(0, 64);
  out.cpu_name = d.cpu_name().substr(0, 256);
  out.cpu_features = d.cpu_features().substr(0, 4096);
  out.cores = std::max(1, d.cores());
  out.gpu_name = d.gpu_name().substr(0, 256);
  out.gpu_memory_bytes = std::max<int64_t>(0, d.gpu_memory_bytes());
  out.threads = std::max(1, d.threads());
  return out;
}

grpc::ServerUnaryReactor* TrackerService::Register(grpc::CallbackServerContext* ctx, const v1::RegisterRequest* req,
                                                   v1::RegisterResponse* resp) {
  LeaseInfo reported{req->current_lease().lease_id(), req->current_lease().client(), req->current_lease().lease_ms()};
  auto reg = core_->Register(req->key(), req->address(), FromProto(req->device()), req->previous_server_id(), reported);
  if (!reg.ok()) return Done(ctx, ToGrpcStatus(reg.status()));
  resp->set_server_id(reg->server_id);
  resp->set_heartbeat_interval_ms(int32_t(core_->heartbeat_interval_ms()));
  *resp->mutable_lease() = ToProto(reg->lease);
  return Done(ctx, grpc::Status::OK);
}

grpc::ServerUnaryReactor* TrackerService::Heartbeat(grpc::CallbackServerContext* ctx, const v1::HeartbeatRequest* req,
                                                    v1::HeartbeatResponse* resp) {
  HeartbeatReply reply = core_->Heartbeat(req->server_id(), req->measurements_done());
  resp->set_known(reply.known);
  *resp->mutable_lease() = ToProto(reply.lease);
  return Done(ctx, grpc::Status::OK);
}

grpc::ServerWriteReactor<v1::LeaseUpdate>* TrackerService::RequestLease(grpc::CallbackServerContext*,
                                                                        const v1::LeaseRequest* req) {
  auto id = core_->RequestLease(req->key(), req->priority(), req->deadline_ms(), req->lease_ms(), req->client());
  if (!id.ok()) return new FailedStream(ToGrpcStatus(id.status()));
  return new LeaseStream(core_, *id);
}

grpc::ServerUnaryReactor* TrackerService::RenewLease(grpc::CallbackServerContext* ctx, const v1::RenewLeaseRequest* req,
                                                     v1::RenewLeaseResponse* resp) {
  auto ms = core_->Renew(req->lease_id());
  if (!ms.ok()) return Done(ctx, ToGrpcStatus(ms.status()));
  resp->set_expires_in_ms(*ms);
  return Done(ctx, grpc::Status::OK);
}

grpc::ServerUnaryReactor* TrackerService::ReleaseLease(grpc::CallbackServerContext* ctx,
                                                       const v1::ReleaseLeaseRequest* req, v1::ReleaseLeaseResponse*) {
  return Done(ctx, ToGrpcStatus(core_->Release(req->lease_id())));
}

grpc::ServerUnaryReactor* TrackerService::FarmStatus(grpc::CallbackServerContext* ctx, const v1::FarmStatusRequest*,
                                                     v1::FarmStatusResponse* resp) {
  tracker::FarmStatus st = core_->GetStatus();
  for (const auto& s : st.servers) {
    auto* out = resp->add_servers();
    out->set_server_id(s.server_id);
    out->set_key(s.key);
    out->set_address(s.address);
    ToProto(s.device, out->mutable_device());
    out->set_state(s.busy ? v1::ServerStatus::BUSY : v1::ServerStatus::FREE);
    out->set_measurements_done(s.measurements_done);
    out->set_last_heartbeat_ms_ago(s.last_heartbeat_ms_ago);
    out->set_lease_client(s.lease_client);
    out->set_lease_id(s.lease_id);
  }
  for (const auto& k : st.keys) {
    auto* out = resp->add_keys();
    out->set_key(k.key);
    out->set_free(k.free);
    out->set_busy(k.busy);
    out->set_pending(k.pending);
  }
  resp->set_uptime_ms(st.uptime_ms);
  resp->set_leases_granted(st.leases_granted);
  resp->set_leases_expired(st.leases_expired);
  resp->set_servers_lost(st.servers_lost);
  return Done(ctx, grpc::Status::OK);
}

}  // namespace tunefarm::tracker
