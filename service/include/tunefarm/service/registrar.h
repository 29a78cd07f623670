// Registrar: how a measurement server keeps itself registered with the tracker and knows which
// lease may use it.
//
// Contract (docs/lease_protocol.md):
//  - Unregistered: register (key, address, device, and the lease it was serving, if any), waiting
//    for the connection within the call's timeout; on failure retry after a backoff doubling from
//    initial_backoff_ms up to max_backoff_ms.
//  - Registered: heartbeat every interval the tracker asked for. The tracker's answer names the
//    lease that may use this server now; lease_id() follows it.
//  - A heartbeat the tracker does not answer (unreachable): keep the lease (while the tracker is
//    down nobody else can be granted this server) and register again with backoff, reporting it.
//  - A heartbeat answered "unknown" (the tracker restarted, or dropped this server): the lease is
//    no longer trusted -- lease_id() is "" at once -- and the server registers again reporting it;
//    the tracker keeps it only if it still holds (a restarted tracker restores it; a tracker that
//    ended it, e.g. after the server was frozen, does not).
//  - RefreshLease() asks the tracker now (heartbeat, or registration when unregistered), for a
//    Measure call carrying a lease this server has not been told about yet.
// Time comes from the injected clock; Step() does whatever is due and says when to call it again.
// Thread safety: all methods may be called from any thread; tracker calls are serialized.
#ifndef TUNEFARM_SERVICE_REGISTRAR_H_
#define TUNEFARM_SERVICE_REGISTRAR_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "tunefarm/runtime/mutex.h"
#include "tunefarm/runtime/result.h"
#include "tunefarm/service/auth.h"
#include "tunefarm/v1/tracker.pb.h"

namespace tunefarm::service {

// The two tracker calls a server makes. GrpcTrackerLink is the real one; tests may put a
// TrackerCore behind it.
class TrackerLink {
 public:
  virtual ~TrackerLink() = default;
  virtual Result<v1::RegisterResponse> Register(const v1::RegisterRequest& request) = 0;
  virtual Result<v1::HeartbeatResponse> Heartbeat(const v1::HeartbeatRequest& request) = 0;
};
std::unique_ptr<TrackerLink> GrpcTrackerLink(const std::string& tracker, const TlsFiles& tls, const std::string& token,
                                             int64_t call_timeout_ms = 2000);

struct RegistrarOptions {
  std::string key, address;
  v1::DeviceInfo device;
  int64_t initial_backoff_ms = 100, max_backoff_ms = 1000;
};

// Monotonic milliseconds (the clock daemons give the Registrar).
int64_t SteadyMs();

class Registrar {
 public:
  using Clock = std::function<int64_t()>;  // monotonic milliseconds
  Registrar(RegistrarOptions options, TrackerLink* link, Clock clock);

  // The address the tracker hands to clients (known once the server's port is bound).
  void set_address(const std::string& address) EXCLUDES(mu_);
  // Progress lines ("registered as srv3", "lost the tracker: ...; registering again").
  void set_log(std::function<void(const std::string&)> log) { log_ = std::move(log); }
  // Reported with heartbeats.
  void set_measurements_done(std::function<int64_t()> f) { measurements_done_ = std::move(f); }

  // Does what is due now; returns the milliseconds until the next call is due.
  int64_t Step() EXCLUDES(call_mu_, mu_);
  // Asks the tracker now which lease may use this server; returns it ("" = none).
  Result<std::string> RefreshLease() EXCLUDES(call_mu_, mu_);

  std::string server_id() const EXCLUDES(mu_);
  std::string lease_id() const EXCLUDES(mu_);  // "" when no lease may use the server (or it is unconfirmed)
  int64_t registrations() const EXCLUDES(mu_);

 private:
  // "Locked": with call_mu_ held; they take mu_ around the state, never across the tracker call.
  Status RegisterLocked(int64_t now) REQUIRES(call_mu_) EXCLUDES(mu_);
  Status HeartbeatLocked(int64_t now) REQUIRES(call_mu_) EXCLUDES(mu_);
  void AdoptLeaseLocked(const v1::ServerLease& lease) REQUIRES(mu_);
  void Log(const std::string& line) const;

  RegistrarOptions options_ GUARDED_BY(mu_);  // set_address changes the address
  TrackerLink* const link_;
  const Clock clock_;
  std::function<void(const std::string&)> log_;
  std::function<int64_t()> measurements_done_;
  mutable Mutex call_mu_ ACQUIRED_BEFORE(mu_);  // serializes tracker calls
  mutable Mutex mu_;                            // guards the fields below, and options_
  std::string server_id_ GUARDED_BY(mu_);
  std::string previous_server_id_ GUARDED_BY(mu_);
  v1::ServerLease lease_ GUARDED_BY(mu_);     // the lease the tracker confirmed
  v1::ServerLease reported_ GUARDED_BY(mu_);  // the lease to report on re-registration (kept while unconfirmed)
  int64_t heartbeat_ms_ GUARDED_BY(mu_) = 1000;
  int64_t backoff_ms_ GUARDED_BY(mu_) = 0;
  int64_t next_at_ GUARDED_BY(mu_) = 0;
  int64_t registrations_ GUARDED_BY(mu_) = 0;
};

}  // namespace tunefarm::service

#endif  // TUNEFARM_SERVICE_REGISTRAR_H_
