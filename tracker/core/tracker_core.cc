#include "tunefarm/tracker/tracker_core.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
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

// "lease-<epoch>-<n>" -> "<epoch>"; "" for ids of another shape.
std::string EpochOf(const std::string& lease_id) {
  const std::string prefix = "lease-";
  if (lease_id.rfind(prefix, 0) != 0) return "";
  const size_t dash = lease_id.find('-', prefix.size());
  return dash == std::string::npos ? "" : lease_id.substr(prefix.size(), dash - prefix.size());
}

}  // namespace

Clock SteadyClock() {
  return [] {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
  };
}

const char* LeaseEndName(LeaseEnd e) {
  switch (e) {
    case LeaseEnd::kNone:
      return "none";
    case LeaseEnd::kReleased:
      return "released";
    case LeaseEnd::kExpired:
      return "expired";
    case LeaseEnd::kServerLost:
      return "server lost";
  }
  return "none";
}

TrackerCore::TrackerCore(TrackerOptions options, Clock clock)
    : options_(std::move(options)), clock_(std::move(clock)), started_(clock_()) {
  // Lease ids differ across tracker restarts, so a stale id is never mistaken for a new lease, and
  // a lease reported by a server can be told apart: this tracker's, or a predecessor's.
  std::random_device rd;
  char epoch[17];
  std::snprintf(epoch, sizeof(epoch), "%08x%08x", rd(), rd());
  epoch_ = epoch;
}

void TrackerCore::Publish() {
  {
    MutexLock lock(&mu_);
    if (!changed_) return;
    changed_ = false;
  }
  RecursiveMutexLock lock(&subscribers_mu_);
  std::vector<int64_t> ids;
  for (const auto& [id, f] : subscribers_) ids.push_back(id);
  for (int64_t id : ids) {
    auto it = subscribers_.find(id);
    if (it != subscribers_.end()) it->second();
  }
}

int64_t TrackerCore::Subscribe(std::function<void()> on_change) {
  RecursiveMutexLock lock(&subscribers_mu_);
  subscribers_[next_subscriber_] = std::move(on_change);
  return next_subscriber_++;
}

void TrackerCore::Unsubscribe(int64_t subscription) {
  RecursiveMutexLock lock(&subscribers_mu_);
  subscribers_.erase(subscription);
}

LeaseInfo TrackerCore::LeaseOf(const Server& s) {
  LeaseInfo info;
  if (s.lease_request < 0) return info;
  const Request& r = requests_[s.lease_request];
  info.lease_id = r.state.lease_id;
  info.client = r.client;
  info.lease_ms = r.lease_ms;
  return info;
}

bool TrackerCore::AdoptReportedLease(Server& server, const LeaseInfo& reported, const std::string& previous_id) {
  auto known = lease_to_request_.find(reported.lease_id);
  if (known != lease_to_request_.end()) {
    // Ours: keep it only while it holds and belongs to this server's previous registration.
    Request& r = requests_[known->second];
    auto old = servers_.find(r.server_id);
    const bool same_server =
        old != servers_.end() && (old->first == previous_id || old->second.address == server.address);
    if (r.state.kind != RequestState::kGranted || !same_server) return false;
    old->second.lease_request = -1;  // moved, not ended: the old entry is dropped next
    server.lease_request = r.id;
    r.server_id = server.id;
    r.state.server_id = server.id;
    return true;
  }
  if (EpochOf(reported.lease_id).empty() || EpochOf(reported.lease_id) == epoch_) return false;  // ours, and over
  if (released_early_.count(reported.lease_id)) return false;  // its holder gave it back first
  // A predecessor's lease, in use when it stopped: restore it so the server stays with its holder.
  Request r;
  r.id = next_request_++;
  r.key = server.key;
  r.client = reported.client.substr(0, 256);
  r.lease_ms = std::clamp<int64_t>(reported.lease_ms, 1000, 86400000);
  r.enqueued = clock_();
  r.server_id = server.id;
  r.expires_at = r.enqueued + r.lease_ms;
  r.restored = true;
  r.state.kind = RequestState::kGranted;
  r.state.lease_id = reported.lease_id;
  r.state.server_id = server.id;
  r.state.server_address = server.address;
  r.state.device = server.device;
  requests_[r.id] = r;
  lease_to_request_[reported.lease_id] = r.id;
  server.lease_request = r.id;
  ++leases_granted_;
  Log("lease " + reported.lease_id + " restored on " + server.id + " for client '" + r.client +
      "' (reported by the server after a tracker restart)");
  return true;
}

Result<Registration> TrackerCore::Register(const std::string& key, const std::string& address, const Device& device,
                                           const std::string& previous_server_id, const LeaseInfo& reported) {
  if (!ValidKey(key))
    return Status::InvalidArgument("device key '" + key + "' must be 1-64 characters of [A-Za-z0-9._-]");
  if (address.empty() || address.size() > 256) return Status::InvalidArgument("server address must be 1-256 bytes");
  Registration out;
  {
    MutexLock lock(&mu_);
    Server s;
    // The epoch's first 8 hex digits: a restarted tracker numbers its servers from 1 again, and a
    // server still heartbeating with its old id must be told "unknown", not taken for another.
    s.id = "srv" + std::to_string(next_server_++) + "-" + epoch_.substr(0, 8);
    s.key = key;
    s.address = address;
    s.device = device;
    s.last_heartbeat = clock_();
    const bool kept = !reported.lease_id.empty() && AdoptReportedLease(s, reported, previous_server_id);
    // A server that re-registers (it lost its heartbeat, or restarted) replaces its old entry.
    if (!previous_server_id.empty() && servers_.count(previous_server_id))
      DropServer(previous_server_id, "re-registered as " + s.id);
    for (auto it = servers_.begin(); it != servers_.end();) {
      auto next = std::next(it);
      if (it->second.address == address) DropServer(it->first, "re-registered as " + s.id);
      it = next;
    }
    servers_[s.id] = s;
    Log("server " + s.id + " joined: key '" + key + "' at " + address + " (" + device.arch + ", " +
        std::to_string(device.threads) + " threads)" +
        (reported.lease_id.empty() ? ""
         : kept                    ? ", serving lease " + reported.lease_id
                                   : ", its lease " + reported.lease_id + " had ended"));
    out.server_id = s.id;
    out.lease = LeaseOf(servers_[s.id]);
    TickLocked();
    Changed();
  }
  Publish();
  return out;
}

HeartbeatReply TrackerCore::Heartbeat(const std::string& server_id, int64_t measurements_done) {
  HeartbeatReply reply;
  {
    MutexLock lock(&mu_);
    TickLocked();
    auto it = servers_.find(server_id);
    if (it != servers_.end()) {
      it->second.last_heartbeat = clock_();
      it->second.measurements_done = measurements_done;
      reply.known = true;
      reply.lease = LeaseOf(it->second);
    }
  }
  Publish();
  return reply;
}

Result<int64_t> TrackerCore::RequestLease(const std::string& key, int priority, int64_t deadline_ms, int64_t lease_ms,
                                          const std::string& client) {
  if (!ValidKey(key))
    return Status::InvalidArgument("device key '" + key + "' must be 1-64 characters of [A-Za-z0-9._-]");
  if (priority < -1000 || priority > 1000) return Status::InvalidArgument("priority must be in [-1000, 1000]");
  if (deadline_ms < 1 || deadline_ms > 86400000) return Status::InvalidArgument("deadline_ms must be in [1, 86400000]");
  if (lease_ms < 1000 || lease_ms > 86400000) return Status::InvalidArgument("lease_ms must be in [1000, 86400000]");
  if (client.size() > 256) return Status::InvalidArgument("client name longer than 256 bytes");
  int64_t id;
  {
    MutexLock lock(&mu_);
    TickLocked();
    bool any = false;
    for (const auto& [sid, s] : servers_) any = any || s.key == key;
    if (!any) return Status::NotFound("no server is registered under key '" + key + "'");
    Request r;
    r.id = id = next_request_++;
    r.key = key;
    r.client = client;
    r.priority = priority;
    r.enqueued = clock_();
    r.deadline = r.enqueued + deadline_ms;
    r.lease_ms = lease_ms;
    requests_[r.id] = r;
    TickLocked();
    Changed();
  }
  Publish();
  return id;
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
  RequestState out;
  {
    MutexLock lock(&mu_);
    TickLocked();
    auto it = requests_.find(request_id);
    if (it == requests_.end()) {
      out.kind = RequestState::kFailed;
      out.failure = Status::NotFound("unknown lease request " + std::to_string(request_id));
      return out;
    }
    Request& r = it->second;
    if (r.state.kind == RequestState::kQueued) {
      r.state.position = QueuePosition(r);
      r.state.servers = 0;
      for (const auto& [id, s] : servers_) r.state.servers += s.key == r.key ? 1 : 0;
    }
    if (r.state.kind == RequestState::kGranted) r.state.expires_in_ms = std::max<int64_t>(0, r.expires_at - clock_());
    out = r.state;
  }
  // No Publish here: Poll is what the subscribers themselves call; a change its tick found is
  // published by the next mutation or Tick().
  return out;
}

void TrackerCore::Forget(int64_t request_id) {
  {
    MutexLock lock(&mu_);
    auto it = requests_.find(request_id);
    if (it == requests_.end()) return;
    if (it->second.state.kind == RequestState::kGranted) EndLease(it->second, LeaseEnd::kReleased);
    lease_to_request_.erase(it->second.state.lease_id);
    requests_.erase(it);
    TickLocked();
    Changed();
  }
  Publish();
}

Result<int64_t> TrackerCore::Renew(const std::string& lease_id) {
  MutexLock lock(&mu_);
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
  {
    MutexLock lock(&mu_);
    auto it = lease_to_request_.find(lease_id);
    if (it == lease_to_request_.end() || requests_[it->second].state.kind != RequestState::kGranted) {
      // A predecessor's lease released before its server re-registered: never restore it.
      const std::string epoch = EpochOf(lease_id);
      if (it == lease_to_request_.end() && !epoch.empty() && epoch != epoch_ && released_early_.size() < 100000) {
        released_early_.insert(lease_id);
      }
      return Status::NotFound("lease '" + lease_id + "' is not active");
    }
    EndLease(requests_[it->second], LeaseEnd::kReleased);
    TickLocked();
    Changed();
  }
  Publish();
  return Status::OK();
}

void TrackerCore::EndLease(Request& r, LeaseEnd why) {
  auto s = servers_.find(r.server_id);
  if (s != servers_.end() && s->second.lease_request == r.id) s->second.lease_request = -1;
  r.state.kind = RequestState::kEnded;
  r.state.end = why;
  if (why == LeaseEnd::kExpired) ++leases_expired_;
  Log("lease " + r.state.lease_id + " of client '" + r.client + "' on " + r.server_id + " ended: " + LeaseEndName(why) +
      (s != servers_.end() && why != LeaseEnd::kServerLost ? "; " + r.server_id + " is free" : ""));
}

void TrackerCore::DropServer(const std::string& id, const std::string& why) {
  auto it = servers_.find(id);
  if (it == servers_.end()) return;
  Log("server " + id + " (key '" + it->second.key + "' at " + it->second.address + ") lost: " + why);
  if (it->second.lease_request >= 0) {
    auto r = requests_.find(it->second.lease_request);
    if (r != requests_.end()) EndLease(r->second, LeaseEnd::kServerLost);
  }
  servers_.erase(id);
}

void TrackerCore::Tick() {
  {
    MutexLock lock(&mu_);
    TickLocked();
  }
  Publish();
}

void TrackerCore::TickLocked() {
  const int64_t now = clock_();
  bool changed = false;
  // 1. Servers that missed their heartbeats.
  const int64_t silence = options_.heartbeat_interval_ms * options_.missed_heartbeats;
  std::vector<std::pair<std::string, int64_t>> lost;
  for (const auto& [id, s] : servers_) {
    if (now - s.last_heartbeat > silence) lost.emplace_back(id, now - s.last_heartbeat);
  }
  for (const auto& [id, quiet_ms] : lost) {
    DropServer(id, "no heartbeat for " + std::to_string(quiet_ms) + " ms");
    ++servers_lost_;
  }
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
      r->state.lease_id = "lease-" + epoch_ + "-" + std::to_string(next_lease_++);
      r->state.server_id = id;
      r->state.server_address = s.address;
      r->state.device = s.device;
      r->state.expires_in_ms = r->lease_ms;
      lease_to_request_[r->state.lease_id] = r->id;
      ++leases_granted_;
      if (options_.on_grant) options_.on_grant(s.key, now - r->enqueued);
      Log("lease " + r->state.lease_id + " granted: " + id + " (key '" + s.key + "') to client '" + r->client +
          "' after " + std::to_string(now - r->enqueued) + " ms in the queue");
      changed = true;
      break;
    }
  }
  if (changed) Changed();
}

FarmStatus TrackerCore::GetStatus() {
  MutexLock lock(&mu_);
  TickLocked();
  FarmStatus st;
  const int64_t now = clock_();
  st.uptime_ms = now - started_;
  st.leases_granted = leases_granted_;
  st.leases_expired = leases_expired_;
  st.servers_lost = servers_lost_;
  std::map<std::string, KeyInfo> keys;
  for (const auto& [id, s] : servers_) {
    ServerInfo info{
        id, s.key, s.address, s.device, s.lease_request >= 0, "", "", s.measurements_done, now - s.last_heartbeat};
    if (info.busy) {
      info.lease_client = requests_[s.lease_request].client;
      info.lease_id = requests_[s.lease_request].state.lease_id;
    }
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
  MutexLock lock(&mu_);
  cv_.WaitFor(&mu_, std::chrono::milliseconds(timeout_ms));
}

}  // namespace tunefarm::tracker
