#include "tunefarm/service/status_grpc.h"

namespace tunefarm::service {

// The numbering is shared (status.h); these pin it so a renumbering fails to compile.
static_assert(int(StatusCode::kUnavailable) == int(grpc::StatusCode::UNAVAILABLE));
static_assert(int(StatusCode::kDataLoss) == int(grpc::StatusCode::DATA_LOSS));
static_assert(int(StatusCode::kUnauthenticated) == int(grpc::StatusCode::UNAUTHENTICATED));
static_assert(int(StatusCode::kUnimplemented) == int(grpc::StatusCode::UNIMPLEMENTED));

grpc::Status ToGrpcStatus(const Status& status) {
  if (status.ok()) return grpc::Status::OK;
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()), status.message());
}

Status FromGrpcStatus(const grpc::Status& status) {
  if (status.ok()) return Status::OK();
  const int code = int(status.error_code());
  // A peer speaking a newer gRPC may send a code we do not know: keep its message, call it Unknown.
  const StatusCode ours =
      code > 0 && code <= int(StatusCode::kUnauthenticated) ? StatusCode(code) : StatusCode::kUnknown;
  return Status(ours, status.error_message());
}

}  // namespace tunefarm::service
