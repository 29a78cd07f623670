// TrackerCore: the tracker's logic without gRPC -- the device registry, heartbeats, leases and
// the per-key queue of lease requests. The gRPC service (tracker_service.cc) is a thin layer over
// it; tests drive it directly with a manual clock.
//
// Contract:
//  - Servers register under a key and heartbeat; one that misses `missed_heartbeats` intervals is
//    dropped at the next Tick, and the holder of its lease sees the lease end with kServerLost.
//  - Lease requests queue per key: higher priority first, FIFO among equals. A request for a key
//    with no registered server fails at once (NotFound naming the key); a queued request fails with
//    DeadlineExceeded when its deadline passes before a grant. A granted lease lasts lease_ms unless
//    renewed, and ends on Release, on expiry (kExpired) or when its server is lost.
//  - Time comes from the Clock; Tick() applies every time-based transition and grants free servers
//    to queue heads. Every public call also ticks, so state is never stale.
//  - Server ids ("srv<n>-<epoch prefix>") and lease ids carry this tracker's epoch (random per
//    start): a server heartbeating with an id from before a restart is unknown, never another server.
//  - Lease ids carry this tracker's epoch (random per start). A server re-registering reports the
//    lease it was serving: a lease of an earlier epoch (the tracker restarted) is restored on it,
//    so a server mid-batch is never granted to a second client; a lease of this epoch is kept only
//    if it still holds (moved to the new registration), else the server comes back free.
//    Heartbeat and Register answer with the lease that may use the server (docs/lease_protocol.md).
//  - Joins, losses, grants and ends are reported through TrackerOptions::log, one line each.
// Thread safety: all methods may be called concurrently (one mutex). Subscribe() registers a
// callback run after any state change, outside the core's lock (the streaming handlers' wake-up).
#ifndef TUNEFARM_TRACKER_TRACKER_CORE_H_
#define TUNEFARM_TRACKER_TRACKER_CORE_H_

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "tunefarm/runtime/mutex.h"
#include "tunefarm/runtime/result.h"

namespace tunefarm::tracker {

// Milliseconds on a monotonic clock.
using Clock = std::function<int64_t()>;
Clock SteadyClock();

struct Device {
  std::string arch, cpu_name, cpu_features, gpu_name;
  int32_t cores = 1, threads = 1;
  int64_t gpu_memory_bytes = 0;
};

struct TrackerOptions {
  int64_t heartbeat_interval_ms = 1000;
  int missed_heartbeats = 3;
  std::function<void(const std::string&)> log;  // info lines: joins, losses, lease grants and ends
  // Called under the core's lock at every fresh grant with the device key and how long the request
  // waited in the queue (the lease wait histogram of /metrics); must be quick.
  std::function<void(const std::string& key, int64_t wait_ms)> on_grant;
};

// A lease as the server it holds sees it.
struct LeaseInfo {
  std::string lease_id, client;  // lease_id empty: none
  int64_t lease_ms = 0;
};

struct Registration {
  std::string server_id;
  LeaseInfo lease;  // the reported lease, when the tracker kept it
};

struct HeartbeatReply {
  bool known = false;  // false: register again
  LeaseInfo lease;     // the lease that may use the server now
};

enum class LeaseEnd { kNone, kReleased, kExpired, kServerLost };
const char* LeaseEndName(LeaseEnd e);

// What a lease request looks like to its waiter (Poll).
struct RequestState {
  enum Kind { kQueued, kGranted, kEnded, kFailed } kind = kQueued;
  int position = 0;      // kQueued: 1 = next
  int servers = 0;       // kQueued: servers under the key
  std::string lease_id;  // kGranted, kEnded
  std::string server_id, server_address;
  Device device;
  int64_t expires_in_ms = 0;
  LeaseEnd end = LeaseEnd::kNone;  // kEnded
  Status failure;                  // kFailed
};

struct ServerInfo {
  std::string server_id, key, address;
  Device device;
  bool busy = false;
  std::string lease_client, lease_id;
  int64_t measurements_done = 0;
  int64_t last_heartbeat_ms_ago = 0;
};

struct KeyInfo {
  std::string key;
  int free = 0, busy = 0, pending = 0;
};

struct FarmStatus {
  std::vector<ServerInfo> servers;
  std::vector<KeyInfo> keys;
  int64_t uptime_ms = 0;
  int64_t leases_granted = 0, leases_expired = 0, servers_lost = 0;
};

class TrackerCore {
 public:
  TrackerCore(TrackerOptions options, Clock clock);

  // InvalidArgument for a bad key or address. `reported`: the lease the server was serving.
  Result<Registration> Register(const std::string& key, const std::string& address, const Device& device,
                                const std::string& previous_server_id = "", const LeaseInfo& reported = {})
      EXCLUDES(mu_);
  // known == false when the server is unknown (dropped, or the tracker restarted).
  HeartbeatReply Heartbeat(const std::string& server_id, int64_t measurements_done) EXCLUDES(mu_);

  // Queues a lease request; returns its id. NotFound when no server is registered under key;
  // InvalidArgument when a parameter is outside its limits (tracker.proto).
  Result<int64_t> RequestLease(const std::string& key, int priority, int64_t deadline_ms, int64_t lease_ms,
                               const std::string& client) EXCLUDES(mu_);
  RequestState Poll(int64_t request_id) EXCLUDES(mu_);
  // The waiter is gone (stream closed): drop a queued request or release its lease.
  void Forget(int64_t request_id) EXCLUDES(mu_);
  Result<int64_t> Renew(const std::string& lease_id) EXCLUDES(mu_);  // new expires_in_ms
  Status Release(const std::string& lease_id) EXCLUDES(mu_);

  FarmStatus GetStatus() EXCLUDES(mu_);
  void Tick() EXCLUDES(mu_);
  // Blocks until state changes or timeout_ms passes (wall clock).
  void WaitForChange(int64_t timeout_ms) EXCLUDES(mu_);
  // `on_change` runs after every state change, outside the core's lock, on the thread that made
  // the change (the tracker's Tick() loop publishes changes found by Poll within its period); it
  // may call Poll and GetStatus. Unsubscribe returns once no call of it is running.
  int64_t Subscribe(std::function<void()> on_change);
  void Unsubscribe(int64_t subscription);
  int64_t heartbeat_interval_ms() const { return options_.heartbeat_interval_ms; }

 private:
  struct Server {
    std::string id, key, address;
    Device device;
    int64_t last_heartbeat = 0, measurements_done = 0;
    int64_t lease_request = -1;  // the request holding it, -1 when free
  };
  struct Request {
    int64_t id = 0;
    std::string key, client;
    int priority = 0;
    int64_t enqueued = 0, deadline = 0, lease_ms = 0;
    RequestState state;
    std::string server_id;
    int64_t expires_at = 0;
    bool restored = false;  // reported by its server after a tracker restart: no waiting stream
  };
  void TickLocked() REQUIRES(mu_);
  void EndLease(Request& r, LeaseEnd why) REQUIRES(mu_);
  void DropServer(const std::string& id, const std::string& why) REQUIRES(mu_);
  int QueuePosition(const Request& r) const REQUIRES(mu_);
  LeaseInfo LeaseOf(const Server& s) REQUIRES(mu_);
  // Keeps a reported lease on the new registration `server` (moved or restored); false: it ended.
  bool AdoptReportedLease(Server& server, const LeaseInfo& reported, const std::string& previous_id) REQUIRES(mu_);
  void Changed() REQUIRES(mu_) {
    changed_ = true;
    cv_.SignalAll();
  }
  void Log(const std::string& line) const {
    if (options_.log) options_.log(line);
  }
  // Runs the subscribers if something changed; call with mu_ released.
  void Publish() EXCLUDES(mu_);

  const TrackerOptions options_;
  const Clock clock_;
  const int64_t started_;
  Mutex mu_;
  CondVar cv_;
  std::map<std::string, Server> servers_ GUARDED_BY(mu_);
  std::map<int64_t, Request> requests_ GUARDED_BY(mu_);
  std::map<std::string, int64_t> lease_to_request_ GUARDED_BY(mu_);
  int64_t next_request_ GUARDED_BY(mu_) = 1;
  int64_t next_server_ GUARDED_BY(mu_) = 1;
  int64_t next_lease_ GUARDED_BY(mu_) = 1;
  std::string epoch_ GUARDED_BY(mu_);  // in every lease id: tells this tracker's leases from an earlier one's
  // A predecessor's leases released before their server came back.
  std::set<std::string> released_early_ GUARDED_BY(mu_);
  int64_t leases_granted_ GUARDED_BY(mu_) = 0;
  int64_t leases_expired_ GUARDED_BY(mu_) = 0;
  int64_t servers_lost_ GUARDED_BY(mu_) = 0;
  bool changed_ GUARDED_BY(mu_) = false;
  // Recursive: a subscriber's callback runs under it, and may end its stream there (EventStream:
  // gRPC runs OnDone inline in Finish), whose Cleanup() calls Unsubscribe() on the same thread.
  RecursiveMutex subscribers_mu_;
  std::map<int64_t, std::function<void()>> subscribers_ GUARDED_BY(subscribers_mu_);
  int64_t next_subscriber_ GUARDED_BY(subscribers_mu_) = 1;
};

}  // namespace tunefarm::tracker

#endif  // TUNEFARM_TRACKER_TRACKER_CORE_H_
