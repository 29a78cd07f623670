// tunefarm jobs list|watch|cancel --daemon HOST:PORT [JOB_ID] [--token-file PATH] [--json]
// The tuner-daemon's jobs from the command line: list them (state, trials, model, target), follow
// one's progress until it ends, or cancel one (it stops once its measurement in flight is done).
#include <google/protobuf/util/json_util.h>

#include <cstdint>
#include <cstdio>

#include "tools/tunefarm/command_table.h"
#include "tools/tunefarm/commands/tune_daemon_client.h"
#include "tools/tunefarm/common_flags.h"
#include "tunefarm/service/auth.h"
#include "tunefarm/v1/tuner.grpc.pb.h"

namespace tunefarm::cli {
namespace {

void PrintJob(const v1::TuningJob& sent) {
  Result<tuner::TuningJob> j = tuner::FromProto(sent);
  if (!j.ok()) {  // a newer daemon's job
    std::printf("%-5lld %s\n", (long long)sent.id(), j.status().message().c_str());
    return;
  }
  std::printf("%-5lld %-10s %6d/%-6d %-8s %-30s %s\n", (long long)j->id, std::string(tuner::NameOf(j->state)).c_str(),
              j->trials_done, j->trials_budget, std::string(tuner::NameOf(j->spec.tuner)).c_str(),
              j->spec.model.c_str(), j->spec.target.c_str());
}

struct JobsFlags {
  std::string action, daemon;
  int64_t id = 0;
  FarmClientFlags farm;
  bool json = false;
};

int Jobs(const JobsFlags& f) {
  const std::string& action = f.action;
  const int64_t id = f.id;
  auto token = service::LoadToken(f.farm.token_file);
  if (!token.ok()) {
    std::fprintf(stderr, "tunefarm jobs: %s\n", token.status().message().c_str());
    return 1;
  }
  const std::string& daemon = f.daemon;
  auto stub = v1::TunerDaemon::NewStub(service::FarmChannel(daemon));
  grpc::ClientContext ctx;
  service::AttachToken(&ctx, *token);
  auto fail = [&](const grpc::Status& s) {
    std::fprintf(stderr, "tunefarm jobs: tuner-daemon at %s: %s\n", daemon.c_str(), s.error_message().c_str());
    return 1;
  };
  if (action == "list") {
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    v1::ListJobsResponse resp;
    grpc::Status s = stub->ListJobs(&ctx, v1::ListJobsRequest(), &resp);
    if (!s.ok()) return fail(s);
    if (f.json) {
      std::string json;
      google::protobuf::util::JsonPrintOptions o;
      o.add_whitespace = true;
      o.preserve_proto_field_names = true;
      (void)google::protobuf::util::MessageToJsonString(resp, &json, o);
      std::printf("%s", json.c_str());
      return 0;
    }
    std::printf("%-5s %-10s %13s %-8s %-30s %s\n", "id", "state", "trials", "tuner", "model", "target");
    for (const auto& j : resp.jobs()) PrintJob(j);
    return 0;
  }
  if (action == "cancel") {
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    v1::CancelJobRequest req;
    req.set_job_id(id);
    v1::CancelJobResponse resp;
    grpc::Status s = stub->CancelJob(&ctx, req, &resp);
    if (!s.ok()) return fail(s);
    if (resp.already_ended()) {
      std::printf("job %lld had already ended (%s): nothing to cancel\n", (long long)id,
                  std::string(tuner::NameOf(resp.job().state())).c_str());
      return 0;
    }
    std::printf("job %lld: cancelling (it stops once the measurement in flight is done)\n", (long long)id);
    return 0;
  }
  v1::TuningJob job;
  grpc::Status s = StreamJobProgress(*stub, *token, id, &job);
  if (!s.ok()) return fail(s);
  std::printf("job %lld %s: %d trials\n", (long long)id, std::string(tuner::NameOf(job.state())).c_str(),
              job.trials_done());
  return job.state() == v1::JOB_STATE_DONE ? 0 : 1;
}

}  // namespace

Action DeclareJobs(CLI::App& app) {
  auto f = std::make_shared<JobsFlags>();
  for (auto& [name, sub] : AddActions(app,
                                      {{"list", "every job: state, trials, tuner, model, target"},
                                       {"watch", "follow a job's progress until it ends (exit 0 when it is done)"},
                                       {"cancel", "cancel a job: it stops once its measurement in flight is done"}},
                                      &f->action)) {
    if (name != "list")
      AddIntFlag(*sub, "JOB_ID", &f->id, 1, INT64_MAX, "the job's id (tunefarm jobs list)")->required();
    sub->add_option("--daemon", f->daemon, "the tuner-daemon")->type_name("HOST:PORT")->required();
    AddFarmClientFlags(*sub, &f->farm, /*tls=*/false);
    if (name == "list") AddJsonFlag(*sub, &f->json);
  }
  return [f] { return Jobs(*f); };
}

}  // namespace tunefarm::cli
