// bench_farm: the farm's overheads on loopback, with real rpc_tracker and rpc_server processes.
//   lease round trips per second   request -> grant -> release, one client, one server
//   measurements per second        a tiny kernel (number=1, repeat=1) in batches of 16, 1 and 2 servers
//   per-measurement overhead       farm path per kernel in a batch minus timing the same kernel
//                                  in-process with the same protocol (goal: under 5 ms)
// Usage: bench_farm [--seconds S] [--json PATH]   (binaries found next to this one)
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "common/process.h"
#include "tunefarm/command_line/command_line.h"
#include "tunefarm/rpc_server/measure_client.h"
#include "tunefarm/service/auth.h"
#include "tunefarm/v1/tracker.grpc.pb.h"

namespace {

using Clock = std::chrono::steady_clock;
const char* kToken = "bench-farm-token-0123456789";

double Seconds(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

std::string SelfDir() {
  char buf[4096];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  std::string p(buf, size_t(std::max<ssize_t>(n, 0)));
  return p.substr(0, p.rfind('/'));
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

int main(int argc, char** argv) {
  using namespace tunefarm;  // NOLINT
  double seconds = 3;
  std::string json_path;
  CLI::App app{"bench_farm: measurements per second through a real tracker and rpc_servers", "bench_farm"};
  app.add_option("--seconds", seconds, "how long each phase runs (default 3)")->check(CLI::Range(0.1, 3600.0));
  app.add_option("--json", json_path, "also write the figures there")->type_name("PATH");
  if (auto exit_code = ParseCommandLine(app, argc, argv)) return *exit_code;
  const std::string bin = SelfDir(), dir = "/tmp/tunefarm_bench_farm_" + std::to_string(getpid());
  if (system(("mkdir -p " + dir).c_str()) != 0) return 1;
  const std::vector<std::string> env = {std::string("TUNEFARM_TOKEN=") + kToken};
  testing::ChildProcess tracker;
  tracker.Start({bin + "/rpc_tracker", "--listen", "127.0.0.1:0", "--heartbeat-ms", "500"}, env);
  const std::string tracker_addr = testing::AddressFromLine(tracker.WaitForLine("listening on", 10000));
  std::vector<std::unique_ptr<testing::ChildProcess>> servers;
  auto add_server = [&](const std::string& key) {
    servers.push_back(std::make_unique<testing::ChildProcess>());
    servers.back()->Start(
        {bin + "/rpc_server", "--tracker", tracker_addr, "--key", key, "--listen", "127.0.0.1:0", "--tmp", dir}, env);
    servers.back()->WaitForLine("registered with", 10000);
  };
  add_server("one");

  // A tiny kernel: 16 floats copied.
  std::ofstream(dir + "/tiny.c")
      << "#include <stdint.h>\nint32_t tiny(void* const* a) { const float* x = (const float*)a[0];"
#include "tunefarm/command_line/command_line.h"
         " float* y = (float*)a[1]; for (int i = 0; i < 16; ++i) y[i] = x[i]; return 0; }\n";
  if (system(("cc -O2 -shared -fPIC -o " + dir + "/tiny.so " + dir + "/tiny.c").c_str()) != 0) return 1;
  rpc_server::MeasureInput tiny;
  tiny.library = ReadFile(dir + "/tiny.so");
  tiny.spec.symbol = "tiny";
  tiny.spec.args = {rpc_server::ArgSpec{{16}, "float32", "input"}, rpc_server::ArgSpec{{16}, "float32", "output"}};
  tiny.spec.timing.number = 1;
  tiny.spec.timing.repeat = 1;
  std::vector<rpc_server::MeasureInput> batch(16, tiny);

  // 1. Lease round trips.
  auto stub = v1::Tracker::NewStub(service::FarmChannel(tracker_addr));
  int leases = 0;
  auto t0 = Clock::now();
  while (Seconds(t0) < seconds) {
    grpc::ClientContext ctx;
    service::AttachToken(&ctx, kToken);
    v1::LeaseRequest req;
    req.set_key("one");
    req.set_deadline_ms(10000);
    req.set_lease_ms(10000);
    auto stream = stub->RequestLease(&ctx, req);
    v1::LeaseUpdate u;
    while (stream->Read(&u) && !u.has_granted()) {
    }
    v1::ReleaseLeaseRequest rel;
    rel.set_lease_id(u.granted().lease_id());
    grpc::ClientContext rctx;
    service::AttachToken(&rctx, kToken);
    v1::ReleaseLeaseResponse rresp;
    stub->ReleaseLease(&rctx, rel, &rresp);
    while (stream->Read(&u)) {
    }
    stream->Finish();
    ++leases;
  }
  const double lease_rate = leases / Seconds(t0);

  // 2. Measurements per second, 1 then 2 servers (one client per server, in parallel).
  auto measure_rate = [&](const std::string& key, int clients, double* per_kernel_ms) {
    std::atomic<int64_t> done{0};
    std::vector<std::thread> threads;
    auto start = Clock::now();
    for (int c = 0; c < clients; ++c) {
      threads.emplace_back([&] {
        rpc_server::MeasureClient client({tracker_addr, key, kToken, "bench", 0, 60000, {}, {}});
        while (Seconds(start) < seconds) {
          auto r = client.Measure(batch, 30000);
          if (r.ok()) done += int64_t(r->size());
        }
      });
    }
    for (auto& t : threads) t.join();
    double s = Seconds(start);
    if (per_kernel_ms) *per_kernel_ms = 1000.0 * s * clients / double(done);
    return double(done) / s;
  };
  double farm_ms_per_kernel = 0;
  const double rate1 = measure_rate("one", 1, &farm_ms_per_kernel);
  add_server("one");
  const double rate2 = measure_rate("one", 2, nullptr);

  // 3. The same kernel timed in this process with the same protocol (load, warm-up, one call).
  std::ofstream(dir + "/tiny_local.so", std::ios::binary) << tiny.library;
  int local = 0;
  t0 = Clock::now();
  while (Seconds(t0) < seconds / 2) {
    rpc_server::MeasureInProcess(dir + "/tiny_local.so", tiny.spec);
    ++local;
  }
  const double local_ms = 1000.0 * Seconds(t0) / local;
  const double overhead_ms = farm_ms_per_kernel - local_ms;

  std::printf("lease request->grant->release round trips: %.1f per second\n", lease_rate);
  std::printf("measurements per second (tiny kernel, batches of 16): 1 server %.1f, 2 servers %.1f\n", rate1, rate2);
  std::printf("per measurement: farm path %.3f ms, in-process %.3f ms, overhead %.3f ms (goal < 5 ms)\n",
              farm_ms_per_kernel, local_ms, overhead_ms);
  if (!json_path.empty()) {
    nlohmann::ordered_json j = {
        {"lease_round_trips_per_s", lease_rate},     {"measurements_per_s_1_server", rate1},
        {"measurements_per_s_2_servers", rate2},     {"farm_ms_per_measurement", farm_ms_per_kernel},
        {"in_process_ms_per_measurement", local_ms}, {"overhead_ms", overhead_ms}};
    std::ofstream(json_path) << j.dump(1) << "\n";
  }
  for (auto& s : servers) s->Kill(SIGTERM);
  tracker.Kill(SIGTERM);
  return system(("rm -rf " + dir).c_str()) == 0 ? 0 : 1;
}
