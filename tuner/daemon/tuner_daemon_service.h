// TunerDaemonService: the gRPC face of JobManager (proto/tunefarm/v1/tuner.proto). The farm token
// is checked before a handler runs (service/server.h); spec errors come back as INVALID_ARGUMENT
// naming the field, unknown job ids as NOT_FOUND (service's one Status mapping).
#ifndef TUNEFARM_TUNER_DAEMON_TUNER_DAEMON_SERVICE_H_
#define TUNEFARM_TUNER_DAEMON_TUNER_DAEMON_SERVICE_H_

#include <string>

#include "tunefarm/v1/tuner.grpc.pb.h"
#include "tuner/daemon/job_manager.h"

namespace tunefarm::tuner {

// WatchJob is a callback reactor woken by JobManager's change events (no thread per watcher).
class TunerDaemonService final : public v1::TunerDaemon::WithCallbackMethod_WatchJob<v1::TunerDaemon::Service> {
 public:
  explicit TunerDaemonService(JobManager* jobs) : jobs_(jobs) {}
  grpc::Status SubmitJob(grpc::ServerContext* ctx, const v1::SubmitJobRequest* req,
                         v1::SubmitJobResponse* resp) override;
  grpc::Status ListJobs(grpc::ServerContext* ctx, const v1::ListJobsRequest* req, v1::ListJobsResponse* resp) override;
  grpc::ServerWriteReactor<v1::JobEvent>* WatchJob(grpc::CallbackServerContext* ctx,
                                                   const v1::WatchJobRequest* req) override;
  grpc::Status CancelJob(grpc::ServerContext* ctx, const v1::CancelJobRequest* req,
                         v1::CancelJobResponse* resp) override;

 private:
  JobManager* jobs_;
};

}  // namespace tunefarm::tuner

#endif  // TUNEFARM_TUNER_DAEMON_TUNER_DAEMON_SERVICE_H_
