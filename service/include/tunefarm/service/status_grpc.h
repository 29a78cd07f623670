// The one mapping between tunefarm's Status and gRPC's status, used by every service and client.
//
// Contract: lossless both ways. StatusCode is numbered as grpc::StatusCode (runtime/status.h), so
// every code -- IOError (UNAVAILABLE), Corruption (DATA_LOSS), Unimplemented, ... -- reaches the
// peer as itself with its message, and FromGrpcStatus(ToGrpcStatus(s)) == s for every s.
#ifndef TUNEFARM_SERVICE_STATUS_GRPC_H_
#define TUNEFARM_SERVICE_STATUS_GRPC_H_

#include <grpcpp/grpcpp.h>

#include "tunefarm/runtime/status.h"

namespace tunefarm::service {

grpc::Status ToGrpcStatus(const Status& status);
Status FromGrpcStatus(const grpc::Status& status);

}  // namespace tunefarm::service

#endif  // TUNEFARM_SERVICE_STATUS_GRPC_H_
