#include "tuner/daemon/tuner_daemon_service.h"

#include "tunefarm/service/event_stream.h"
#include "tunefarm/service/status_grpc.h"

namespace tunefarm::tuner {
using service::ToGrpcStatus;

grpc::Status TunerDaemonService::SubmitJob(grpc::ServerContext*, const v1::SubmitJobRequest* req,
                                           v1::SubmitJobResponse* resp) {
  Result<TuningJobSpec> spec = FromProto(req->spec());
  if (!spec.ok()) return ToGrpcStatus(spec.status());
  auto job = jobs_->Submit(*spec);
  if (!job.ok()) return ToGrpcStatus(job.status());
  *resp->mutable_job() = ToProto(*job);
  return grpc::Status::OK;
}

grpc::Status TunerDaemonService::ListJobs(grpc::ServerContext*, const v1::ListJobsRequest*,
                                          v1::ListJobsResponse* resp) {
  for (const auto& j : jobs_->List()) *resp->add_jobs() = ToProto(j);
  return grpc::Status::OK;
}

namespace {

// One WatchJob stream: the job as it is, then one event per change, ending after a final state.
class JobWatch final : public service::EventStream<v1::JobEvent> {
 public:
  JobWatch(JobManager* jobs, int64_t id) : jobs_(jobs), id_(id) {
    subscription_ = jobs_->Subscribe([this] { Pump(); });
    Pump();
  }

 private:
  Step Next(v1::JobEvent* event, grpc::Status* status) override REQUIRES(mu_) {
    if (final_sent_) {
      *status = grpc::Status::OK;
      return Step::kFinish;
    }
    auto snap = jobs_->GetSnapshot(id_);
    if (!snap.ok()) {
      *status = ToGrpcStatus(snap.status());
      return Step::kFinish;
    }
    if (sent_any_ && snap->version == version_) return Step::kNothing;
    sent_any_ = true;
    version_ = snap->version;
    event->Clear();
    *event->mutable_job() = ToProto(snap->job);
    event->set_line(snap->line.empty() ? snap->job.message : snap->line);
    final_sent_ = IsFinal(snap->job.state);
    return Step::kWrite;
  }

  void Cleanup() override { jobs_->Unsubscribe(subscription_); }

  JobManager* const jobs_;
  const int64_t id_;
  int64_t subscription_ = 0;
  // The stream's lock: Next() runs under it.
  uint64_t version_ GUARDED_BY(mu_) = 0;
  bool sent_any_ GUARDED_BY(mu_) = false;
  bool final_sent_ GUARDED_BY(mu_) = false;
};

}  // namespace

grpc::ServerWriteReactor<v1::JobEvent>* TunerDaemonService::WatchJob(grpc::CallbackServerContext*,
                                                                     const v1::WatchJobRequest* req) {
  return new JobWatch(jobs_, req->job_id());
}

grpc::Status TunerDaemonService::CancelJob(grpc::ServerContext*, const v1::CancelJobRequest* req,
                                           v1::CancelJobResponse* resp) {
  bool already_ended = false;
  auto job = jobs_->Cancel(req->job_id(), &already_ended);
  if (!job.ok()) return ToGrpcStatus(job.status());
  *resp->mutable_job() = ToProto(*job);
  resp->set_already_ended(already_ended);
  return grpc::Status::OK;
}

}  // namespace tunefarm::tuner
