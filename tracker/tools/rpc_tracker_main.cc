// rpc_tracker --listen HOST:PORT [--token-file PATH] [--heartbeat-ms N]
// Serves tunefarm.v1.Tracker. The bind address is explicit (no default); PORT 0 picks a free port,
// and the first line printed says which: "rpc_tracker listening on HOST:PORT".
#include <csignal>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>

#include <grpcpp/grpcpp.h>

#include "tunefarm/tracker/auth.h"
#include "tunefarm/tracker/tracker_service.h"

namespace {

const char* kUsage =
    "usage: rpc_tracker --listen HOST:PORT [--token-file PATH] [--heartbeat-ms N] [--tls-cert PEM --tls-key PEM --tls-ca PEM]\n"
    "  (token: --token-file or $TUNEFARM_TOKEN; with the --tls-* files, mutual TLS: clients need a certificate from the CA)";
volatile std::sig_atomic_t g_stop = 0;

}  // namespace

int main(int argc, char** argv) {
  std::string listen, token_file, tls_cert, tls_key, tls_ca;
  int64_t heartbeat_ms = 1000;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (i + 1 >= argc) {
      std::fprintf(stderr, "rpc_tracker: %s needs a value\n%s\n", a.c_str(), kUsage);
      return 2;
    }
    std::string v = argv[++i];
    if (a == "--listen") listen = v;
    else if (a == "--token-file") token_file = v;
    else if (a == "--heartbeat-ms") heartbeat_ms = std::atoll(v.c_str());
    else if (a == "--tls-cert") tls_cert = v;
    else if (a == "--tls-key") tls_key = v;
    else if (a == "--tls-ca") tls_ca = v;
    else {
      std::fprintf(stderr, "rpc_tracker: unknown flag %s\n%s\n", a.c_str(), kUsage);
      return 2;
    }
  }
  if (listen.empty() || heartbeat_ms < 10) {
    std::fprintf(stderr, "rpc_tracker: --listen HOST:PORT is required and --heartbeat-ms must be >= 10\n%s\n", kUsage);
    return 2;
  }
  auto token = tunefarm::tracker::LoadToken(token_file);
  if (!token.ok()) {
    std::fprintf(stderr, "rpc_tracker: %s\n", token.status().message().c_str());
    return 1;
  }
  auto tls = tunefarm::tracker::LoadTlsFlags(tls_cert, tls_key, tls_ca);
  if (!tls.ok()) {
    std::fprintf(stderr, "rpc_tracker: %s\n", tls.status().message().c_str());
    return 1;
  }
  tunefarm::tracker::TrackerCore core({heartbeat_ms, 3}, tunefarm::tracker::SteadyClock());
  tunefarm::tracker::TrackerService service(&core, *token);
  auto started = tunefarm::tracker::StartFarmServer("rpc_tracker", listen, *tls, {&service});
  if (!started.ok()) {
    std::fprintf(stderr, "rpc_tracker: %s\n", started.status().message().c_str());
    return 1;
  }
  std::unique_ptr<grpc::Server> server = std::move(started->server);
  std::signal(SIGTERM, [](int) { g_stop = 1; });
  std::signal(SIGINT, [](int) { g_stop = 1; });
  // Time-based transitions (lost servers, expired leases, deadlines) happen even when no call comes.
  while (!g_stop) {
    core.Tick();
    std::this_thread::sleep_for(std::chrono::milliseconds(std::min<int64_t>(50, heartbeat_ms / 2)));
  }
  server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1));
  return 0;
}
