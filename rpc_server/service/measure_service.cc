#include "tunefarm/rpc_server/measure_service.h"

#include <cstring>

namespace tunefarm::rpc_server {
namespace {

constexpr size_t kLeaseUsesKept = 256;

// The request's kernel with this server's options: its threads and device, the memory limit at
// most the server's, the default tolerance.
MeasureSpec SpecOf(const v1::KernelToMeasure& k, const v1::TimingParams& t, const ServerOptions& options) {
  MeasureSpec spec = FromProto(k, t);
  spec.timing.memory_limit_bytes = t.memory_limit_bytes() > 0
                                       ? std::min(t.memory_limit_bytes(), options.memory_limit_bytes)
                                       : options.memory_limit_bytes;
  spec.threads = options.threads;
  if (spec.tolerance <= 0) spec.tolerance = 1e-4f;
  spec.gpu.enabled = options.cuda_ordinal >= 0 && k.has_launch();
  spec.gpu.ordinal = options.cuda_ordinal;
  return spec;
}

// A cubin runs only on the arch it was assembled for (sm_90a's on an sm_90 GPU too); for any other
// GPU the kernel's PTX is JIT-compiled as before.
bool UsesCubin(const v1::KernelToMeasure& k, const std::string& gpu_arch) {
  if (k.cubin().empty() || gpu_arch.empty()) return false;
  return k.cubin_arch() == gpu_arch || k.cubin_arch() == gpu_arch + "a";
}

}  // namespace

MeasureService::MeasureService(ServerOptions options, service::Registrar* registrar)
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
  MutexLock lock(&state_mu_);
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

grpc::Status MeasureService::Measure(grpc::ServerContext* ctx, const v1::MeasureRequest* req,
                                     v1::MeasureResponse* resp) {
  if (req->kernels_size() > 256)
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "a batch holds at most 256 kernels");
  const std::string& lease = req->lease_id();
  if (grpc::Status s = CheckLease(lease); !s.ok()) return s;
  MutexLock device(&device_mu_);
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
                                                           std::to_string(i) + " of " +
                                                           std::to_string(req->kernels_size()) + " kernels measured)");
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
      const std::string& library = UsesCubin(k, options_.cuda_arch) ? k.cubin() : k.library();
      o = worker_ ? worker_->Measure(library, spec)
                  : MeasureIsolated(options_.child_command, options_.tmp_root, library, spec);
    }
    if (observer_) {
      observer_(o.kind, std::chrono::duration<double>(std::chrono::steady_clock::now() - measure_start).count());
    }
    o.threads = options_.threads;
    OutcomeToResult(o, resp->add_results());
    ++done_;
  }
  RecordBatch(lease, start_ms, SinceStartMs());
  resp->set_server_id(registrar_->server_id());
  return result;
}

grpc::Status MeasureService::ServerState(grpc::ServerContext*, const v1::ServerStateRequest*,
                                         v1::ServerStateResponse* resp) {
  resp->set_server_id(registrar_->server_id());
  resp->set_lease_id(registrar_->lease_id());
  resp->set_measurements_done(done_.load());
  resp->set_refused_calls(refused_.load());
  resp->set_unauthenticated_calls(unauthenticated_ ? unauthenticated_() : 0);
  resp->set_registrations(registrar_->registrations());
  MutexLock lock(&state_mu_);
  for (const auto& use : lease_uses_) *resp->add_lease_uses() = use;
  return grpc::Status::OK;
}

}  // namespace tunefarm::rpc_server
