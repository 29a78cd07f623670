// tunefarm tracker status --tracker HOST:PORT [--token-file PATH] [--json]
// Servers (key, address, device, state, measurements) and per-key queues, like TVM's
// query_rpc_tracker with more.
#include <cstdio>
#include <nlohmann/json.hpp>

#include "tools/tunefarm/command_table.h"
#include "tools/tunefarm/common_flags.h"
#include "tunefarm/service/auth.h"
#include "tunefarm/v1/tracker.grpc.pb.h"

namespace tunefarm::cli {

namespace {

struct TrackerFlags {
  std::string tracker;
  FarmClientFlags farm;
  bool json = false;
};

int ShowStatus(const TrackerFlags& f) {
  auto token = service::LoadToken(f.farm.token_file);
  if (!token.ok()) {
    std::fprintf(stderr, "tunefarm tracker: %s\n", token.status().message().c_str());
    return 1;
  }
  auto tls = service::LoadTlsFlags(f.farm.tls_cert, f.farm.tls_key, f.farm.tls_ca);
  if (!tls.ok()) {
    std::fprintf(stderr, "tunefarm tracker: %s\n", tls.status().message().c_str());
    return 1;
  }
  const std::string& address = f.tracker;
  auto stub = v1::Tracker::NewStub(service::FarmChannel(address, *tls));
  grpc::ClientContext ctx;
  service::AttachToken(&ctx, *token);
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
  v1::FarmStatusResponse status;
  grpc::Status s = stub->FarmStatus(&ctx, v1::FarmStatusRequest(), &status);
  if (!s.ok()) {
    std::fprintf(stderr, "tunefarm tracker: %s: %s\n", address.c_str(),
                 s.error_code() == grpc::StatusCode::UNAVAILABLE
                     ? ("no tracker reachable (" + s.error_message() + ")").c_str()
                     : s.error_message().c_str());
    return 1;
  }
  if (f.json) {
    nlohmann::ordered_json j;
    j["tracker"] = address;
    j["uptime_ms"] = status.uptime_ms();
    j["servers"] = nlohmann::ordered_json::array();
    for (const auto& sv : status.servers()) {
      j["servers"].push_back({{"server_id", sv.server_id()},
                              {"key", sv.key()},
                              {"address", sv.address()},
                              {"arch", sv.device().arch()},
                              {"cpu", sv.device().cpu_name()},
                              {"cores", sv.device().cores()},
                              {"threads", sv.device().threads()},
                              {"gpu", sv.device().gpu_name()},
                              {"state", sv.state() == v1::ServerStatus::BUSY ? "busy" : "free"},
                              {"lease_client", sv.lease_client()},
                              {"measurements_done", sv.measurements_done()},
                              {"last_heartbeat_ms_ago", sv.last_heartbeat_ms_ago()}});
    }
    j["keys"] = nlohmann::ordered_json::array();
    for (const auto& k : status.keys()) {
      j["keys"].push_back({{"key", k.key()}, {"free", k.free()}, {"busy", k.busy()}, {"pending", k.pending()}});
    }
    std::printf("%s\n", j.dump(1, ' ', false, nlohmann::ordered_json::error_handler_t::replace).c_str());
    return 0;
  }
  std::printf("Tracker %s, up %.1f s\n\n", address.c_str(), double(status.uptime_ms()) / 1000.0);
  std::printf("%-10s %-12s %-22s %-8s %-6s %8s  %s\n", "server", "key", "address", "arch", "state", "measured",
              "device");
  for (const auto& sv : status.servers()) {
    std::string device = sv.device().cpu_name() + " (" + std::to_string(sv.device().cores()) + " cores, " +
                         std::to_string(sv.device().threads()) + " threads)" +
                         (sv.device().gpu_name().empty() ? "" : ", " + sv.device().gpu_name());
    std::printf("%-10s %-12s %-22s %-8s %-6s %8lld  %s\n", sv.server_id().c_str(), sv.key().c_str(),
                sv.address().c_str(), sv.device().arch().c_str(),
                sv.state() == v1::ServerStatus::BUSY ? "busy" : "free", static_cast<long long>(sv.measurements_done()),
                device.c_str());
  }
  std::printf("\n%-12s %5s %5s %8s\n", "key", "free", "busy", "pending");
  for (const auto& k : status.keys())
    std::printf("%-12s %5d %5d %8d\n", k.key().c_str(), k.free(), k.busy(), k.pending());
  if (status.servers().empty()) std::printf("(no servers registered)\n");
  return 0;
}

}  // namespace

Action DeclareTracker(CLI::App& app) {
  auto f = std::make_shared<TrackerFlags>();
  app.require_subcommand(1);
  CLI::App* status =
      app.add_subcommand("status", "servers (key, address, device, state, measurements) and the queue of each key");
  status->add_option("--tracker", f->tracker, "the rpc_tracker to ask")->type_name("HOST:PORT")->required();
  AddFarmClientFlags(*status, &f->farm, /*tls=*/true);
  AddJsonFlag(*status, &f->json);
  return [f] { return ShowStatus(*f); };
}

}  // namespace tunefarm::cli
