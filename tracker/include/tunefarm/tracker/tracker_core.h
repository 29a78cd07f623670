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
// Thread safety: all methods may be called concurrently (one mutex); WaitForChange lets a caller
// block until some state changed.
#ifndef TUNEFARM_TRACKER_TRACKER_CORE_H_
#define TUNEFARM_TRACKER_TRACKER_CORE_H_

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

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
  std::string lease_client;
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
};

class TrackerCore {
 public:
  TrackerCore(TrackerOptions options, Clock clock);

  // Returns the server id. InvalidArgument for a bad key or address.
  Result<std::string> Register(const std::string& key, const std::string& address, const Device& device,
                               const std::string& previous_server_id = "");
  // False when the server is unknown (dropped, or the tracker restarted): it must register again.
  bool Heartbeat(const std::string& server_id, int64_t measurements_done);

  // Queues a lease request; returns its id. NotFound when no server is registered under key;
  // InvalidArgument when a parameter is outside its limits (tracker.proto).
  Result<int64_t> RequestLease(const std::string& key, int priority, int64_t deadline_ms, int64_t lease_ms,
                               const std::string& client);
  RequestState Poll(int64_t request_id);
  // The waiter is gone (stream closed): drop a queued request or release its lease.
  void Forget(int64_t request_id);
  Result<int64_t> Renew(const std::string& lease_id);  // new expires_in_ms
  Status Release(const std::string& lease_id);

  FarmStatus GetStatus();
  void Tick();
  // Blocks until state changes or timeout_ms passes (wall clock); for streaming waiters.
  void WaitForChange(int64_t timeout_ms);
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
  };
  void TickLocked();
  void EndLease(Request& r, LeaseEnd why);
  void DropServer(const std::string& id);
  int QueuePosition(const Request& r) const;
  void Changed() { cv_.notify_all(); }

  const TrackerOptions options_;
  const Clock clock_;
  const int64_t started_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::string, Server> servers_;
  std::map<int64_t, Request> requests_;
  std::map<std::string, int64_t> lease_to_request_;
  int64_t next_request_ = 1, next_server_ = 1, next_lease_ = 1;
};

}  // namespace tunefarm::tracker

#endif  // TUNEFARM_TRACKER_TRACKER_CORE_H_
