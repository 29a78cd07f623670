#include "tunefarm/rpc_server/measure_service.h"

#include "tunefarm/tracker/auth.h"

namespace tunefarm::rpc_server {
namespace {

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

}  // namespace

grpc::Status MeasureService::Measure(grpc::ServerContext* ctx, const v1::MeasureRequest* req, v1::MeasureResponse* resp) {
  grpc::Status auth = tracker::CheckToken(ctx, options_.token, "Measure");
  if (!auth.ok()) return auth;
  if (req->kernels_size() > 256) return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "a batch holds at most 256 kernels");
  std::lock_guard<std::mutex> device(device_mu_);
  for (const auto& k : req->kernels()) {
    MeasureSpec spec;
    spec.symbol = k.symbol();
    for (const auto& a : k.args()) spec.args.push_back(ArgSpec{{a.shape().begin(), a.shape().end()}, a.dtype(), a.role()});
    const auto& t = req->timing();
    spec.timing.number = t.number();
    spec.timing.repeat = t.repeat();
    spec.timing.min_repeat_ms = t.min_repeat_ms();
    spec.timing.cooldown_ms = t.cooldown_ms();
    spec.timing.flush_cache = t.flush_cache();
    spec.timing.timeout_ms = t.timeout_ms();
    spec.timing.memory_limit_bytes = t.memory_limit_bytes() > 0 ? std::min(t.memory_limit_bytes(), options_.memory_limit_bytes)
                                                                 : options_.memory_limit_bytes;
    spec.seed = k.seed();
    spec.threads = options_.threads;
    spec.tolerance = k.tolerance() > 0 ? k.tolerance() : 1e-4f;
    const std::string& expected = k.expected_outputs();
    if (expected.size() % 4 == 0) {
      spec.expected_outputs.resize(expected.size() / 4);
      if (!expected.empty()) std::memcpy(spec.expected_outputs.data(), expected.data(), expected.size());
    }
    MeasureOutcome o;
    if (expected.size() % 4 != 0) {
      o.kind = OutcomeKind::kBadRequest;
      o.message = "expected_outputs is not a whole number of float32 values";
    } else if (ctx->IsCancelled()) {
      return grpc::Status(grpc::StatusCode::CANCELLED, "the client went away");
    } else {
      o = MeasureIsolated(options_.child_command, options_.tmp_root, k.library(), spec);
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
  std::lock_guard<std::mutex> lock(id_mu_);
  resp->set_server_id(options_.server_id);
  return grpc::Status::OK;
}

}  // namespace tunefarm::rpc_server
