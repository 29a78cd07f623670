#include "tunefarm/rpc_server/measure_client.h"

#include <chrono>
#include <cstring>
#include <thread>

#include "tunefarm/runtime/mutex.h"
#include "tunefarm/service/status_grpc.h"
#include "tunefarm/v1/measure.grpc.pb.h"
#include "tunefarm/v1/tracker.grpc.pb.h"

namespace tunefarm::rpc_server {
namespace {

using SteadyClock = std::chrono::steady_clock;

int64_t MsLeft(SteadyClock::time_point deadline) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(deadline - SteadyClock::now()).count();
}

std::chrono::system_clock::time_point In(int64_t ms) {
  return std::chrono::system_clock::now() + std::chrono::milliseconds(std::max<int64_t>(1, ms));
}

v1::MeasureRequest ToRequest(const std::vector<MeasureInput>& batch) {
  v1::MeasureRequest req;
  for (const auto& in : batch) {
    auto* k = req.add_kernels();
    ToProto(in.spec, k);
    k->set_library(in.library);
    if (in.spec.gpu.enabled && !in.cubin.empty()) {
      k->set_cubin(in.cubin);
      k->set_cubin_arch(in.cubin_arch);
    }
  }
  // One timing per request: the batch's kernels share their task's.
  if (!batch.empty()) ToProto(batch[0].spec.timing, req.mutable_timing());
  return req;
}

}  // namespace

bool MeasureClient::ServerOnThisMachine() const {
  if (server_address_.empty()) return true;
  std::string host = server_address_;
  if (host.rfind("ipv4:", 0) == 0) host = host.substr(5);
  if (host.rfind("ipv6:", 0) == 0) host = host.substr(5);
  if (!host.empty() && host[0] == '[') {
    host = host.substr(1, host.find(']') == std::string::npos ? std::string::npos : host.find(']') - 1);
  } else if (host.find(':') == host.rfind(':')) {  // HOST:PORT, not a bare IPv6 address
    host = host.substr(0, host.find(':'));
  }
  return host == "localhost" || host == "::1" || host.rfind("127.", 0) == 0;
}

// A held lease: the open RequestLease stream (closing it releases the server) watched by a reader
// thread, and a renewer thread. Either marks the lease lost and cancels the call in flight.
class MeasureClient::Lease {
 public:
  Lease(const MeasureClientOptions& options, v1::LeaseGranted grant, std::unique_ptr<v1::Tracker::Stub> tracker,
        std::unique_ptr<grpc::ClientContext> stream_ctx, std::unique_ptr<grpc::ClientReader<v1::LeaseUpdate>> stream)
      : options_(options),
        grant_(std::move(grant)),
        server_(v1::Measure::NewStub(service::FarmChannel(grant_.server_address(), options.tls))),
        tracker_(std::move(tracker)),
        stream_ctx_(std::move(stream_ctx)),
        stream_(std::move(stream)) {
    reader_ = std::thread([this] { ReadStream(); });
    renewer_ = std::thread([this] { RenewLoop(); });
  }

  ~Lease() {
    {
      MutexLock lock(&mu_);
      stopping_ = true;
    }
    cv_.SignalAll();
    if (!lost()) {  // give it back explicitly: a restored lease has no stream to close
      grpc::ClientContext ctx;
      service::AttachToken(&ctx, options_.token);
      ctx.set_deadline(In(2000));
      ctx.set_wait_for_ready(true);  // a tracker that just restarted: wait for the connection
      v1::ReleaseLeaseRequest req;
      req.set_lease_id(grant_.lease_id());
      v1::ReleaseLeaseResponse resp;
      tracker_->ReleaseLease(&ctx, req, &resp);
    }
    stream_ctx_->TryCancel();
    reader_.join();
    renewer_.join();
  }

  const v1::LeaseGranted& grant() const { return grant_; }
  v1::Measure::Stub* server() { return server_.get(); }

  bool lost() const EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    return lost_;
  }
  std::string lost_reason() const EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    return lost_reason_;
  }
  bool server_lost() const EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    return server_lost_;
  }
  // The call to cancel when the lease is lost; false when it already is.
  bool BeginCall(grpc::ClientContext* ctx) EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    if (lost_) return false;
    in_flight_ = ctx;
    return true;
  }
  void EndCall() EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    in_flight_ = nullptr;
  }

 private:
  void MarkLost(const std::string& reason, bool server_lost) EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    if (lost_) return;
    lost_ = true;
    server_lost_ = server_lost;
    lost_reason_ = reason;
    if (in_flight_) in_flight_->TryCancel();
    cv_.SignalAll();
  }

  void ReadStream() EXCLUDES(mu_) {
    v1::LeaseUpdate update;
    while (stream_->Read(&update)) {
      if (!update.has_ended()) continue;
      const auto reason = update.ended().reason();
      MarkLost("the tracker ended lease " + grant_.lease_id() + ": " + update.ended().message(),
               reason == v1::LeaseEnded::SERVER_LOST);
    }
    stream_->Finish();
    MutexLock lock(&mu_);
    if (!stopping_ && !lost_) {
      stream_broken_ = true;  // the tracker went away; the lease lives on with its server
      cv_.SignalAll();
    }
  }

  void RenewLoop() EXCLUDES(mu_) {
    const int64_t period = std::max<int64_t>(200, options_.lease_ms / 3);
    // How long "unknown lease" is tolerated after the tracker went away: servers re-register
    // (and report their lease) within a few seconds of a restart.
    constexpr int64_t kRestoreGraceMs = 8000;
    SteadyClock::time_point unknown_since{};
    bool unknown = false;
    MutexLock lock(&mu_);
    while (!stopping_ && !lost_) {
      const int64_t wait = stream_broken_ ? std::min<int64_t>(period, 500) : period;
      cv_.WaitFor(&mu_, std::chrono::milliseconds(wait));
      if (stopping_ || lost_) break;
      const bool broken = stream_broken_;
      lock.Unlock();
      grpc::ClientContext ctx;
      service::AttachToken(&ctx, options_.token);
      ctx.set_deadline(In(2000));
      v1::RenewLeaseRequest req;
      req.set_lease_id(grant_.lease_id());
      v1::RenewLeaseResponse resp;
      grpc::Status s = tracker_->RenewLease(&ctx, req, &resp);
      if (s.ok()) {
        unknown = false;
      } else if (s.error_code() == grpc::StatusCode::NOT_FOUND) {
        if (!broken) {
          MarkLost("the tracker no longer knows lease " + grant_.lease_id(), false);
        } else {
          if (!unknown) unknown_since = SteadyClock::now();
          unknown = true;
          if (SteadyClock::now() - unknown_since > std::chrono::milliseconds(kRestoreGraceMs)) {
            MarkLost("the restarted tracker did not restore lease " + grant_.lease_id(), false);
          }
        }
      }  // Unreachable: keep the lease and try again.
      lock.Lock();
    }
  }

  const MeasureClientOptions& options_;
  const v1::LeaseGranted grant_;
  std::unique_ptr<v1::Measure::Stub> server_;
  std::unique_ptr<v1::Tracker::Stub> tracker_;
  std::unique_ptr<grpc::ClientContext> stream_ctx_;
  std::unique_ptr<grpc::ClientReader<v1::LeaseUpdate>> stream_;
  mutable Mutex mu_;
  CondVar cv_;
  bool stopping_ GUARDED_BY(mu_) = false;
  bool lost_ GUARDED_BY(mu_) = false;
  bool server_lost_ GUARDED_BY(mu_) = false;
  bool stream_broken_ GUARDED_BY(mu_) = false;
  std::string lost_reason_ GUARDED_BY(mu_);
  grpc::ClientContext* in_flight_ GUARDED_BY(mu_) = nullptr;
  std::thread reader_, renewer_;
};

MeasureClient::MeasureClient(MeasureClientOptions options) : options_(std::move(options)) {}

MeasureClient::~MeasureClient() { Release(); }

void MeasureClient::Release() { lease_.reset(); }

void MeasureClient::Log(const std::string& line) const {
  if (options_.log) options_.log(line);
}

int64_t MeasureClient::CallBudgetMs(const std::vector<MeasureInput>& batch) {
  int64_t ms = 2000;
  for (const auto& in : batch) ms += int64_t(in.spec.timing.timeout_ms) + 1000;
  return ms;
}

Status MeasureClient::AcquireLease(int64_t deadline_ms) {
  const auto deadline = SteadyClock::now() + std::chrono::milliseconds(deadline_ms);
  int64_t backoff_ms = 100;
  bool tracker_was_down = false;
  Status last =
      Status::DeadlineExceeded("no '" + options_.key + "' lease within " + std::to_string(deadline_ms) + " ms");
  while (MsLeft(deadline) > 0) {
    auto tracker = v1::Tracker::NewStub(service::FarmChannel(options_.tracker, options_.tls));
    auto ctx = std::make_unique<grpc::ClientContext>();
    service::AttachToken(ctx.get(), options_.token);
    v1::LeaseRequest req;
    req.set_key(options_.key);
    req.set_priority(options_.priority);
    req.set_deadline_ms(std::max<int64_t>(1, MsLeft(deadline)));
    req.set_lease_ms(options_.lease_ms);
    req.set_client(options_.client_name);
    auto stream = tracker->RequestLease(ctx.get(), req);
    v1::LeaseUpdate update;
    while (stream->Read(&update)) {
      if (!update.has_granted()) continue;  // queued: our position changed
      lease_ =
          std::make_unique<Lease>(options_, update.granted(), std::move(tracker), std::move(ctx), std::move(stream));
      leased_before_ = true;
      Log("leased " + update.granted().server_id() + " at " + update.granted().server_address() + " (" +
          update.granted().lease_id() + ")");
      return Status::OK();
    }
    const Status s = service::FromGrpcStatus(stream->Finish());
    // "No server under the key" right after the tracker came back, or for a key we leased before,
    // is servers not re-registered yet.
    tracker_was_down = tracker_was_down || s.code() == StatusCode::kUnavailable;
    const bool retry = s.code() == StatusCode::kUnavailable ||
                       (s.code() == StatusCode::kNotFound && (leased_before_ || tracker_was_down));
    if (!retry) return s.code() == StatusCode::kUnavailable ? s.WithContext("tracker " + options_.tracker) : s;
    last = s.WithContext("tracker " + options_.tracker);
    Log("cannot lease a '" + options_.key + "' server yet (" + s.message() + "); retrying in " +
        std::to_string(backoff_ms) + " ms");
    std::this_thread::sleep_for(
        std::chrono::milliseconds(std::min(backoff_ms, std::max<int64_t>(1, MsLeft(deadline)))));
    backoff_ms = std::min<int64_t>(backoff_ms * 2, 2000);
  }
  return last;
}

Result<std::vector<MeasureOutcome>> MeasureClient::Measure(const std::vector<MeasureInput>& batch,
                                                           int64_t deadline_ms) {
  const auto deadline = SteadyClock::now() + std::chrono::milliseconds(deadline_ms);
  v1::MeasureRequest req = ToRequest(batch);
  const int64_t call_budget_ms = CallBudgetMs(batch);
  attempts_ = 0;
  Status last = Status::DeadlineExceeded("no server measured the batch within " + std::to_string(deadline_ms) + " ms");
  while (MsLeft(deadline) > 0) {
    if (lease_ && lease_->lost()) {
      Log(lease_->lost_reason() + "; measuring elsewhere");
      if (lease_->server_lost()) failed_servers_.insert(lease_->grant().server_id());
      lease_.reset();
    }
    if (!lease_) {
      TUNEFARM_RETURN_IF_ERROR(AcquireLease(MsLeft(deadline)));
      if (failed_servers_.count(lease_->grant().server_id())) {
        // The tracker has not dropped a server that just failed us yet: give it back, ask again.
        lease_.reset();
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        continue;
      }
    }
    ++attempts_;
    req.set_lease_id(lease_->grant().lease_id());
    grpc::ClientContext ctx;
    service::AttachToken(&ctx, options_.token);
    ctx.set_deadline(In(std::min(MsLeft(deadline), call_budget_ms)));
    if (!lease_->BeginCall(&ctx)) continue;  // lost meanwhile
    v1::MeasureResponse resp;
    grpc::Status s = lease_->server()->Measure(&ctx, req, &resp);
    lease_->EndCall();
    const std::string address = lease_->grant().server_address();
    if (s.ok() && resp.results_size() == int(batch.size())) {
      server_id_ = lease_->grant().server_id();
      lease_id_ = lease_->grant().lease_id();
      server_address_ = lease_->grant().server_address();
      std::vector<MeasureOutcome> out;
      for (const auto& r : resp.results()) {
        Result<MeasureOutcome> o = OutcomeFromResult(r);
        if (!o.ok()) {
          // The server's answer, not the kernel, is broken: a failure of the machine (retried when
          // conditions change), never a time.
          MeasureOutcome broken;
          broken.kind = OutcomeKind::kRuntimeCrash;
          broken.message = "server " + address + " sent a " + o.status().message();
          out.push_back(std::move(broken));
          continue;
        }
        out.push_back(std::move(*o));
      }
      return out;
    }
    if (lease_->lost()) {
      last = Status::IOError(lease_->lost_reason());
      continue;  // handled at the top of the loop
    }
    switch (s.error_code()) {
      case grpc::StatusCode::UNAUTHENTICATED:
      case grpc::StatusCode::INVALID_ARGUMENT:
      case grpc::StatusCode::RESOURCE_EXHAUSTED:
        return Status::InvalidArgument("server " + address + " refused the batch: " + s.error_message());
      case grpc::StatusCode::FAILED_PRECONDITION:
      case grpc::StatusCode::ABORTED:
        // The server does not (or no longer) serve our lease: lease again; the server is fine.
        last = Status::FailedPrecondition("server " + address + ": " + s.error_message());
        Log(last.message() + "; leasing again");
        lease_.reset();
        break;
      default:
        // The server failed (died, unreachable, frozen past the call's budget): never again for
        // this client; retry elsewhere.
        last = Status::IOError("server " + address + " failed: " + s.error_message());
        Log(last.message() + "; measuring elsewhere");
        failed_servers_.insert(lease_->grant().server_id());
        lease_.reset();
    }
  }
  return last;
}

}  // namespace tunefarm::rpc_server
