#include "tuner/daemon/tuner_daemon_service.h"

#include <mutex>

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

namespace {

// One WatchJob stream: the job as it is, then one event per change, ending after a final state.
// gRPC may run OnWriteDone/OnDone inline inside StartWrite/Finish, so those are called with no
// lock held, and the reactor deletes itself only once OnDone ran and no Pump is in progress.
class JobWatch final : public grpc::ServerWriteReactor<v1::JobEvent> {
 public:
  JobWatch(JobManager* jobs, int64_t id) : jobs_(jobs), id_(id) {
    subscription_ = jobs_->Subscribe([this] { Pump(); });
    Pump();
  }
  void OnWriteDone(bool ok) override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      writing_ = false;
      if (!ok) cancelled_ = true;
    }
    Pump();
  }
  void OnCancel() override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      cancelled_ = true;
    }
    Pump();
  }
  void OnDone() override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      done_ = true;
    }
    jobs_->Unsubscribe(subscription_);
    bool last;
    {
      std::lock_guard<std::mutex> lock(mu_);
      cleaned_ = true;
      last = active_ == 0;
    }
    if (last) delete this;
  }

 private:
  void Pump() {
    bool write = false, finish = false;
    grpc::Status status;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (done_ || finished_ || writing_) return;
      ++active_;
      if (cancelled_ || final_sent_) {
        finish = true;
        status = cancelled_ ? grpc::Status(grpc::StatusCode::CANCELLED, "the client went away") : grpc::Status::OK;
      } else {
        auto snap = jobs_->GetSnapshot(id_);
        if (!snap.ok()) {
          finish = true;
          status = ToGrpcStatus(snap.status());
        } else if (!sent_any_ || snap->version != version_) {
          sent_any_ = true;
          version_ = snap->version;
          event_.Clear();
          *event_.mutable_job() = snap->job;
          event_.set_line(snap->line.empty() ? snap->job.message() : snap->line);
          final_sent_ = IsFinalJobState(snap->job.state());
          write = true;
        }
      }
      writing_ = write;
      finished_ = finish;
    }
    if (write) StartWrite(&event_);
    if (finish) Finish(status);
    bool last;
    {
      std::lock_guard<std::mutex> lock(mu_);
      last = --active_ == 0 && cleaned_;
    }
    if (last) delete this;
  }

  JobManager* const jobs_;
  const int64_t id_;
  int64_t subscription_ = 0;
  std::mutex mu_;
  v1::JobEvent event_;
  uint64_t version_ = 0;
  int active_ = 0;
  bool writing_ = false, finished_ = false, cancelled_ = false, sent_any_ = false, final_sent_ = false;
  bool done_ = false, cleaned_ = false;
};

}  // namespace

grpc::ServerWriteReactor<v1::JobEvent>* TunerDaemonService::WatchJob(grpc::CallbackServerContext*,
                                                                     const v1::WatchJobRequest* req) {
  return new JobWatch(jobs_, req->job_id());
}

grpc::Status TunerDaemonService::CancelJob(grpc::ServerContext*, const v1::CancelJobRequest* req,
                                           v1::CancelJobResponse* resp) {
  auto job = jobs_->Cancel(req->job_id());
  if (!job.ok()) return ToGrpcStatus(job.status());
  *resp->mutable_job() = *job;
  return grpc::Status::OK;
}

}  // namespace tunefarm::tuner
