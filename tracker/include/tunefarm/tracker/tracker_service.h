// TrackerService: the gRPC face of TrackerCore (tunefarm.v1.Tracker), on gRPC's callback API.
// The farm token is checked before a handler runs (service/server.h); handlers validate their
// request and map TrackerCore's Status with service's one mapping. A RequestLease stream is a
// reactor woken by the core's change events (TrackerCore::Subscribe), not a polling thread.
#ifndef TUNEFARM_TRACKER_TRACKER_SERVICE_H_
#define TUNEFARM_TRACKER_TRACKER_SERVICE_H_

#include <string>

#include "tunefarm/tracker/tracker_core.h"
#include "tunefarm/v1/tracker.grpc.pb.h"

namespace tunefarm::tracker {

class TrackerService final : public v1::Tracker::CallbackService {
 public:
  explicit TrackerService(TrackerCore* core) : core_(core) {}

  grpc::ServerUnaryReactor* Register(grpc::CallbackServerContext* ctx, const v1::RegisterRequest* req,
                                     v1::RegisterResponse* resp) override;
  grpc::ServerUnaryReactor* Heartbeat(grpc::CallbackServerContext* ctx, const v1::HeartbeatRequest* req,
                                      v1::HeartbeatResponse* resp) override;
  grpc::ServerWriteReactor<v1::LeaseUpdate>* RequestLease(grpc::CallbackServerContext* ctx,
                                                          const v1::LeaseRequest* req) override;
  grpc::ServerUnaryReactor* RenewLease(grpc::CallbackServerContext* ctx, const v1::RenewLeaseRequest* req,
                                       v1::RenewLeaseResponse* resp) override;
  grpc::ServerUnaryReactor* ReleaseLease(grpc::CallbackServerContext* ctx, const v1::ReleaseLeaseRequest* req,
                                         v1::ReleaseLeaseResponse* resp) override;
  grpc::ServerUnaryReactor* FarmStatus(grpc::CallbackServerContext* ctx, const v1::FarmStatusRequest* req,
                                       v1::FarmStatusResponse* resp) override;

 private:
  TrackerCore* core_;
};

void ToProto(const Device& d, v1::DeviceInfo* out);
Device FromProto(const v1::DeviceInfo& d);

}  // namespace tunefarm::tracker

#endif  // TUNEFARM_TRACKER_TRACKER_SERVICE_H_
