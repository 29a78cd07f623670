// bench_farm_load: the tracker under load, a real rpc_tracker process on loopback.
//   lease grants per second   S servers registered (each a service::Registrar, the code rpc_server
//                             runs, heartbeating), C clients each looping request -> grant -> release
//                             on its own lease stream; the wait from request to grant (p50/p99)
//   re-registration           the tracker SIGKILLed and restarted on the same address: how long
//                             until every server is registered again (and how long until the
//                             tracker is back up at all)
// The servers are in this process so that 50 of them fit on a 2-core machine; the tracker sees
// exactly the calls 50 rpc_server processes would make (register, heartbeats, lease checks).
// Usage: bench_farm_load [--servers 50] [--clients 20] [--seconds 5] [--restart-servers 53] [--json PATH]
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "common/process.h"
#include "tunefarm/command_line/command_line.h"
#include "tunefarm/service/auth.h"
#include "tunefarm/service/flags.h"
#include "tunefarm/service/registrar.h"
#include "tunefarm/v1/tracker.grpc.pb.h"

namespace {

using Clock = std::chrono::steady_clock;
const char* kToken = "bench-farm-load-token-0123456789";

double MsSince(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

std::string SelfDir() {
  char buf[4096];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  std::string p(buf, size_t(std::max<ssize_t>(n, 0)));
  return p.substr(0, p.rfind('/'));
}

// S servers: a Registrar each with its own thread, as S rpc_server processes would run theirs
// (they share this process's connection to the tracker).
class Servers {
 public:
  Servers(const std::string& tracker, int n, int first_port) {
    link_ = tunefarm::service::GrpcTrackerLink(tracker, {}, kToken);
    for (int i = 0; i < n; ++i) {
      tunefarm::service::RegistrarOptions o;
      o.key = "load";
      o.address = "127.0.0.1:" + std::to_string(first_port + i);
      o.device.set_arch("x86_64");
      o.device.set_threads(1);
      registrars_.push_back(
          std::make_unique<tunefarm::service::Registrar>(o, link_.get(), tunefarm::service::SteadyMs));
    }
    for (auto& r : registrars_) {
      threads_.emplace_back([this, reg = r.get()] {
        while (!stop_) std::this_thread::sleep_for(std::chrono::milliseconds(std::clamp<int64_t>(reg->Step(), 1, 50)));
      });
    }
  }
  ~Servers() {
    stop_ = true;
    for (auto& t : threads_) t.join();
  }

 private:
  std::unique_ptr<tunefarm::service::TrackerLink> link_;
  std::vector<std::unique_ptr<tunefarm::service::Registrar>> registrars_;
  std::atomic<bool> stop_{false};
  std::vector<std::thread> threads_;
};

int RegisteredServers(tunefarm::v1::Tracker::Stub* stub) {
  grpc::ClientContext ctx;
  tunefarm::service::AttachToken(&ctx, kToken);
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(500));
  tunefarm::v1::FarmStatusResponse resp;
  return stub->FarmStatus(&ctx, tunefarm::v1::FarmStatusRequest(), &resp).ok() ? resp.servers_size() : -1;
}

double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, size_t(p * double(v.size() - 1) + 0.5))];
}

}  // namespace

int main(int argc, char** argv) {
  using namespace tunefarm;  // NOLINT
  int servers = 50, clients = 20, restart_servers = 53;
  int64_t seconds = 5;
  std::string json_path;
  CLI::App app{"bench_farm_load: lease grants per second and tracker restarts under many servers and clients",
               "bench_farm_load"};
  AddIntFlag(app, "--servers", &servers, 1, 1000, "rpc_servers registered (default 50)");
  AddIntFlag(app, "--clients", &clients, 1, 1000, "clients leasing at once (default 20)");
  AddIntFlag(app, "--seconds", &seconds, 1, 3600, "how long the lease phase runs (default 5)");
  AddIntFlag(app, "--restart-servers", &restart_servers, 1, 1000,
             "servers re-registering after a tracker restart (default 53)");
  app.add_option("--json", json_path, "also write the figures there")->type_name("PATH");
  if (auto exit_code = ParseCommandLine(app, argc, argv)) return *exit_code;
  const std::vector<std::string> env = {std::string("TUNEFARM_TOKEN=") + kToken};
  const std::string bin = SelfDir();
  auto tracker = std::make_unique<testing::ChildProcess>();
  tracker->Start({bin + "/rpc_tracker", "--listen", "127.0.0.1:0", "--heartbeat-ms", "1000"}, env);
  const std::string address = testing::AddressFromLine(tracker->WaitForLine("listening on", 10000));
  if (address.empty()) return 1;
  auto stub = v1::Tracker::NewStub(service::FarmChannel(address));

  // 1. Lease grants per second.
  double grants_per_s = 0, p50 = 0, p99 = 0;
  int64_t grants = 0;
  {
    Servers farm(address, servers, 20000);
    while (RegisteredServers(stub.get()) < servers) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    std::atomic<bool> stop{false};
    std::vector<std::vector<double>> waits(static_cast<size_t>(clients));
    std::vector<std::thread> threads;
    const auto t0 = Clock::now();
    for (int c = 0; c < clients; ++c) {
      threads.emplace_back([&, c] {
        auto client = v1::Tracker::NewStub(service::FarmChannel(address));
        while (!stop) {
          const auto asked = Clock::now();
          grpc::ClientContext ctx;
          service::AttachToken(&ctx, kToken);
          v1::LeaseRequest req;
          req.set_key("load");
          req.set_deadline_ms(10000);
          req.set_lease_ms(60000);
          req.set_client("load-" + std::to_string(c));
          auto stream = client->RequestLease(&ctx, req);
          v1::LeaseUpdate u;
          while (stream->Read(&u)) {
            if (!u.has_granted()) continue;
            waits[size_t(c)].push_back(MsSince(asked));
            grpc::ClientContext rctx;
            service::AttachToken(&rctx, kToken);
            v1::ReleaseLeaseRequest rel;
            rel.set_lease_id(u.granted().lease_id());
            v1::ReleaseLeaseResponse rresp;
            client->ReleaseLease(&rctx, rel, &rresp);
          }
          stream->Finish();
        }
      });
    }
    std::this_thread::sleep_for(std::chrono::seconds(seconds));
    stop = true;
    for (auto& t : threads) t.join();
    const double elapsed_s = MsSince(t0) / 1000;
    std::vector<double> all;
    for (const auto& w : waits) all.insert(all.end(), w.begin(), w.end());
    grants = int64_t(all.size());
    grants_per_s = double(grants) / elapsed_s;
    p50 = Percentile(all, 0.5);
    p99 = Percentile(all, 0.99);
  }
  std::printf(
      "lease grants: %.0f per second (%lld in %lld s; %d servers, %d clients), wait request->grant p50 %.2f ms, p99 "
      "%.2f ms\n",
      grants_per_s, static_cast<long long>(grants), static_cast<long long>(seconds), servers, clients, p50, p99);

  // 2. Tracker SIGKILLed and restarted on the same address: time until every server is back.
  double back_up_ms = 0, all_registered_ms = 0;
  {
    Servers farm(address, restart_servers, 30000);
    while (RegisteredServers(stub.get()) < restart_servers) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    tracker->Kill(SIGKILL);
    tracker->Wait();
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));  // down long enough for every server to notice
    tracker = std::make_unique<testing::ChildProcess>();
    const auto restarted = Clock::now();
    tracker->Start({bin + "/rpc_tracker", "--listen", address, "--heartbeat-ms", "1000"}, env);
    if (tracker->WaitForLine("listening on", 10000).empty()) return 1;
    back_up_ms = MsSince(restarted);
    auto fresh = v1::Tracker::NewStub(service::FarmChannel(address));
    while (RegisteredServers(fresh.get()) < restart_servers && MsSince(restarted) < 30000) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    all_registered_ms = MsSince(restarted);
  }
  std::printf("tracker restart: listening again after %.0f ms; all %d servers registered %.0f ms after the restart\n",
              back_up_ms, restart_servers, all_registered_ms);
  if (!json_path.empty()) {
    nlohmann::ordered_json j = {{"servers", servers},
                                {"clients", clients},
                                {"lease_grants_per_s", grants_per_s},
                                {"lease_wait_p50_ms", p50},
                                {"lease_wait_p99_ms", p99},
                                {"restart_servers", restart_servers},
                                {"tracker_listening_after_ms", back_up_ms},
                                {"all_servers_registered_after_ms", all_registered_ms}};
    std::ofstream(json_path) << j.dump(1) << "\n";
  }
  tracker->Kill(SIGTERM);
  return 0;
}
