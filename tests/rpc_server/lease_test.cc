// The lease protocol with real processes on 127.0.0.1 (rpc_tracker + rpc_servers, ephemeral
// ports, 200-300 ms heartbeats). Every test watches the tracker's status throughout and asks each
// server what it served: no server ever serves two leases at once.
//  - a client measuring past its lease period keeps its lease (it renews);
//  - a SIGSTOPped leased server is abandoned within 3 heartbeat periods, the batch completes on
//    another server, and after SIGCONT the stale lease is refused;
//  - a tracker SIGKILLed and restarted mid-tune does not grant the in-use server to a second client;
//  - a Measure without the granted lease is refused;
//  - a tracker down for 5 s during a tune delays it, never fails it.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <map>
#include <thread>

#include "common/local_farm.h"
#include "common/test_files.h"
#include "tunefarm/rpc_server/measure_client.h"
#include "tunefarm/runtime/mutex.h"
#include "tunefarm/service/auth.h"
#include "tunefarm/v1/measure.grpc.pb.h"
#include "tunefarm/v1/tracker.grpc.pb.h"

namespace tunefarm::rpc_server {
namespace {

const char* kToken = "lease-test-token-0123456789";
using Clock = std::chrono::steady_clock;

double MsSince(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

class Leases : public ::testing::Test {
 protected:
  void StartFarm(int servers, int heartbeat_ms) {
    heartbeat_ms_ = heartbeat_ms;
    dir_ = ::testing::TempDir() + "tunefarm_lease_" + std::to_string(getpid());
    ASSERT_EQ(system(("rm -rf " + dir_ + " && mkdir -p " + dir_).c_str()), 0);
    ASSERT_EQ(farm_.StartTracker(RPC_TRACKER, heartbeat_ms), "");
    for (int i = 0; i < servers; ++i) ASSERT_EQ(farm_.StartServer({RPC_SERVER, MEASURE_CHILD, "cpu", dir_, ""}), "");
    watcher_ = std::thread([this] { WatchTracker(); });
  }
  void TearDown() override {
    stop_watching_ = true;
    if (watcher_.joinable()) watcher_.join();
    // From the tracker's status: a lease id never on two servers at once, and a server never
    // back to a lease it had left (A, B, A).
    {
      MutexLock lock(&mu_);
      for (const auto& [address, leases] : seen_) {
        for (size_t i = 0; i < leases.size(); ++i) {
          for (size_t j = i + 2; j < leases.size(); ++j)
            EXPECT_NE(leases[i], leases[j]) << address << " went back to a lease";
        }
      }
      EXPECT_EQ(double_booked_, 0) << "the tracker showed one lease on two servers";
    }
    // From the servers themselves: the leases their batches ran under never interleave.
    for (const auto& address : farm_.server_addresses()) ExpectNoOverlap(address);
    ASSERT_EQ(system(("rm -rf " + dir_).c_str()), 0);
  }

  v1::FarmStatusResponse Status() {
    auto stub = v1::Tracker::NewStub(service::FarmChannel(farm_.tracker_address()));
    grpc::ClientContext ctx;
    service::AttachToken(&ctx, kToken);
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(2));
    v1::FarmStatusResponse resp;
    stub->FarmStatus(&ctx, v1::FarmStatusRequest(), &resp);
    return resp;
  }
  v1::ServerStateResponse State(const std::string& address) {
    auto stub = v1::Measure::NewStub(service::FarmChannel(address));
    grpc::ClientContext ctx;
    service::AttachToken(&ctx, kToken);
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
    v1::ServerStateResponse resp;
    EXPECT_TRUE(stub->ServerState(&ctx, v1::ServerStateRequest(), &resp).ok()) << address;
    return resp;
  }
  void ExpectNoOverlap(const std::string& address) {
    const auto state = State(address);
    for (int i = 1; i < state.lease_uses_size(); ++i) {
      EXPECT_LE(state.lease_uses(i - 1).last_batch_ms(), state.lease_uses(i).first_batch_ms())
          << address << ": lease " << state.lease_uses(i - 1).lease_id() << " overlaps "
          << state.lease_uses(i).lease_id();
      EXPECT_NE(state.lease_uses(i - 1).lease_id(), state.lease_uses(i).lease_id());
    }
  }
  void WatchTracker() EXCLUDES(mu_) {
    while (!stop_watching_) {
      auto st = Status();
      std::map<std::string, std::string> holder;
      MutexLock lock(&mu_);
      for (const auto& s : st.servers()) {
        if (s.lease_id().empty()) continue;
        auto& seq = seen_[s.address()];
        if (seq.empty() || seq.back() != s.lease_id()) seq.push_back(s.lease_id());
        if (holder.count(s.lease_id())) ++double_booked_;
        holder[s.lease_id()] = s.address();
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  std::string AddressOfLease(const std::string& lease) {
    const auto status = Status();
    for (const auto& s : status.servers()) {
      if (s.lease_id() == lease) return s.address();
    }
    return "";
  }
  size_t ServerIndex(const std::string& address) {
    for (size_t i = 0; i < farm_.server_addresses().size(); ++i) {
      if (farm_.server_addresses()[i] == address) return i;
    }
    return size_t(-1);
  }
  MeasureInput Kernel(int sleep_ms) {
    const std::string name = "k" + std::to_string(sleep_ms);
    const std::string c = dir_ + "/" + name + ".c", so = dir_ + "/" + name + ".so";
    std::ofstream(c) << "#include <stdint.h>\n#include <unistd.h>\nint32_t kernel(void* const* a) { usleep("
                     << sleep_ms * 1000 << "); return 0; }\n";
    EXPECT_EQ(system(("cc -shared -fPIC -o " + so + " " + c).c_str()), 0);
    MeasureInput in;
    in.library = tunefarm::testing::ReadFile(so);
    in.spec.symbol = "kernel";
    in.spec.args = {ArgSpec{{16}, "float32", "input"}, ArgSpec{{16}, "float32", "output"}};
    in.spec.timing.number = 1;
    in.spec.timing.repeat = 1;
    in.spec.timing.timeout_ms = 10000;
    return in;
  }
  MeasureClientOptions Options(const std::string& client, int64_t lease_ms = 60000) {
    MeasureClientOptions o{farm_.tracker_address(), "cpu", kToken, client, 0, lease_ms, {}, {}};
    o.log = [this, client](const std::string& line) {
      MutexLock lock(&mu_);
      client_log_.push_back({Clock::now(), client + ": " + line});
    };
    return o;
  }
  // A client measuring batches in a loop until `stop`; counts failures and the leases used.
  struct Tune {
    std::atomic<bool> stop{false};
    std::atomic<int> batches{0}, failures{0};
    std::set<std::string> leases;
    std::string last_error;
    std::thread thread;
  };
  void StartTune(Tune* t, MeasureClientOptions options, const MeasureInput& kernel) {
    t->thread = std::thread([t, options, kernel] {
      MeasureClient client(options);
      while (!t->stop) {
        auto r = client.Measure({kernel, kernel}, 60000);
        if (r.ok()) {
          ++t->batches;
          t->leases.insert(client.lease_id());
        } else {
          ++t->failures;
          t->last_error = r.status().ToString();
        }
      }
    });
  }
  void RestartTrackerAfter(int down_ms) {
    const std::string address = farm_.tracker_address();
    farm_.tracker().Kill(SIGKILL);
    farm_.tracker().Wait();
    std::this_thread::sleep_for(std::chrono::milliseconds(down_ms));
    ASSERT_EQ(farm_.StartTracker(RPC_TRACKER, heartbeat_ms_, address), "");
    ASSERT_EQ(farm_.tracker_address(), address);
  }
  bool WaitForServers(int n, int timeout_ms) {
    for (int i = 0; i < timeout_ms / 20; ++i) {
      if (Status().servers_size() == n) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return false;
  }

  tunefarm::testing::LocalFarm farm_{kToken};
  std::string dir_;
  int heartbeat_ms_ = 200;
  Mutex mu_;
  std::map<std::string, std::vector<std::string>> seen_ GUARDED_BY(mu_);
  int double_booked_ GUARDED_BY(mu_) = 0;
  std::vector<std::pair<Clock::time_point, std::string>> client_log_ GUARDED_BY(mu_);
  std::atomic<bool> stop_watching_{false};
  std::thread watcher_;
};

TEST_F(Leases, ATuneRunningPastItsLeasePeriodKeepsItsLease) {
  StartFarm(1, 200);
  const MeasureInput k = Kernel(20);
  Tune tune;
  StartTune(&tune, Options("long-tune", 1000), k);  // a 1 s lease, renewed every ~333 ms
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  // A second client waits the whole time: the one server is never granted twice.
  MeasureClient second(Options("second"));
  auto r = second.Measure({k}, 2500);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kDeadlineExceeded) << r.status().ToString();
  // Four lease periods at least, and 20 batches however slow the machine is (ASan, a loaded CI):
  // the assertion is on what happened, never on how fast.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  std::this_thread::sleep_for(std::chrono::milliseconds(1200));  // 4 s in all: four lease periods
  while (tune.batches.load() <= 20 && tune.failures.load() == 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  tune.stop = true;
  tune.thread.join();
  EXPECT_EQ(tune.failures.load(), 0) << tune.last_error;
  EXPECT_GT(tune.batches.load(), 20);
  EXPECT_EQ(tune.leases.size(), 1u);
  EXPECT_EQ(Status().leases_expired(), 0);
  EXPECT_EQ(State(farm_.server_addresses()[0]).lease_uses_size(), 1);
}

TEST_F(Leases, AFrozenServerIsAbandonedAndItsStaleLeaseRefused) {
  StartFarm(2, 300);
  const MeasureInput slow = Kernel(400);
  MeasureClient client(Options("tune"));
  ASSERT_TRUE(client.Measure({Kernel(0)}, 10000).ok());
  const std::string stale_lease = client.lease_id();
  const std::string frozen = AddressOfLease(stale_lease);
  const size_t frozen_index = ServerIndex(frozen);
  ASSERT_NE(frozen_index, size_t(-1));
  Clock::time_point stopped_at;
  std::thread freezer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(600));  // mid-batch
    stopped_at = Clock::now();
    farm_.server(frozen_index).Kill(SIGSTOP);
  });
  const auto t0 = Clock::now();
  auto r =
      client.Measure({slow, slow, slow, slow, slow, slow}, 60000);  // 4.8 s of kernels (warm-up + one timed run each)
  freezer.join();
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_NE(client.lease_id(), stale_lease);
  EXPECT_NE(AddressOfLease(client.lease_id()), frozen);
  // When did the client let go? Its log says, at the moment it learned the lease ended.
  double abandoned_ms = -1;
  {
    MutexLock lock(&mu_);
    for (const auto& [at, line] : client_log_) {
      if (line.find("the tracker ended lease " + stale_lease) != std::string::npos) {
        abandoned_ms = std::chrono::duration<double, std::milli>(at - stopped_at).count();
        break;
      }
    }
  }
  {
    MutexLock lock(&mu_);
    for (const auto& [at, line] : client_log_)
      std::printf("  +%.0f ms %s\n", std::chrono::duration<double, std::milli>(at - t0).count(), line.c_str());
  }
  std::printf("frozen server abandoned %.0f ms after SIGSTOP (heartbeat %d ms); batch done in %.0f ms\n", abandoned_ms,
              heartbeat_ms_, MsSince(t0));
  EXPECT_GE(abandoned_ms, 0);
  // 3 heartbeat periods, plus the tracker's 50 ms tick and the notice's delivery.
  EXPECT_LE(abandoned_ms, 3 * heartbeat_ms_ + 200);
  EXPECT_FALSE(farm_.tracker().WaitForLine("lost: no heartbeat", 5000).empty());

  // Thawed: it registers again (its lease is not restored) and refuses the stale lease.
  farm_.server(frozen_index).Kill(SIGCONT);
  EXPECT_FALSE(farm_.server(frozen_index).WaitForLine("lease " + stale_lease + " ended", 10000).empty());
  auto stub = v1::Measure::NewStub(service::FarmChannel(frozen));
  grpc::ClientContext ctx;
  service::AttachToken(&ctx, kToken);
  v1::MeasureRequest req;
  req.set_lease_id(stale_lease);
  v1::MeasureResponse resp;
  grpc::Status s = stub->Measure(&ctx, req, &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(s.error_message(),
            "lease '" + stale_lease + "' does not hold this server (the tracker says no lease does)");
  // The client carries on with its new server.
  ASSERT_TRUE(client.Measure({Kernel(0)}, 10000).ok());
}

TEST_F(Leases, ATrackerRestartedMidTuneDoesNotDoubleBookTheServerInUse) {
  StartFarm(2, 200);
  const MeasureInput k = Kernel(30);
  Tune a;
  StartTune(&a, Options("tune-a"), k);
  for (int i = 0; i < 200 && a.batches == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  ASSERT_GT(a.batches.load(), 0);
  const std::string lease_a = *a.leases.begin();
  const std::string server_a = AddressOfLease(lease_a);
  RestartTrackerAfter(300);
  ASSERT_TRUE(WaitForServers(2, 10000));
  // The server in use came back busy, with tune-a's lease restored.
  std::string restored_on;
  for (int i = 0; i < 100 && restored_on.empty(); ++i) {
    restored_on = AddressOfLease(lease_a);
    if (restored_on.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_EQ(restored_on, server_a);
  MeasureClient b(Options("tune-b"));
  auto r = b.Measure({k}, 10000);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_NE(AddressOfLease(b.lease_id()), server_a);
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  a.stop = true;
  a.thread.join();
  EXPECT_EQ(a.failures.load(), 0) << a.last_error;
  EXPECT_EQ(a.leases.size(), 1u);  // kept its lease across the restart
  EXPECT_FALSE(farm_.tracker().WaitForLine("lease " + lease_a + " restored", 5000).empty());
}

TEST_F(Leases, AMeasureWithoutTheGrantedLeaseIsRefused) {
  StartFarm(1, 200);
  const std::string address = farm_.server_addresses()[0];
  auto stub = v1::Measure::NewStub(service::FarmChannel(address));
  auto call = [&](const std::string& lease) {
    grpc::ClientContext ctx;
    service::AttachToken(&ctx, kToken);
    v1::MeasureRequest req;
    req.set_lease_id(lease);
    v1::MeasureResponse resp;
    return stub->Measure(&ctx, req, &resp);
  };
  grpc::Status none = call("");
  EXPECT_EQ(none.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(none.error_message(), "no lease: a Measure call must carry the lease the tracker granted for this server");
  grpc::Status bogus = call("lease-00000000-1");
  EXPECT_EQ(bogus.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(bogus.error_message(),
            "lease 'lease-00000000-1' does not hold this server (the tracker says no lease does)");
  MeasureClient holder(Options("holder"));
  ASSERT_TRUE(holder.Measure({Kernel(0)}, 10000).ok());
  grpc::Status other = call("lease-00000000-2");
  EXPECT_EQ(other.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(other.error_message(), "lease 'lease-00000000-2' does not hold this server (the tracker says lease '" +
                                       holder.lease_id() + "' does)");
  EXPECT_TRUE(call(holder.lease_id()).ok());  // the holder's own lease, sent by hand
  EXPECT_EQ(State(address).refused_calls(), 3);
}

TEST_F(Leases, ATrackerDownForFiveSecondsDelaysATuneNeverFailsIt) {
  StartFarm(1, 200);
  const MeasureInput k = Kernel(20);
  Tune a;
  StartTune(&a, Options("tune-a"), k);
  for (int i = 0; i < 200 && a.batches == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  // A client that starts while the tracker is down waits for it (and then for the server).
  std::atomic<bool> late_ok{false};
  std::string late_error;
  std::thread late;
  const std::string address = farm_.tracker_address();
  farm_.tracker().Kill(SIGKILL);
  farm_.tracker().Wait();
  late = std::thread([&] {
    MeasureClient c(Options("late"));
    auto r = c.Measure({k}, 30000);
    late_ok = r.ok();
    if (!r.ok()) late_error = r.status().ToString();
  });
  const int before = a.batches;
  std::this_thread::sleep_for(std::chrono::milliseconds(5000));
  const int during = a.batches - before;
  ASSERT_EQ(farm_.StartTracker(RPC_TRACKER, heartbeat_ms_, address), "");
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  a.stop = true;
  a.thread.join();
  late.join();
  std::printf("tracker down 5 s: the tune measured %d batches meanwhile, %d in all, %d failures\n", during,
              a.batches.load(), a.failures.load());
  EXPECT_EQ(a.failures.load(), 0) << a.last_error;
  EXPECT_EQ(a.leases.size(), 1u);
  EXPECT_GT(during, 0);  // it kept measuring on its server
  EXPECT_TRUE(late_ok) << late_error;
  if (!late_ok)
    std::printf("tracker:\n%s\nserver:\n%s\n", farm_.tracker().Drain(200).c_str(), farm_.server(0).Drain(200).c_str());
}

}  // namespace
}  // namespace tunefarm::rpc_server
