// TrackerService: the gRPC face of TrackerCore (tunefarm.v1.Tracker). Every handler checks the
// farm token first, validates its request and translates TrackerCore's Status codes to gRPC's.
#ifndef TUNEFARM_TRACKER_TRACKER_SERVICE_H_
#define TUNEFARM_TRACKER_TRACKER_SERVICE_H_

#include <string>

#include "tunefarm/tracker/tracker_core.h"
#include "tunefarm/v1/tracker.grpc.pb.h"

namespace tunefarm::tracker {

class TrackerService final : public v1::Tracker::Service {
 public:
  TrackerService(TrackerCore* core, std::string token) : core_(core), token_(std::move(token)) {}

  grpc::Status Register(grpc::ServerContext* ctx, const v1::RegisterRequest* req, v1::RegisterResponse* resp) override;
  grpc::Status Heartbeat(grpc::ServerContext* ctx, const v1::HeartbeatRequest* req, v1::HeartbeatResponse* resp) override;
  grpc::Status RequestLease(grpc::ServerContext* ctx, const v1::LeaseRequest* req,
                            grpc::ServerWriter<v1::LeaseUpdate>* writer) override;
  grpc::Status RenewLease(grpc::ServerContext* ctx, const v1::RenewLeaseRequest* req, v1::RenewLeaseResponse* resp) override;
  grpc::Status ReleaseLease(grpc::ServerContext* ctx, const v1::ReleaseLeaseRequest* req,
                            v1::ReleaseLeaseResponse* resp) override;
  grpc::Status FarmStatus(grpc::ServerContext* ctx, const v1::FarmStatusRequest* req, v1::FarmStatusResponse* resp) override;

 private:
  TrackerCore* core_;
  const std::string token_;
};

grpc::Status ToGrpc(const Status& s);
void ToProto(const Device& d, v1::DeviceInfo* out);
Device FromProto(const v1::DeviceInfo& d);

}  // namespace tunefarm::tracker

#endif  // TUNEFARM_TRACKER_TRACKER_SERVICE_H_
