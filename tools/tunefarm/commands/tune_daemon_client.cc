#include "tools/tunefarm/commands/tune_daemon_client.h"

#include <unistd.h>

#include <cstdio>

#include "tunefarm/service/auth.h"

namespace tunefarm::cli {

grpc::Status StreamJobProgress(v1::TunerDaemon::Stub& stub, const std::string& token, int64_t id, v1::TuningJob* last) {
  grpc::ClientContext ctx;
  service::AttachToken(&ctx, token);
  v1::WatchJobRequest req;
  req.set_job_id(id);
  auto reader = stub.WatchJob(&ctx, req);
  v1::JobEvent event;
  std::string last_line;
  while (reader->Read(&event)) {
    *last = event.job();
    if (!event.line().empty() && event.line() != last_line) {
      std::printf("%s\n", event.line().c_str());
      std::fflush(stdout);
      last_line = event.line();
    }
  }
  return reader->Finish();
}

int TuneThroughDaemon(const std::string& daemon, const std::string& token_file, const service::TlsFiles& tls,
                      const tuner::TuningJobSpec& spec) {
  auto token = service::LoadToken(token_file);
  if (!token.ok()) {
    std::fprintf(stderr, "tunefarm tune: %s\n", token.status().message().c_str());
    return 1;
  }
  auto stub = v1::TunerDaemon::NewStub(service::FarmChannel(daemon, tls));
  v1::SubmitJobRequest req;
  *req.mutable_spec() = tuner::ToProto(spec);
  v1::SubmitJobResponse resp;
  grpc::ClientContext submit_ctx;
  service::AttachToken(&submit_ctx, *token);
  submit_ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  grpc::Status s = stub->SubmitJob(&submit_ctx, req, &resp);
  if (!s.ok()) {
    std::fprintf(stderr, "tunefarm tune: tuner-daemon at %s: %s\n", daemon.c_str(), s.error_message().c_str());
    return 1;
  }
  const int64_t id = resp.job().id();
  std::printf("submitted job %lld to tuner-daemon at %s (%s on %s); progress follows, Ctrl-C leaves it running\n",
              (long long)id, daemon.c_str(), spec.model.c_str(), spec.target.c_str());
  std::fflush(stdout);

  v1::TuningJob last = resp.job();
  s = StreamJobProgress(*stub, *token, id, &last);
  if (!s.ok()) {
    std::fprintf(stderr, "tunefarm tune: lost the progress stream of job %lld: %s\n", (long long)id,
                 s.error_message().c_str());
    return 1;
  }
  std::printf("\n%-6s %-8s %10s %10s  %s\n", "task", "trials", "best", "fallback", "workload");
  for (int i = 0; i < last.tasks_size(); ++i) {
    const auto& t = last.tasks(i);
    std::printf("%-6d %-8d %10.2f %10.2f  %s\n", i + 1, t.trials(), t.best_gflops(), t.fallback_gflops(),
                t.workload().c_str());
  }
  std::printf("job %lld %s: %d trials\n", (long long)id, std::string(tuner::NameOf(last.state())).c_str(),
              last.trials_done());
  if (last.state() == v1::JOB_STATE_FAILED) {
    std::fprintf(stderr, "tunefarm tune: job %lld failed: %s\n", (long long)id, last.message().c_str());
    return 1;
  }
  return last.state() == v1::JOB_STATE_CANCELLED ? 130 : 0;
}

}  // namespace tunefarm::cli
