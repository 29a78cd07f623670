#include "tunefarm/tracker/tracker_service.h"

#include "tunefarm/tracker/auth.h"

namespace tunefarm::tracker {

grpc::Status ToGrpc(const Status& s) {
  if (s.ok()) return grpc::Status::OK;
  grpc::StatusCode code = grpc::StatusCode::INTERNAL;
  switch (s.code()) {
    case StatusCode::kInvalidArgument: code = grpc::StatusCode::INVALID_ARGUMENT; break;
    case StatusCode::kNotFound: code = grpc::StatusCode::NOT_FOUND; break;
    case StatusCode::kDeadlineExceeded: code = grpc::StatusCode::DEADLINE_EXCEEDED; break;
    case StatusCode::kFailedPrecondition: code = grpc::StatusCode::FAILED_PRECONDITION; break;
    default: break;
  }
  return grpc::Status(code, s.message());
}

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

grpc::Status TrackerService::Register(grpc::ServerContext* ctx, const v1::RegisterRequest* req, v1::RegisterResponse* resp) {
  grpc::Status auth = CheckToken(ctx, token_, "Register");
  if (!auth.ok()) return auth;
  auto id = core_->Register(req->key(), req->address(), FromProto(req->device()), req->previous_server_id());
  if (!id.ok()) return ToGrpc(id.status());
  resp->set_server_id(*id);
  resp->set_heartbeat_interval_ms(int32_t(core_->heartbeat_interval_ms()));
  return grpc::Status::OK;
}

grpc::Status TrackerService::Heartbeat(grpc::ServerContext* ctx, const v1::HeartbeatRequest* req, v1::HeartbeatResponse* resp) {
  grpc::Status auth = CheckToken(ctx, token_, "Heartbeat");
  if (!auth.ok()) return auth;
  resp->set_known(core_->Heartbeat(req->server_id(), req->measurements_done()));
  return grpc::Status::OK;
}

grpc::Status TrackerService::RequestLease(grpc::ServerContext* ctx, const v1::LeaseRequest* req,
                                          grpc::ServerWriter<v1::LeaseUpdate>* writer) {
  grpc::Status auth = CheckToken(ctx, token_, "RequestLease");
  if (!auth.ok()) return auth;
  auto id = core_->RequestLease(req->key(), req->priority(), req->deadline_ms(), req->lease_ms(), req->client());
  if (!id.ok()) return ToGrpc(id.status());
  int last_position = -1;
  bool granted_sent = false;
  grpc::Status result = grpc::Status::OK;
  while (true) {
    if (ctx->IsCancelled()) {
      result = grpc::Status(grpc::StatusCode::CANCELLED, "client went away");
      break;
    }
    RequestState s = core_->Poll(*id);
    v1::LeaseUpdate update;
    if (s.kind == RequestState::kFailed) {
      result = ToGrpc(s.failure);
      break;
    }
    if (s.kind == RequestState::kQueued && s.position != last_position) {
      last_position = s.position;
      update.mutable_queued()->set_position(s.position);
      update.mutable_queued()->set_servers(s.servers);
      if (!writer->Write(update)) break;
    } else if ((s.kind == RequestState::kGranted || s.kind == RequestState::kEnded) && !granted_sent) {
      granted_sent = true;
      auto* g = update.mutable_granted();
      g->set_lease_id(s.lease_id);
      g->set_server_id(s.server_id);
      g->set_server_address(s.server_address);
      ToProto(s.device, g->mutable_device());
      g->set_expires_in_ms(s.expires_in_ms);
      if (!writer->Write(update)) break;
      continue;  // report an end in the same poll round, if there is one
    } else if (s.kind == RequestState::kEnded) {
      auto* e = update.mutable_ended();
      e->set_reason(s.end == LeaseEnd::kReleased  ? v1::LeaseEnded::RELEASED
                    : s.end == LeaseEnd::kExpired ? v1::LeaseEnded::EXPIRED
                                                  : v1::LeaseEnded::SERVER_LOST);
      e->set_message(std::string("lease ") + LeaseEndName(s.end));
      writer->Write(update);
      break;
    }
    core_->WaitForChange(100);
  }
  core_->Forget(*id);
  return result;
}

grpc::Status TrackerService::RenewLease(grpc::ServerContext* ctx, const v1::RenewLeaseRequest* req, v1::RenewLeaseResponse* resp) {
  grpc::Status auth = CheckToken(ctx, token_, "RenewLease");
  if (!auth.ok()) return auth;
  auto ms = core_->Renew(req->lease_id());
  if (!ms.ok()) return ToGrpc(ms.status());
  resp->set_expires_in_ms(*ms);
  return grpc::Status::OK;
}

grpc::Status TrackerService::ReleaseLease(grpc::ServerContext* ctx, const v1::ReleaseLeaseRequest* req,
                                          v1::ReleaseLeaseResponse* resp) {
  grpc::Status auth = CheckToken(ctx, token_, "ReleaseLease");
  if (!auth.ok()) return auth;
  return ToGrpc(core_->Release(req->lease_id()));
}

grpc::Status TrackerService::FarmStatus(grpc::ServerContext* ctx, const v1::FarmStatusRequest* req, v1::FarmStatusResponse* resp) {
  grpc::Status auth = CheckToken(ctx, token_, "FarmStatus");
  if (!auth.ok()) return auth;
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
  }
  for (const auto& k : st.keys) {
    auto* out = resp->add_keys();
    out->set_key(k.key);
    out->set_free(k.free);
    out->set_busy(k.busy);
    out->set_pending(k.pending);
  }
  resp->set_uptime_ms(st.uptime_ms);
  return grpc::Status::OK;
}

}  // namespace tunefarm::tracker
