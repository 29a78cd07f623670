// rpc_server --tracker HOST:PORT --key KEY --listen HOST:PORT [--token-file PATH] [--threads N]
//            [--memory-limit-mb N] [--child PATH] [--tmp DIR]
// Serves tunefarm.v1.Measure and keeps itself registered with the tracker: registers with device
// info, heartbeats, and re-registers with backoff whenever the tracker is unreachable or has
// forgotten it (a tracker restart needs no manual action). First line: "rpc_server listening on
// HOST:PORT"; then "registered with HOST:PORT as ID" on every (re)registration.
#include <sys/utsname.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <string>
#include <thread>

#include <grpcpp/grpcpp.h>

#include "tunefarm/rpc_server/measure_service.h"
#include "tunefarm/tracker/auth.h"
#include "tunefarm/v1/tracker.grpc.pb.h"

namespace {

const char* kUsage =
    "usage: rpc_server --tracker HOST:PORT --key KEY --listen HOST:PORT [--token-file PATH] [--threads N]\n"
    "                  [--memory-limit-mb N] [--child PATH] [--child-launcher CMD] [--tmp DIR]\n"
    "                  [--tls-cert PEM --tls-key PEM --tls-ca PEM]   (mutual TLS, towards clients and the tracker)\n"
    "  (token: --token-file or $TUNEFARM_TOKEN; --child-launcher: an emulator for the child, e.g. qemu-aarch64)";
std::atomic<bool> g_stop{false};

// What this machine is, for the tracker's status.
tunefarm::v1::DeviceInfo Describe(int threads) {
  tunefarm::v1::DeviceInfo d;
  utsname u;
  if (uname(&u) == 0) d.set_arch(u.machine);
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    auto value = [&] { return line.substr(line.find(':') + 1 < line.size() ? line.find(':') + 2 : line.size()); };
    if (d.cpu_name().empty() && (line.rfind("model name", 0) == 0 || line.rfind("Hardware", 0) == 0)) d.set_cpu_name(value());
    if (d.cpu_features().empty() && (line.rfind("flags", 0) == 0 || line.rfind("Features", 0) == 0)) {
      d.set_cpu_features(value().substr(0, 4096));
    }
  }
  if (d.cpu_name().empty()) d.set_cpu_name(d.arch());
  d.set_cores(int32_t(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN))));
  d.set_threads(threads);
  return d;
}


}  // namespace

int main(int argc, char** argv) {
  std::string tracker, key, listen, token_file, child, launcher, tmp = "/tmp", tls_cert, tls_key, tls_ca;
  int threads = 1;
  int64_t memory_mb = 4096;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (i + 1 >= argc) {
      std::fprintf(stderr, "rpc_server: %s needs a value\n%s\n", a.c_str(), kUsage);
      return 2;
    }
    std::string v = argv[++i];
    if (a == "--tracker") tracker = v;
    else if (a == "--key") key = v;
    else if (a == "--listen") listen = v;
    else if (a == "--token-file") token_file = v;
    else if (a == "--threads") threads = std::atoi(v.c_str());
    else if (a == "--memory-limit-mb") memory_mb = std::atoll(v.c_str());
    else if (a == "--child") child = v;
    else if (a == "--child-launcher") launcher = v;
    else if (a == "--tmp") tmp = v;
    else if (a == "--tls-cert") tls_cert = v;
    else if (a == "--tls-key") tls_key = v;
    else if (a == "--tls-ca") tls_ca = v;
    else {
      std::fprintf(stderr, "rpc_server: unknown flag %s\n%s\n", a.c_str(), kUsage);
      return 2;
    }
  }
  if (tracker.empty() || key.empty() || listen.empty() || threads < 1 || memory_mb < 16) {
    std::fprintf(stderr, "rpc_server: --tracker, --key and --listen are required; --threads >= 1, --memory-limit-mb >= 16\n%s\n", kUsage);
    return 2;
  }
  auto token = tunefarm::tracker::LoadToken(token_file);
  if (!token.ok()) {
    std::fprintf(stderr, "rpc_server: %s\n", token.status().message().c_str());
    return 1;
  }
  auto tls = tunefarm::tracker::LoadTlsFlags(tls_cert, tls_key, tls_ca);
  if (!tls.ok()) {
    std::fprintf(stderr, "rpc_server: %s\n", tls.status().message().c_str());
    return 1;
  }
  tunefarm::rpc_server::ServerOptions options;
  options.token = *token;
  const std::string child_binary = child.empty() ? tunefarm::rpc_server::DefaultMeasureChild() : child;
  if (!launcher.empty()) options.child_command.push_back(launcher);
  options.child_command.push_back(child_binary);
  options.tmp_root = tmp;
  options.threads = threads;
  options.memory_limit_bytes = memory_mb << 20;
  if (access(child_binary.c_str(), X_OK) != 0) {
    std::fprintf(stderr, "rpc_server: cannot run the measurement child %s (--child PATH)\n", child_binary.c_str());
    return 1;
  }
  tunefarm::rpc_server::MeasureService service(options);
  auto started = tunefarm::tracker::StartFarmServer("rpc_server", listen, *tls, {&service});
  if (!started.ok()) {
    std::fprintf(stderr, "rpc_server: %s\n", started.status().message().c_str());
    return 1;
  }
  std::unique_ptr<grpc::Server> server = std::move(started->server);
  const std::string address = started->address;
  std::signal(SIGTERM, [](int) { g_stop = true; });
  std::signal(SIGINT, [](int) { g_stop = true; });

  auto stub = tunefarm::v1::Tracker::NewStub(tunefarm::tracker::FarmChannel(tracker, *tls));
  const tunefarm::v1::DeviceInfo device = Describe(threads);
  std::string server_id;
  int64_t heartbeat_ms = 1000, backoff_ms = 100;
  while (!g_stop) {
    if (server_id.empty()) {
      grpc::ClientContext ctx;
      tunefarm::tracker::AttachToken(&ctx, *token);
      ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(2));
      tunefarm::v1::RegisterRequest req;
      req.set_key(key);
      req.set_address(address);
      *req.mutable_device() = device;
      tunefarm::v1::RegisterResponse resp;
      grpc::Status s = stub->Register(&ctx, req, &resp);
      if (s.ok()) {
        server_id = resp.server_id();
        heartbeat_ms = std::max(10, resp.heartbeat_interval_ms());
        backoff_ms = 100;
        service.set_server_id(server_id);
        std::printf("registered with %s as %s\n", tracker.c_str(), server_id.c_str());
        std::fflush(stdout);
      } else {
        if (s.error_code() == grpc::StatusCode::UNAUTHENTICATED || s.error_code() == grpc::StatusCode::INVALID_ARGUMENT) {
          std::fprintf(stderr, "rpc_server: the tracker refused registration: %s\n", s.error_message().c_str());
        }
        // Exponential backoff, capped: a restarting tracker is found again within ~2 s.
        std::this_thread::sleep_for(std::chrono::milliseconds(backoff_ms));
        backoff_ms = std::min<int64_t>(backoff_ms * 2, 2000);
        continue;
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(heartbeat_ms));
    grpc::ClientContext ctx;
    tunefarm::tracker::AttachToken(&ctx, *token);
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(std::max<int64_t>(500, heartbeat_ms)));
    tunefarm::v1::HeartbeatRequest req;
    req.set_server_id(server_id);
    req.set_measurements_done(service.measurements_done());
    tunefarm::v1::HeartbeatResponse resp;
    grpc::Status s = stub->Heartbeat(&ctx, req, &resp);
    if (!s.ok() || !resp.known()) {
      std::printf("lost the tracker (%s); registering again\n", s.ok() ? "it forgot this server" : s.error_message().c_str());
      std::fflush(stdout);
      server_id.clear();
    }
  }
  server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1));
  return 0;
}
