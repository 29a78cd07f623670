// rpc_server --tracker HOST:PORT --key KEY --listen HOST:PORT [--token-file PATH] [--threads N]
//            [--memory-limit-mb N] [--child PATH] [--tmp DIR] [--device cpu|cuda[:N]] [--metrics HOST:PORT]
// Serves tunefarm.v1.Measure (and the gRPC health service) and keeps itself registered with the
// tracker through service::Registrar: registers with device info, heartbeats, re-registers with
// backoff whenever the tracker is unreachable or has forgotten it (reporting the lease it serves,
// so a tracker restart needs no manual action and double-books nothing), and serves only the
// lease the tracker names. First line: "rpc_server listening on HOST:PORT"; then "registered
// with HOST:PORT as ID" on every (re)registration. With --metrics, Prometheus metrics on GET
// /metrics there ("rpc_server metrics on HOST:PORT"; docs/metrics.md).
#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>

#include "tunefarm/command_line/command_line.h"
#include "tunefarm/rpc_server/measure_service.h"
#include "tunefarm/rpc_server/server_metrics.h"
#include "tunefarm/runtime/cuda_driver.h"
#include "tunefarm/runtime/device.h"
#include "tunefarm/service/daemon.h"
#include "tunefarm/service/registrar.h"

namespace {

// What this machine is, for the tracker's status.
tunefarm::v1::DeviceInfo Describe(int threads) {
  tunefarm::v1::DeviceInfo d;
  utsname u;
  if (uname(&u) == 0) d.set_arch(u.machine);
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    auto value = [&] { return line.substr(line.find(':') + 1 < line.size() ? line.find(':') + 2 : line.size()); };
    if (d.cpu_name().empty() && (line.rfind("model name", 0) == 0 || line.rfind("Hardware", 0) == 0))
      d.set_cpu_name(value());
    if (d.cpu_features().empty() && (line.rfind("flags", 0) == 0 || line.rfind("Features", 0) == 0)) {
      d.set_cpu_features(value().substr(0, 4096));
    }
  }
  if (d.cpu_name().empty()) d.set_cpu_name(d.arch());
  d.set_cores(int32_t(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN))));
  d.set_threads(threads);
  return d;
}

// The GPU a CUDA server measures on, into its device info.
tunefarm::Status DescribeGpu(int ordinal, tunefarm::v1::DeviceInfo* d) {
  TUNEFARM_ASSIGN_OR_RETURN(const tunefarm::CudaDriver* driver, tunefarm::CudaDriver::Load());
  TUNEFARM_ASSIGN_OR_RETURN(tunefarm::CudaDeviceInfo gpu, driver->Describe(ordinal));
  d->set_gpu_name(gpu.name);
  d->set_gpu_memory_bytes(int64_t(gpu.memory_bytes));
  d->set_gpu_arch(gpu.arch());
  d->set_gpu_sm_count(gpu.sm_count);
  d->set_gpu_driver_version(gpu.driver_version);
  d->set_gpu_ordinal(ordinal);
  return tunefarm::Status::OK();
}

// Runs `command --check` (the launcher too, when there is one) and returns "" when it answers
// as tunefarm-measure-child does, else what happened: a server whose child cannot measure must not
// register and take leases whose every trial would fail.
std::string CheckMeasureChild(const std::vector<std::string>& command) {
  std::vector<std::string> argv = command;
  argv.push_back("--check");
  std::vector<char*> cargv;
  cargv.reserve(argv.size() + 1);
  for (auto& a : argv) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  int out[2];
  if (pipe2(out, O_CLOEXEC) != 0) return "no pipe";
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out[1], 1);
  posix_spawn_file_actions_adddup2(&actions, out[1], 2);
  posix_spawn_file_actions_addclose(&actions, out[0]);
  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, cargv[0], &actions, nullptr, cargv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(out[1]);
  if (rc != 0) {
    close(out[0]);
    return std::string("cannot start it: ") + std::strerror(rc);
  }
  std::string output;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);  // qemu starts slowly
  pollfd pfd{out[0], POLLIN, 0};
  while (std::chrono::steady_clock::now() < deadline && output.size() < 4096) {
    if (poll(&pfd, 1, 100) <= 0) continue;
    char buf[512];
    const ssize_t n = read(out[0], buf, sizeof(buf));
    if (n <= 0) break;
    output.append(buf, size_t(n));
  }
  close(out[0]);
  int status = 0;
  pid_t reaped = 0;
  while ((reaped = waitpid(pid, &status, WNOHANG)) == 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  if (reaped == 0) {
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    return "no answer to --check within 30 s";
  }
  while (!output.empty() && (output.back() == '\n' || output.back() == '\r')) output.pop_back();
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && output == tunefarm::rpc_server::kMeasureChildReady) return "";
  std::string how = WIFEXITED(status) ? "exit status " + std::to_string(WEXITSTATUS(status))
                                      : "signal " + std::to_string(WTERMSIG(status));
  std::string shown;
  for (const auto& a : argv) shown += (shown.empty() ? "" : " ") + a;
  return "`" + shown + "` gave " + how +
         (output.empty() ? " and printed nothing" : ", printed \"" + output.substr(0, 200) + "\"");
}

}  // namespace

int main(int argc, char** argv) {
  tunefarm::service::DaemonFlags flags;
  std::string tracker, key, child, launcher, tmp = "/tmp", device = "cpu";
  int threads = 1;
  int64_t memory_mb = 4096;
  int ordinal = -1;
  CLI::App app{
      "rpc_server: measures kernels for the farm's tuners; registers with the tracker under KEY and serves "
      "only the lease the tracker grants",
      "rpc_server"};
  tunefarm::service::AddDaemonFlags(app, &flags);
  app.add_option("--tracker", tracker, "the rpc_tracker to register with")->type_name("HOST:PORT")->required();
  app.add_option("--key", key, "the device key clients lease by (e.g. rasp4b, h200)")->required();
  tunefarm::AddIntFlag(app, "--threads", &threads, 1, 1024, "threads each measurement runs on (default 1)");
  tunefarm::AddIntFlag(app, "--memory-limit-mb", &memory_mb, 16, int64_t(1) << 30,
                       "address-space limit of each measurement child (default 4096)");
  app.add_option("--child", child, "the measurement child program (default: tunefarm-measure-child beside rpc_server)")
      ->type_name("PATH");
  app.add_option("--child-launcher", launcher, "an emulator to start the child with, e.g. qemu-aarch64")
      ->type_name("CMD");
  app.add_option("--tmp", tmp, "where each measurement gets its private directory (default /tmp)")->type_name("DIR");
  tunefarm::AddCheckedFlag(
      app, "--device",
      [&](const std::string& text) -> tunefarm::Status {
        auto parsed = tunefarm::runtime::ParseDevice(text);
        if (!parsed.ok()) return tunefarm::Status::InvalidArgument("--device: " + parsed.status().message());
        ordinal = parsed->kind == tunefarm::runtime::Device::Kind::kCuda ? parsed->ordinal : -1;
        device = text;
        return tunefarm::Status::OK();
      },
      "what kernels run on: cpu (default), or cuda[:N] for GPU N's PTX kernels", "cpu|cuda[:N]");
  if (auto exit_code = tunefarm::ParseCommandLine(app, argc, argv)) return *exit_code;
  auto secrets = tunefarm::service::LoadDaemonSecrets(flags);
  if (!secrets.ok()) {
    std::fprintf(stderr, "rpc_server: %s\n", secrets.status().message().c_str());
    return 1;
  }
  tunefarm::v1::DeviceInfo device_info = Describe(threads);
  if (ordinal >= 0) {
    if (tunefarm::Status s = DescribeGpu(ordinal, &device_info); !s.ok()) {
      std::fprintf(stderr, "rpc_server: --device %s: %s\n", device.c_str(), s.message().c_str());
      return 1;
    }
    std::printf("measuring on GPU %d: %s (%s, %d SMs, %lld MiB, driver %d)\n", ordinal, device_info.gpu_name().c_str(),
                device_info.gpu_arch().c_str(), device_info.gpu_sm_count(),
                static_cast<long long>(device_info.gpu_memory_bytes() >> 20), device_info.gpu_driver_version());
  }
  tunefarm::rpc_server::ServerOptions options;
  options.cuda_ordinal = ordinal;
  options.cuda_arch = device_info.gpu_arch();
  options.persistent_worker = ordinal >= 0;
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
  if (std::string why = CheckMeasureChild(options.child_command); !why.empty()) {
    std::fprintf(stderr,
                 "rpc_server: the measurement child %s fails its start check (%s): every measurement would fail, so "
                 "the server does not register; --child must name tunefarm-measure-child\n",
                 child_binary.c_str(), why.c_str());
    return 1;
  }
  struct stat tmp_stat;
  if (stat(tmp.c_str(), &tmp_stat) != 0 || !S_ISDIR(tmp_stat.st_mode) || access(tmp.c_str(), W_OK | X_OK) != 0) {
    std::fprintf(stderr, "rpc_server: --tmp %s is not a writable directory\n", tmp.c_str());
    return 1;
  }
  if (int swept = tunefarm::rpc_server::SweepStaleMeasureDirs(tmp); swept > 0) {
    std::printf("removed %d measurement directories left in %s by servers that died\n", swept, tmp.c_str());
  }

  // The registrar needs the bound address, the service needs the registrar: the service starts
  // first and the registrar steps once the port is known.
  auto link = tunefarm::service::GrpcTrackerLink(tracker, secrets->tls, secrets->token);
  tunefarm::service::RegistrarOptions reg_options;
  reg_options.key = key;
  reg_options.device = device_info;
  // The address is set once the port is bound; Step() is not called before that.
  auto registrar = std::make_unique<tunefarm::service::Registrar>(reg_options, link.get(), tunefarm::service::SteadyMs);
  registrar->set_log([&tracker](const std::string& line) {
    if (line.rfind("registered as ", 0) == 0) {
      std::printf("registered with %s as %s\n", tracker.c_str(), line.substr(14).c_str());
    } else {
      std::printf("%s\n", line.c_str());
    }
    std::fflush(stdout);
  });
  tunefarm::rpc_server::MeasureService service(options, registrar.get());
  registrar->set_measurements_done([&service] { return service.measurements_done(); });
  std::atomic<const tunefarm::service::FarmServer*> farm_server{nullptr};
  service.set_unauthenticated_counter([&farm_server] {
    const auto* s = farm_server.load();
    return s ? s->refused_calls() : 0;
  });

  tunefarm::service::Daemon daemon;
  daemon.name = "rpc_server";
  daemon.max_request_bytes = tunefarm::service::kMeasureMessageCap;
  daemon.services = {{tunefarm::v1::Measure::service_full_name(), &service}};
  std::unique_ptr<tunefarm::rpc_server::ServerMetrics> metrics;  // outlives the service's observer calls
  daemon.metrics = [&]() -> tunefarm::Result<tunefarm::service::MetricSources> {
    tunefarm::service::Registrar* reg = registrar.get();
    TUNEFARM_ASSIGN_OR_RETURN(
        metrics, tunefarm::rpc_server::ServerMetrics::Create(key, [reg] { return !reg->lease_id().empty(); }));
    tunefarm::rpc_server::ServerMetrics* observed = metrics.get();
    service.set_observer([observed](tunefarm::rpc_server::OutcomeKind k, double s) { observed->Observe(k, s); });
    return metrics->sources();
  };
  daemon.on_started = [&](const tunefarm::service::FarmServer& server) {
    farm_server = &server;
    registrar->set_address(server.address);  // until now a Measure's lease check cannot register
    return tunefarm::Status::OK();
  };
  daemon.tick = [&registrar] { return registrar->Step(); };
  return tunefarm::service::RunDaemon(flags, *secrets, daemon);
}
