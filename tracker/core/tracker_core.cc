#include "tunefarm/tracker/tracker_core.h"

#include <algorithm>
#include <chrono>
#include <random>

namespace tunefarm::tracker {
namespace {

bool ValidKey(const std::string& key) {
  if (key.empty() || key.size() > 64) return false;
  for (char c : key) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-')) return false;
  }
  return true;
}

}  // namespace

Clock SteadyClock() {
  return [] {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
  };
}

const char* LeaseEndName(LeaseEnd e) {
  switch (e) {
    case LeaseEnd::kNone: return "none";
    case LeaseEnd::kReleased: return "released";
    case LeaseEnd::kExpired: return "expired";
    case LeaseEnd::kServerLost: return "server lost";
  }
  return "none";
}

TrackerCore::TrackerCore(TrackerOptions options, Clock clock)
    : options_(options), clock_(std::move(clock)), started_(clock_()) {
  // Lease ids differ across tracker restarts, so a stale id is never mistaken for a new lease.
  std::random_device rd;
  next_lease_ = int64_t(rd() % 1000000) * 1000000;
}

Result<std::string> TrackerCore::Register(const std::string& key, const std::string& address, const Device& device,
                                          const std::string& previous_server_id) {
  if (!ValidKey(key)) return Status::InvalidArgument("device key '" + key + "' must be 1-64 characters of [A-Za-z0-9._-]");
  if (address.empty() || address.size() > 256) return Status::InvalidArgument("server address must be 1-256 bytes");
  std::lock_guard<std::mutex> lock(mu_);
  // A server that re-registers (it lost its heartbeat, or restarted) replaces its old entry.
  if (!previous_server_id.empty() && servers_.count(previous_server_id)) DropServer(previous_server_id);
  for (auto it = servers_.begin(); it != servers_.end();) {
    auto next = std::next(it);
    if (it->second.address == address) DropServer(it->first);
    it = next;
  }
  Server s;
  s.id = "srv" + std::to_string(next_server_++);
  s.key = key;
  s.address = address;
  s.device = device;
  s.last_heartbeat = clock_();
  servers_[s.id] = s;
  TickLocked();
  Changed();
  return s.id;
}

bool TrackerCore::Heartbeat(const std::string& server_id, int64_t measurements_done) {
  std::lock_guard<std::mutex> lock(mu_);
  TickLocked();
  auto it = servers_.find(server_id);
  if (it == servers_.end()) return false;
  it->second.last_heartbeat = clock_();
  it->second.measurements_done = measurements_done;
  return true;
}

Result<int64_t> TrackerCore::RequestLease(const std::string& key, int priority, int64_t deadline_ms, int64_t lease_ms,
                                          const std::string& client) {
  if (!ValidKey(key)) return Status::InvalidArgument("device key '" + key + "' must be 1-64 characters of [A-Za-z0-9._-]");
  if (priority < -1000 || priority > 1000) return Status::InvalidArgument("priority must be in [-1000, 1000]");
  if (deadline_ms < 1 || deadline_ms > 86400000) return Status::InvalidArgument("deadline_ms must be in [1, 86400000]");
  if (lease_ms < 1000 || lease_ms > 86400000) return Status::InvalidArgument("lease_ms must be in [1000, 86400000]");
  if (client.size() > 256) return Status::InvalidArgument("client name longer than 256 bytes");
  std::lock_guard<std::mutex> lock(mu_);
  TickLocked();
  bool any = false;
  for (const auto& [id, s] : servers_) any = any || s.key == key;
  if (!any) return Status::NotFound("no server is registered under key '" + key + "'");
  Request r;
  r.id = next_request_++;
  r.key = key;
  r.client = client;
  r.priority = priority;
  r.enqueued = clock_();
  r.deadline = r.enqueued + deadline_ms;
  r.lease_ms = lease_ms;
  requests_[r.id] = r;
  TickLocked();
  Changed();
  return r.id;
}

int TrackerCore::QueuePosition(const Request& r) const {
  int ahead = 0;
  for (const auto& [id, o] : requests_) {
    if (o.key != r.key || o.state.kind != RequestState::kQueued || o.id == r.id) continue;
    if (o.priority > r.priority || (o.priority == r.priority && o.id < r.id)) ++ahead;
  }
  return ahead + 1;
}

RequestState TrackerCore::Poll(int64_t request_id) {
  std::lock_guard<std::mutex> lock(mu_);
  TickLocked();
  auto it = requests_.find(request_id);
  if (it == requests_.end()) {
    RequestState s;
    s.kind = RequestState::kFailed;
    s.failure = Status::NotFound("unknown lease request " + std::to_string(request_id));
    return s;
  }
  Request& r = it->second;
  if (r.state.kind == RequestState::kQueued) {
    r.state.position = QueuePosition(r);
    r.state.servers = 0;
    for (const auto& [id, s] : servers_) r.state.servers += s.key == r.key ? 1 : 0;
  }
  if (r.state.kind == RequestState::kGranted) r.state.expires_in_ms = std::max<int64_t>(0, r.expires_at - clock_());
  return r.state;
}

void TrackerCore::Forget(int64_t request_id) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = requests_.find(request_id);
  if (it == requests_.end()) return;
  if (it->second.state.kind == RequestState::kGranted) EndLease(it->second, LeaseEnd::kReleased);
  lease_to_request_.erase(it->second.state.lease_id);
  requests_.erase(it);
  TickLocked();
  Changed();
}

Result<int64_t> TrackerCore::Renew(const std::string& lease_id) {
  std::lock_guard<std::mutex> lock(mu_);
  TickLocked();
  auto it = lease_to_request_.find(lease_id);
  if (it == lease_to_request_.end() || requests_[it->second].state.kind != RequestState::kGranted) {
    return Status::NotFound("lease '" + lease_id + "' is not active");
  }
  Request& r = requests_[it->second];
  r.expires_at = clock_() + r.lease_ms;
  return r.lease_ms;
}

Status TrackerCore::Release(const std::string& lease_id) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = lease_to_request_.find(lease_id);
  if (it == lease_to_request_.end() || requests_[it->second].state.kind != RequestState::kGranted) {
    return Status::NotFound("lease '" + lease_id + "' is not active");
  }
  EndLease(requests_[it->second], LeaseEnd::kReleased);
  TickLocked();
  Changed();
  return Status::OK();
}

void TrackerCore::EndLease(Request& r, LeaseEnd why) {
  auto s = servers_.find(r.server_id);
  if (s != servers_.end() && s->second.lease_request == r.id) s->second.lease_request = -1;
  r.state.kind = RequestState::kEnded;
  r.state.end = why;
}

void TrackerCore::DropServer(const std::string& id) {
  auto it = servers_.find(id);
  if (it == servers_.end()) return;
  if (it->second.lease_request >= 0) {
    auto r = requests_.find(it->second.lease_request);
    if (r != requests_.end()) EndLease(r->second, LeaseEnd::kServerLost);
  }
  servers_.erase(id);
}

void TrackerCore::Tick() {
  std::lock_guard<std::mutex> lock(mu_);
  TickLocked();
}

void TrackerCore::TickLocked() {
  const int64_t now = clock_();
  bool changed = false;
  // 1. Servers that missed their heartbeats.
  const int64_t silence = options_.heartbeat_interval_ms * options_.missed_heartbeats;
  std::vector<std::string> lost;
  for (const auto& [id, s] : servers_) {
    if (now - s.last_heartbeat > silence) lost.push_back(id);
  }
  for (const auto& id : lost) DropServer(id);
  changed = changed || !lost.empty();
  // 2. Leases not renewed in time; 3. queued requests past their deadline.
  for (auto& [id, r] : requests_) {
    if (r.state.kind == RequestState::kGranted && now >= r.expires_at) {
      EndLease(r, LeaseEnd::kExpired);
      changed = true;
    } else if (r.state.kind == RequestState::kQueued && now >= r.deadline) {
      r.state.kind = RequestState::kFailed;
      r.state.failure = Status::DeadlineExceeded("no '" + r.key + "' device became free within " +
                                                 std::to_string(r.deadline - r.enqueued) + " ms");
      changed = true;
    }
  }
  // 4. Free servers go to the queue heads of their key: higher priority first, FIFO within.
  std::vector<Request*> queued;
  for (auto& [id, r] : requests_) {
    if (r.state.kind == RequestState::kQueued) queued.push_back(&r);
  }
  std::sort(queued.begin(), queued.end(), [](const Request* a, const Request* b) {
    return a->priority != b->priority ? a->priority > b->priority : a->id < b->id;
  });
  for (Request* r : queued) {
    for (auto& [id, s] : servers_) {
      if (s.key != r->key || s.lease_request >= 0) continue;
      s.lease_request = r->id;
      r->server_id = id;
      r->expires_at = now + r->lease_ms;
      r->state.kind = RequestState::kGranted;
      r->state.lease_id = "lease-" + std::to_string(next_lease_++);
      r->state.server_id = id;
      r->state.server_address = s.address;
      r->state.device = s.device;
      r->state.expires_in_ms = r->lease_ms;
      lease_to_request_[r->state.lease_id] = r->id;
      changed = true;
      break;
    }
  }
  if (changed) Changed();
}

FarmStatus TrackerCore::GetStatus() {
  std::lock_guard<std::mutex> lock(mu_);
  TickLocked();
  FarmStatus st;
  const int64_t now = clock_();
  st.uptime_ms = now - started_;
  std::map<std::string, KeyInfo> keys;
  for (const auto& [id, s] : servers_) {
    ServerInfo info{id, s.key, s.address, s.device, s.lease_request >= 0, "", s.measurements_done, now - s.last_heartbeat};
    if (info.busy) info.lease_client = requests_[s.lease_request].client;
    st.servers.push_back(info);
    KeyInfo& k = keys[s.key];
    k.key = s.key;
    (info.busy ? k.busy : k.free)++;
  }
  for (const auto& [id, r] : requests_) {
    if (r.state.kind != RequestState::kQueued) continue;
    KeyInfo& k = keys[r.key];
    k.key = r.key;
    k.pending++;
  }
  for (auto& [key, k] : keys) st.keys.push_back(k);
  return st;
}

void TrackerCore::WaitForChange(int64_t timeout_ms) {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait_for(lock, std::chrono::milliseconds(timeout_ms));
}

}  // namespace tunefarm::tracker
