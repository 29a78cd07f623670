#include "tunefarm/rpc_server/measure_client.h"

#include <chrono>
#include <cstring>
#include <thread>

#include "tunefarm/tracker/auth.h"
#include "tunefarm/v1/measure.grpc.pb.h"
#include "tunefarm/v1/tracker.grpc.pb.h"

namespace tunefarm::rpc_server {
namespace {

using SteadyClock = std::chrono::steady_clock;

int64_t MsLeft(SteadyClock::time_point deadline) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(deadline - SteadyClock::now()).count();
}

OutcomeKind FromProto(v1::MeasureError::Kind k) {
  switch (k) {
    case v1::MeasureError::INSTANTIATION: return OutcomeKind::kInstantiation;
    case v1::MeasureError::COMPILE: return OutcomeKind::kCompile;
    case v1::MeasureError::TIMEOUT: return OutcomeKind::kTimeout;
    case v1::MeasureError::WRONG_ANSWER: return OutcomeKind::kWrongAnswer;
    case v1::MeasureError::BAD_REQUEST: return OutcomeKind::kBadRequest;
    default: return OutcomeKind::kRuntimeCrash;
  }
}

}  // namespace

// The lease is the open RequestLease stream: closing it (or the client dying) releases the server.
struct MeasureClient::Lease {
  grpc::ClientContext ctx;
  std::unique_ptr<grpc::ClientReader<v1::LeaseUpdate>> stream;
  v1::LeaseGranted grant;
  std::unique_ptr<v1::Measure::Stub> server;
  ~Lease() { ctx.TryCancel(); }
};

MeasureClient::MeasureClient(MeasureClientOptions options) : options_(std::move(options)) {}

MeasureClient::~MeasureClient() { Release(); }

void MeasureClient::Release() { lease_.reset(); }

Status MeasureClient::AcquireLease(int64_t deadline_ms) {
  auto tracker = v1::Tracker::NewStub(tracker::FarmChannel(options_.tracker, options_.tls));
  auto lease = std::make_unique<Lease>();
  tracker::AttachToken(&lease->ctx, options_.token);
  v1::LeaseRequest req;
  req.set_key(options_.key);
  req.set_priority(options_.priority);
  req.set_deadline_ms(std::max<int64_t>(1, deadline_ms));
  req.set_lease_ms(options_.lease_ms);
  req.set_client(options_.client_name);
  lease->stream = tracker->RequestLease(&lease->ctx, req);
  v1::LeaseUpdate update;
  while (lease->stream->Read(&update)) {
    if (!update.has_granted()) continue;  // queued: our position changed
    lease->grant = update.granted();
    lease->server = v1::Measure::NewStub(tracker::FarmChannel(lease->grant.server_address(), options_.tls));
    lease_ = std::move(lease);
    return Status::OK();
  }
  grpc::Status s = lease->stream->Finish();
  if (s.error_code() == grpc::StatusCode::NOT_FOUND) return Status::NotFound(s.error_message());
  if (s.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED) return Status::DeadlineExceeded(s.error_message());
  return Status::IOError("tracker " + options_.tracker + ": " + s.error_message());
}

Result<std::vector<MeasureOutcome>> MeasureClient::Measure(const std::vector<MeasureInput>& batch, int64_t deadline_ms) {
  const auto deadline = SteadyClock::now() + std::chrono::milliseconds(deadline_ms);
  v1::MeasureRequest req;
  for (const auto& in : batch) {
    auto* k = req.add_kernels();
    k->set_library(in.library);
    k->set_symbol(in.spec.symbol);
    for (const auto& a : in.spec.args) {
      auto* arg = k->add_args();
      for (int64_t d : a.shape) arg->add_shape(d);
      arg->set_dtype(a.dtype);
      arg->set_role(a.role);
    }
    k->set_seed(in.spec.seed);
    k->set_expected_outputs(std::string(reinterpret_cast<const char*>(in.spec.expected_outputs.data()),
                                        in.spec.expected_outputs.size() * 4));
    k->set_tolerance(in.spec.tolerance);
  }
  if (!batch.empty()) {
    const TimingParams& t = batch[0].spec.timing;
    auto* tp = req.mutable_timing();
    tp->set_number(t.number);
    tp->set_repeat(t.repeat);
    tp->set_min_repeat_ms(t.min_repeat_ms);
    tp->set_cooldown_ms(t.cooldown_ms);
    tp->set_flush_cache(t.flush_cache);
    tp->set_timeout_ms(t.timeout_ms);
    tp->set_memory_limit_bytes(t.memory_limit_bytes);
  }
  attempts_ = 0;
  Status last = Status::DeadlineExceeded("no server measured the batch within " + std::to_string(deadline_ms) + " ms");
  while (MsLeft(deadline) > 0) {
    if (!lease_) {
      Status s = AcquireLease(MsLeft(deadline));
      if (!s.ok()) return s;
      if (failed_servers_.count(lease_->grant.server_id())) {
        // The tracker has not dropped a server that just failed us yet: give it back, ask again.
        lease_.reset();
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        continue;
      }
    }
    ++attempts_;
    req.set_lease_id(lease_->grant.lease_id());
    grpc::ClientContext ctx;
    tracker::AttachToken(&ctx, options_.token);
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(std::max<int64_t>(1, MsLeft(deadline))));
    v1::MeasureResponse resp;
    grpc::Status s = lease_->server->Measure(&ctx, req, &resp);
    if (s.ok() && resp.results_size() == int(batch.size())) {
      server_id_ = lease_->grant.server_id();
      std::vector<MeasureOutcome> out;
      for (const auto& r : resp.results()) {
        MeasureOutcome o;
        o.costs_ms.assign(r.costs_ms().begin(), r.costs_ms().end());
        o.number = r.number();
        o.threads = r.threads();
        o.run_ms = r.run_ms();
        if (r.has_error()) {
          o.kind = FromProto(r.error().kind());
          o.message = r.error().message();
          o.signal = r.error().signal();
        }
        out.push_back(std::move(o));
      }
      return out;
    }
    if (s.error_code() == grpc::StatusCode::UNAUTHENTICATED || s.error_code() == grpc::StatusCode::INVALID_ARGUMENT) {
      return Status::InvalidArgument("server " + lease_->grant.server_address() + " refused the batch: " + s.error_message());
    }
    // The server failed (died, unreachable, overloaded): never again for this client; retry elsewhere.
    last = Status::IOError("server " + lease_->grant.server_address() + " failed: " + s.error_message());
    failed_servers_.insert(lease_->grant.server_id());
    lease_.reset();
  }
  return last;
}

}  // namespace tunefarm::rpc_server
