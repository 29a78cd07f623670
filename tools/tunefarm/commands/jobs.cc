// tunefarm jobs list|watch|cancel --daemon HOST:PORT [JOB_ID] [--token-file PATH] [--json]
// The tuner-daemon's jobs from the command line: list them (state, trials, model, target), follow
// one's progress until it ends, or cancel one (it stops after its batch in flight).
#include <cstdio>
#include <set>

#include <google/protobuf/util/json_util.h>

#include "tools/tunefarm/command_table.h"
#include "tools/tunefarm/commands/tune_daemon_client.h"
#include "tunefarm/farm_net/auth.h"
#include "tunefarm/v1/tuner.grpc.pb.h"

namespace tunefarm::cli {
namespace {

void PrintJob(const v1::TuningJob& j) {
  std::printf("%-5lld %-10s %6d/%-6d %-8s %-30s %s\n", (long long)j.id(), j.state().c_str(), j.trials_done(),
              j.trials_budget(), j.spec().tuner().c_str(), j.spec().model().c_str(), j.spec().target().c_str());
}

}  // namespace

int JobsCommand(const Args& args) {
  const char* usage = "usage: tunefarm jobs list|watch|cancel --daemon HOST:PORT [JOB_ID] [--token-file PATH] [--json]";
  static const std::set<std::string> kFlags = {"--daemon", "--token-file", "--json"};
  for (const auto& [flag, value] : args.flags) {
    if (!kFlags.count(flag)) {
      std::fprintf(stderr, "tunefarm jobs: unknown flag %s\n%s\n", flag.c_str(), usage);
      return 2;
    }
  }
  const std::string action = args.positional.empty() ? "" : args.positional[0];
  const bool needs_id = action == "watch" || action == "cancel";
  if ((action != "list" && !needs_id) || args.positional.size() != (needs_id ? 2u : 1u) || !args.Has("--daemon")) {
    std::fprintf(stderr, "tunefarm jobs: expected list, watch JOB_ID or cancel JOB_ID with --daemon HOST:PORT\n%s\n", usage);
    return 2;
  }
  int64_t id = 0;
  if (needs_id) {
    char* end = nullptr;
    id = std::strtoll(args.positional[1].c_str(), &end, 10);
    if (*end || id <= 0) {
      std::fprintf(stderr, "tunefarm jobs: JOB_ID must be a positive integer, got '%s'\n", args.positional[1].c_str());
      return 2;
    }
  }
  auto token = farm_net::LoadToken(args.Get("--token-file", ""));
  if (!token.ok()) {
    std::fprintf(stderr, "tunefarm jobs: %s\n", token.status().message().c_str());
    return 1;
  }
  const std::string daemon = args.Get("--daemon", "");
  auto stub = v1::TunerDaemon::NewStub(farm_net::FarmChannel(daemon));
  grpc::ClientContext ctx;
  farm_net::AttachToken(&ctx, *token);
  auto fail = [&](const grpc::Status& s) {
    std::fprintf(stderr, "tunefarm jobs: tuner-daemon at %s: %s\n", daemon.c_str(), s.error_message().c_str());
    return 1;
  };
  if (action == "list") {
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    v1::ListJobsResponse resp;
    grpc::Status s = stub->ListJobs(&ctx, v1::ListJobsRequest(), &resp);
    if (!s.ok()) return fail(s);
    if (args.Has("--json")) {
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
    std::printf("job %lld: cancelling (it stops after the batch in flight)\n", (long long)id);
    return 0;
  }
  v1::TuningJob job;
  grpc::Status s = StreamJobProgress(*stub, *token, id, &job);
  if (!s.ok()) return fail(s);
  std::printf("job %lld %s: %d trials\n", (long long)id, job.state().c_str(), job.trials_done());
  return job.state() == "done" ? 0 : 1;
}

}  // namespace tunefarm::cli
