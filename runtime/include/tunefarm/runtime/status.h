// Status: the outcome of an operation that can fail, returned across every component boundary.
//
// Contract: a default-constructed Status is OK and allocates nothing. An error carries a code and a
// message that names the offending object ("conv2d: config index 9001 out of range [0, 4096)").
// Codes map one-to-one onto gRPC status codes so services can pass them through unchanged.
// Errors are values: nothing in tunefarm throws to report one.
//
// Thread safety: a Status is an immutable value; distinct objects may be used from distinct threads.
#ifndef TUNEFARM_RUNTIME_STATUS_H_
#define TUNEFARM_RUNTIME_STATUS_H_

#include <memory>
#include <string>
#include <string_view>

namespace tunefarm {

// Numbered as grpc::StatusCode.
enum class StatusCode : int {
  kOk = 0,
  kCancelled = 1,
  kUnknown = 2,
  kInvalidArgument = 3,
  kDeadlineExceeded = 4,
  kNotFound = 5,
  kAlreadyExists = 6,
  kPermissionDenied = 7,
  kResourceExhausted = 8,
  kFailedPrecondition = 9,
  kAborted = 10,
  kOutOfRange = 11,
  kUnimplemented = 12,
  kInternal = 13,
  kUnavailable = 14,
  kDataLoss = 15,  // "Corruption" in LevelDB's vocabulary: stored data that cannot be read back.
  kUnauthenticated = 16,
};

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string_view message);

  static Status OK() { return Status(); }
  static Status InvalidArgument(std::string_view msg) { return {StatusCode::kInvalidArgument, msg}; }
  static Status NotFound(std::string_view msg) { return {StatusCode::kNotFound, msg}; }
  static Status OutOfRange(std::string_view msg) { return {StatusCode::kOutOfRange, msg}; }
  static Status Unimplemented(std::string_view msg) { return {StatusCode::kUnimplemented, msg}; }
  static Status Internal(std::string_view msg) { return {StatusCode::kInternal, msg}; }
  static Status Corruption(std::string_view msg) { return {StatusCode::kDataLoss, msg}; }
  static Status IOError(std::string_view msg) { return {StatusCode::kUnavailable, msg}; }
  static Status ResourceExhausted(std::string_view msg) { return {StatusCode::kResourceExhausted, msg}; }
  static Status FailedPrecondition(std::string_view msg) { return {StatusCode::kFailedPrecondition, msg}; }
  static Status DeadlineExceeded(std::string_view msg) { return {StatusCode::kDeadlineExceeded, msg}; }

  bool ok() const { return state_ == nullptr; }
  StatusCode code() const { return state_ ? state_->code : StatusCode::kOk; }
  // Empty for OK.
  const std::string& message() const;
  // "InvalidArgument: <message>", or "OK".
  std::string ToString() const;

  // Returns a copy whose message is "<context>: <message>"; OK stays OK.
  Status WithContext(std::string_view context) const;

 private:
  struct State {
    StatusCode code;
    std::string message;
  };
  std::shared_ptr<const State> state_;  // null means OK
};

std::string_view StatusCodeName(StatusCode code);

}  // namespace tunefarm

// Propagates a non-OK Status out of the enclosing function.
#define TUNEFARM_RETURN_IF_ERROR(expr)       \
  do {                                       \
    ::tunefarm::Status _tf_status = (expr);  \
    if (!_tf_status.ok()) return _tf_status; \
  } while (0)

#endif  // TUNEFARM_RUNTIME_STATUS_H_
