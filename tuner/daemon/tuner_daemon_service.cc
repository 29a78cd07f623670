#include "tuner/daemon/tuner_daemon_service.h"

#include "tunefarm/farm_net/status_grpc.h"

namespace tunefarm::tuner {
using farm_net::ToGrpcStatus;

grpc::Status TunerDaemonService::SubmitJob(grpc::ServerContext*, const v1::SubmitJobRequest* req,
                                           v1::SubmitJobResponse* resp) {
  auto job = jobs_->Submit(req->spec());
  if (!job.ok()) return ToGrpcStatus(job.status());
  *resp->mutable_job() = *job;
  return grpc::Status::OK;
}

grpc::Status TunerDaemonService::ListJobs(grpc::ServerContext*, const v1::ListJobsRequest*, v1::ListJobsResponse* resp) {
  for (const auto& j : jobs_->List()) *resp->add_jobs() = j;
  return grpc::Status::OK;
}

grpc::Status TunerDaemonService::WatchJob(grpc::ServerContext* ctx, const v1::WatchJobRequest* req,
                                          grpc::ServerWriter<v1::JobEvent>* out) {
  auto first = jobs_->Get(req->job_id());
  if (!first.ok()) return ToGrpcStatus(first.status());
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
    if (!changed.ok()) return ToGrpcStatus(changed.status());
    if (!*changed) continue;
    event.Clear();
    *event.mutable_job() = job;
    event.set_line(line);
    if (!out->Write(event)) return grpc::Status::CANCELLED;
    state = job.state();
  }
  return grpc::Status::OK;
}

grpc::Status TunerDaemonService::CancelJob(grpc::ServerContext*, const v1::CancelJobRequest* req,
                                           v1::CancelJobResponse* resp) {
  auto job = jobs_->Cancel(req->job_id());
  if (!job.ok()) return ToGrpcStatus(job.status());
  *resp->mutable_job() = *job;
  return grpc::Status::OK;
}

}  // namespace tunefarm::tuner
