#include "tunefarm/rpc_server/measure_service.h"

#include <cstring>

namespace tunefarm::rpc_server {
namespace {

constexpr size_t kLeaseUsesKept = 256;

v1::MeasureError::Kind ToProto(OutcomeKind k) {
  switch (k) {
    case OutcomeKind::kOk: return v1::MeasureError::KIND_UNSPECIFIED;
    case OutcomeKind::kInstantiation: return v1::MeasureError::INSTANTIATION;
    case OutcomeKind::kCompile: return v1::MeasureError::COMPILE;
    case OutcomeKind::kRuntimeCrash: return v1::MeasureError::RUNTIME_CRASH;
    case OutcomeKind::kTimeout: return v1::MeasureError::TIMEOUT;
    case OutcomeKind::kWrongAnswer: return v1::MeasureError::WRONG_ANSWER;
    case OutcomeKind::kBadRequest: return v1::MeasureError::BAD_REQUEST;
  }
  return v1::MeasureError::RUNTIME_CRASH;
}

MeasureSpec SpecOf(const v1::KernelToMeasure& k, const v1::TimingParams& t, const ServerOptions& options) {
  MeasureSpec spec;
  spec.symbol = k.symbol();
  for (const auto& a : k.args()) spec.args.push_back(ArgSpec{{a.shape().begin(), a.shape().end()}, a.dtype(), a.role()});
  spec.timing.number = t.number();
  spec.timing.repeat = t.repeat();
  spec.timing.min_repeat_ms = t.min_repeat_ms();
  spec.timing.cooldown_ms = t.cooldown_ms();
  spec.timing.flush_cache = t.flush_cache();
  spec.timing.timeout_ms = t.timeout_ms();
  spec.timing.memory_limit_bytes = t.memory_limit_bytes() > 0 ? std::min(t.memory_limit_bytes(), options.memory_limit_bytes)
                                                               : options.memory_limit_bytes;
  spec.seed = k.seed();
  spec.threads = options.threads;
  spec.tolerance = k.tolerance() > 0 ? k.tolerance() : 1e-4f;
  if (options.cuda_ordinal >= 0 && k.has_launch()) {
    spec.gpu.enabled = true;
    spec.gpu.ordinal = options.cuda_ordinal;
    for (int d = 0; d < 3; ++d) {
      spec.gpu.grid[d] = d < k.launch().grid_size() ? k.launch().grid(d) : 0;
      spec.gpu.block[d] = d < k.launch().block_size() ? k.launch().block(d) : 0;
    }
  }
  const std::string& expected = k.expected_outputs();
  if (expected.size() % 4 == 0) {
    spec.expected_outputs.resize(expected.size() / 4);
    if (!expected.empty()) std::memcpy(spec.expected_outputs.data(), expected.data(), expected.size());
  }
  return spec;
}

}  // namespace

MeasureService::MeasureService(ServerOptions options, farm_net::Registrar* registrar)
    : options_(std::move(options)), registrar_(registrar) {
  if (options_.persistent_worker) worker_ = std::make_unique<MeasureWorker>(options_.child_command, options_.tmp_root);
}

int64_t MeasureService::SinceStartMs() const {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started_).count();
}

grpc::Status MeasureService::CheckLease(const std::string& lease_id) {
  if (lease_id.empty()) {
    ++refused_;
    return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION,
                        "no lease: a Measure call must carry the lease the tracker granted for this server");
  }
  std::string current = registrar_->lease_id();
  if (current == lease_id) return grpc::Status::OK;
  // Perhaps granted since our last heartbeat: ask the tracker.
  auto fresh = registrar_->RefreshLease();
  if (!fresh.ok()) {
    return grpc::Status(grpc::StatusCode::UNAVAILABLE,
                        "cannot confirm lease '" + lease_id + "' with the tracker: " + fresh.status().message());
  }
  if (*fresh == lease_id) return grpc::Status::OK;
  ++refused_;
  return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION,
                      "lease '" + lease_id + "' does not hold this server (the tracker says " +
                          (fresh->empty() ? std::string("no lease does") : "lease '" + *fresh + "' does") + ")");
}

void MeasureService::RecordBatch(const std::string& lease_id, int64_t start_ms, int64_t end_ms) {
  std::lock_guard<std::mutex> lock(state_mu_);
  if (lease_uses_.empty() || lease_uses_.back().lease_id() != lease_id) {
    v1::ServerStateResponse::LeaseUse use;
    use.set_lease_id(lease_id);
    use.set_first_batch_ms(start_ms);
    lease_uses_.push_back(use);
    if (lease_uses_.size() > kLeaseUsesKept) lease_uses_.pop_front();
  }
  auto& use = lease_uses_.back();
  use.set_batches(use.batches() + 1);
  use.set_last_batch_ms(end_ms);
}

grpc::Status MeasureService::Measure(grpc::ServerContext* ctx, const v1::MeasureRequest* req, v1::MeasureResponse* resp) {
  if (req->kernels_size() > 256) return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "a batch holds at most 256 kernels");
  const std::string& lease = req->lease_id();
  if (grpc::Status s = CheckLease(lease); !s.ok()) return s;
  std::lock_guard<std::mutex> device(device_mu_);
  // The lease may have ended while this call waited for the device.
  if (registrar_->lease_id() != lease) {
    ++refused_;
    return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION, "lease '" + lease + "' ended before its batch started");
  }
  const int64_t start_ms = SinceStartMs();
  grpc::Status result = grpc::Status::OK;
  for (int i = 0; i < req->kernels_size(); ++i) {
    if (ctx->IsCancelled()) {
      result = grpc::Status(grpc::StatusCode::CANCELLED, "the client went away");
      break;
    }
    if (registrar_->lease_id() != lease) {
      result = grpc::Status(grpc::StatusCode::ABORTED, "lease '" + lease + "' ended while its batch ran (" +
                                                           std::to_string(i) + " of " + std::to_string(req->kernels_size()) +
                                                           " kernels measured)");
      break;
    }
    const auto& k = req->kernels(i);
    const auto measure_start = std::chrono::steady_clock::now();
    MeasureOutcome o;
    if (k.expected_outputs().size() % 4 != 0) {
      o.kind = OutcomeKind::kBadRequest;
      o.message = "expected_outputs is not a whole number of float32 values";
    } else if (options_.cuda_ordinal >= 0 && !k.has_launch()) {
      o.kind = OutcomeKind::kBadRequest;
      o.message = "this server measures CUDA kernels: a kernel needs its launch (grid and block)";
    } else if (options_.cuda_ordinal < 0 && k.has_launch()) {
      o.kind = OutcomeKind::kBadRequest;
      o.message = "this server measures CPU kernels: a GPU launch was sent to it (lease a server of a CUDA key)";
    } else {
      const MeasureSpec spec = SpecOf(k, req->timing(), options_);
      o = worker_ ? worker_->Measure(k.library(), spec)
                  : MeasureIsolated(options_.child_command, options_.tmp_root, k.library(), spec);
    }
    if (observer_) {
      observer_(o.kind, std::chrono::duration<double>(std::chrono::steady_clock::now() - measure_start).count());
    }
    auto* r = resp->add_results();
    for (double c : o.costs_ms) r->add_costs_ms(c);
    if (o.kind != OutcomeKind::kOk) {
      r->mutable_error()->set_kind(ToProto(o.kind));
      r->mutable_error()->set_message(o.message);
      r->mutable_error()->set_signal(o.signal);
    }
    r->set_number(o.number);
    r->set_threads(options_.threads);
    r->set_run_ms(o.run_ms);
    ++done_;
  }
  RecordBatch(lease, start_ms, SinceStartMs());
  resp->set_server_id(registrar_->server_id());
  return result;
}

grpc::Status MeasureService::ServerState(grpc::ServerContext*, const v1::ServerStateRequest*, v1::ServerStateResponse* resp) {
  resp->set_server_id(registrar_->server_id());
  resp->set_lease_id(registrar_->lease_id());
  resp->set_measurements_done(done_.load());
  resp->set_refused_calls(refused_.load());
  resp->set_unauthenticated_calls(unauthenticated_ ? unauthenticated_() : 0);
  resp->set_registrations(registrar_->registrations());
  std::lock_guard<std::mutex> lock(state_mu_);
  for (const auto& use : lease_uses_) *resp->add_lease_uses() = use;
  return grpc::Status::OK;
}

}  // namespace tunefarm::rpc_server
