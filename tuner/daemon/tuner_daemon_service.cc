#include "tuner/daemon/tuner_daemon_service.h"

namespace tunefarm::tuner {
namespace {

grpc::Status ToGrpc(const Status& s) {
  grpc::StatusCode code = grpc::StatusCode::INTERNAL;
  switch (s.code()) {
    case StatusCode::kInvalidArgument: code = grpc::StatusCode::INVALID_ARGUMENT; break;
    case StatusCode::kNotFound: code = grpc::StatusCode::NOT_FOUND; break;
    case StatusCode::kFailedPrecondition: code = grpc::StatusCode::FAILED_PRECONDITION; break;
    default: break;
  }
  return grpc::Status(code, s.message());
}

}  // namespace

grpc::Status TunerDaemonService::SubmitJob(grpc::ServerContext* ctx, const v1::SubmitJobRequest* req,
                                           v1::SubmitJobResponse* resp) {
  if (auto s = tracker::CheckToken(ctx, token_, "SubmitJob"); !s.ok()) return s;
  auto job = jobs_->Submit(req->spec());
  if (!job.ok()) return ToGrpc(job.status());
  *resp->mutable_job() = *job;
  return grpc::Status::OK;
}

grpc::Status TunerDaemonService::ListJobs(grpc::ServerContext* ctx, const v1::ListJobsRequest*, v1::ListJobsResponse* resp) {
  if (auto s = tracker::CheckToken(ctx, token_, "ListJobs"); !s.ok()) return s;
  for (const auto& j : jobs_->List()) *resp->add_jobs() = j;
  return grpc::Status::OK;
}

grpc::Status TunerDaemonService::WatchJob(grpc::ServerContext* ctx, const v1::WatchJobRequest* req,
                                          grpc::ServerWriter<v1::JobEvent>* out) {
  if (auto s = tracker::CheckToken(ctx, token_, "WatchJob"); !s.ok()) return s;
  auto first = jobs_->Get(req->job_id());
  if (!first.ok()) return ToGrpc(first.status());
  v1::JobEvent event;
  *event.mutable_job() = *first;
  event.set_line(first->message());
  if (!out->Write(event)) return grpc::Status::CANCELLED;
  uint64_t version = 0;
  std::string state = first->state();
  // The first wait returns at once with the current version (0 is never a job's version after
  // it was stored), then each change is one event; the stream ends after a final state.
  while (!IsFinalJobState(state) && !ctx->IsCancelled()) {
    v1::TuningJob job;
    std::string line;
    auto changed = jobs_->WaitForChange(req->job_id(), &version, &job, &line, 500);
    if (!changed.ok()) return ToGrpc(changed.status());
    if (!*changed) continue;
    event.Clear();
    *event.mutable_job() = job;
    event.set_line(line);
    if (!out->Write(event)) return grpc::Status::CANCELLED;
    state = job.state();
  }
  return grpc::Status::OK;
}

grpc::Status TunerDaemonService::CancelJob(grpc::ServerContext* ctx, const v1::CancelJobRequest* req,
                                           v1::CancelJobResponse* resp) {
  if (auto s = tracker::CheckToken(ctx, token_, "CancelJob"); !s.ok()) return s;
  auto job = jobs_->Cancel(req->job_id());
  if (!job.ok()) return ToGrpc(job.status());
  *resp->mutable_job() = *job;
  return grpc::Status::OK;
}

}  // namespace tunefarm::tuner
