// Starting a farm service (rpc_tracker, rpc_server, tuner-daemon) the one way they all start.
//
// Contract:
//  - Authentication before the body: the farm token is checked in gRPC's transport auth filter
//    (a core auth metadata processor) on the call's headers, so a call with a missing or wrong
//    token is refused UNAUTHENTICATED before one byte of its request message is read or buffered.
//    With TLS, the handshake already requires a client certificate signed by the farm's CA.
//  - Refusals are logged to stderr, at most one line per second (the rest counted and summarized);
//    past kRefusalBudgetPerSecond refusals in a second, further refusals are answered only after
//    kRefusalDelayMs, which bounds a token guesser. (gRPC's auth filter does not expose the peer
//    address, so the budget is shared by all unauthenticated callers; authenticated calls never
//    wait.)
//  - Each service caps its request messages at what it needs (kTrackerMessageCap, ...): larger
//    requests are refused RESOURCE_EXHAUSTED.
//  - The standard gRPC health service (grpc.health.v1.Health) answers SERVING for "" and for each
//    registered service; health checks need no token (they reveal nothing but liveness).
//  - The server prints "<name> listening on HOST:PORT" (the port picked when asked for 0) and
//    flushes: the line tests and scripts wait for. A wildcard listen address gets a warning first.
#ifndef TUNEFARM_SERVICE_SERVER_H_
#define TUNEFARM_SERVICE_SERVER_H_

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tunefarm/runtime/result.h"
#include "tunefarm/service/auth.h"
#include "tunefarm/service/flags.h"

namespace tunefarm::service {

// Request caps per service: the tracker and the daemon take kilobytes, a measurement server takes
// kernel batches (at most 64 MiB of library per kernel, measure.proto).
inline constexpr int kTrackerMessageCap = 64 << 10;
inline constexpr int kDaemonMessageCap = 1 << 20;
inline constexpr int kMeasureMessageCap = 96 << 20;

inline constexpr int kRefusalBudgetPerSecond = 20;
inline constexpr int kRefusalDelayMs = 1000;

// Checks the token of each call (thread-safe); shared with the auth filter.
class TokenGuard;

struct FarmServerOptions {
  std::string name;  // the program, in the "listening on" line and in logs
  ListenAddress listen;
  TlsFiles tls;
  std::string token;
  int max_request_bytes = kTrackerMessageCap;
};

struct FarmServer {
  std::shared_ptr<TokenGuard> guard;  // declared first: outlives the server
  std::unique_ptr<grpc::Server> server;
  std::string address;  // HOST:PORT actually bound
  int64_t refused_calls() const;
  // Answers refusals still held back, then shuts the server down (in-flight calls get until deadline_ms).
  void Shutdown(int64_t deadline_ms = 1000);
};

// A service and its full name (v1::Tracker::service_full_name()), for the health service.
struct FarmService {
  const char* name;
  grpc::Service* service;
};

// IOError naming the address when it cannot listen.
Result<FarmServer> StartFarmServer(const FarmServerOptions& options, const std::vector<FarmService>& services);

}  // namespace tunefarm::service

#endif  // TUNEFARM_SERVICE_SERVER_H_
