// Registrar against a real TrackerCore (in this process, manual clock) behind its TrackerLink:
// registration with backoff, heartbeats, the lease the tracker names, and what happens to a lease
// across a tracker restart, an unreachable tracker and a server the tracker dropped.
#include "tunefarm/service/registrar.h"

#include <gtest/gtest.h>

#include <memory>

#include "tunefarm/tracker/tracker_core.h"

namespace tunefarm::service {
namespace {

// A TrackerCore spoken to through the link interface; `down` makes every call fail as an
// unreachable tracker does.
class CoreLink final : public TrackerLink {
 public:
  explicit CoreLink(tracker::TrackerCore** core) : core_(core) {}
  bool down = false;
  int calls = 0;

  Result<v1::RegisterResponse> Register(const v1::RegisterRequest& r) override {
    ++calls;
    if (down) return Status::IOError("failed to connect to all addresses");
    tracker::LeaseInfo reported{r.current_lease().lease_id(), r.current_lease().client(), r.current_lease().lease_ms()};
    TUNEFARM_ASSIGN_OR_RETURN(auto reg, (*core_)->Register(r.key(), r.address(), {}, r.previous_server_id(), reported));
    v1::RegisterResponse out;
    out.set_server_id(reg.server_id);
    out.set_heartbeat_interval_ms(int32_t((*core_)->heartbeat_interval_ms()));
    Fill(reg.lease, out.mutable_lease());
    return out;
  }
  Result<v1::HeartbeatResponse> Heartbeat(const v1::HeartbeatRequest& r) override {
    ++calls;
    if (down) return Status::IOError("failed to connect to all addresses");
    auto reply = (*core_)->Heartbeat(r.server_id(), r.measurements_done());
    v1::HeartbeatResponse out;
    out.set_known(reply.known);
    Fill(reply.lease, out.mutable_lease());
    return out;
  }

 private:
  static void Fill(const tracker::LeaseInfo& l, v1::ServerLease* out) {
    out->set_lease_id(l.lease_id);
    out->set_client(l.client);
    out->set_lease_ms(l.lease_ms);
  }
  tracker::TrackerCore** core_;
};

class RegistrarTest : public ::testing::Test {
 protected:
  RegistrarTest() { Restart(); }
  void Restart() {
    core_ = std::make_unique<tracker::TrackerCore>(tracker::TrackerOptions{100, 3, {}, {}}, [this] { return now_; });
    raw_ = core_.get();
  }
  std::unique_ptr<Registrar> MakeRegistrar(const std::string& address) {
    RegistrarOptions options;
    options.key = "cpu";
    options.address = address;
    auto r = std::make_unique<Registrar>(options, &link_, [this] { return now_; });
    r->set_log([this](const std::string& line) { log_.push_back(line); });
    return r;
  }
  // Advances the clock to the registrar's next action and runs it, `steps` times.
  void Run(Registrar& r, int steps) {
    for (int i = 0; i < steps; ++i) now_ += r.Step();
    r.Step();
  }
  std::string Grant(const std::string& client) {
    auto id = raw_->RequestLease("cpu", 0, 1000, 60000, client);
    EXPECT_TRUE(id.ok());
    auto s = raw_->Poll(*id);
    EXPECT_EQ(s.kind, tracker::RequestState::kGranted);
    return s.lease_id;
  }

  int64_t now_ = 1000;
  std::unique_ptr<tracker::TrackerCore> core_;
  tracker::TrackerCore* raw_ = nullptr;
  CoreLink link_{&raw_};
  std::vector<std::string> log_;
};

TEST_F(RegistrarTest, RegistersWithBackoffThenHeartbeats) {
  link_.down = true;
  auto r = MakeRegistrar("127.0.0.1:1");
  std::vector<int64_t> waits;
  for (int i = 0; i < 7; ++i) {
    const int64_t wait = r->Step();
    waits.push_back(wait);
    now_ += wait;
  }
  EXPECT_EQ(waits, (std::vector<int64_t>{100, 200, 400, 800, 1000, 1000, 1000}));
  EXPECT_TRUE(r->server_id().empty());
  link_.down = false;
  r->Step();
  EXPECT_EQ(r->server_id().rfind("srv1-", 0), 0u) << r->server_id();
  EXPECT_EQ(log_.back(), "registered as " + r->server_id());
  EXPECT_EQ(r->Step(), 100);  // the tracker's heartbeat interval
  Run(*r, 20);                // two seconds of heartbeats keep it registered
  EXPECT_EQ(raw_->GetStatus().servers.size(), 1u);
  EXPECT_EQ(r->registrations(), 1);
}

// A tracker restarted numbers its servers from 1 again. A server whose heartbeat comes after
// another server already re-registered must be unknown to the new tracker, not taken for the one
// that got its old number: otherwise it heartbeats on, listed nowhere (the failure of
// Farm.ServersReRegisterAfterTheTrackerRestarts under load).
TEST_F(RegistrarTest, AfterATrackerRestartAnOldIdIsNeverAnotherServers) {
  auto a = MakeRegistrar("127.0.0.1:1");
  auto b = MakeRegistrar("127.0.0.1:2");
  a->Step();
  b->Step();
  const std::string a_before = a->server_id();
  ASSERT_EQ(a_before.rfind("srv1-", 0), 0u) << a_before;
  Restart();
  // b notices first (its heartbeat is due) and registers again: the new tracker's first server.
  ASSERT_TRUE(b->RefreshLease().ok());
  ASSERT_EQ(b->server_id().rfind("srv1-", 0), 0u) << b->server_id();
  EXPECT_NE(b->server_id(), a_before);
  // a's next heartbeat carries its old id: unknown, so it registers again.
  Run(*a, 3);
  EXPECT_EQ(raw_->GetStatus().servers.size(), 2u);
  EXPECT_NE(a->server_id(), a_before);
  EXPECT_NE(a->server_id(), b->server_id());
}

TEST_F(RegistrarTest, FollowsTheLeaseTheTrackerNamesAndRefreshesOnDemand) {
  auto r = MakeRegistrar("127.0.0.1:1");
  r->Step();
  EXPECT_EQ(r->lease_id(), "");
  const std::string lease = Grant("a");
  EXPECT_EQ(r->lease_id(), "");  // not told yet
  auto fresh = r->RefreshLease();
  ASSERT_TRUE(fresh.ok());
  EXPECT_EQ(*fresh, lease);
  EXPECT_EQ(r->lease_id(), lease);
  ASSERT_TRUE(raw_->Release(lease).ok());
  Run(*r, 1);
  EXPECT_EQ(r->lease_id(), "");
}

TEST_F(RegistrarTest, ALeaseInUseSurvivesATrackerRestart) {
  auto r = MakeRegistrar("127.0.0.1:1");
  r->Step();
  const std::string lease = Grant("tune-1");
  ASSERT_TRUE(r->RefreshLease().ok());
  // The tracker dies: heartbeats fail, the lease is kept (nobody can be granted the server).
  link_.down = true;
  now_ += r->Step();
  r->Step();
  EXPECT_EQ(r->lease_id(), lease);
  // A new tracker comes up; the server registers again reporting its lease, which is restored.
  Restart();
  link_.down = false;
  Run(*r, 3);
  EXPECT_EQ(r->server_id().rfind("srv1-", 0), 0u) << r->server_id();  // the new tracker's first id
  EXPECT_EQ(r->lease_id(), lease);
  auto status = raw_->GetStatus();
  ASSERT_EQ(status.servers.size(), 1u);
  EXPECT_TRUE(status.servers[0].busy);
  EXPECT_EQ(status.servers[0].lease_id, lease);
  EXPECT_EQ(status.servers[0].lease_client, "tune-1");
  // A second client waits: the server is not granted twice. The holder renews and releases.
  auto other = raw_->RequestLease("cpu", 0, 1000, 60000, "tune-2");
  ASSERT_TRUE(other.ok());
  EXPECT_EQ(raw_->Poll(*other).kind, tracker::RequestState::kQueued);
  EXPECT_TRUE(raw_->Renew(lease).ok());
  ASSERT_TRUE(raw_->Release(lease).ok());
  EXPECT_EQ(raw_->Poll(*other).kind, tracker::RequestState::kGranted);
}

TEST_F(RegistrarTest, ALeaseTheTrackerEndedIsNotTakenBack) {
  auto r = MakeRegistrar("127.0.0.1:1");
  r->Step();
  const std::string lease = Grant("a");
  ASSERT_TRUE(r->RefreshLease().ok());
  // Frozen past three heartbeats: the tracker drops the server and ends its lease.
  now_ += 400;
  raw_->Tick();
  EXPECT_TRUE(raw_->GetStatus().servers.empty());
  // Thawed: "unknown" clears the lease at once; registering again does not restore it.
  r->Step();
  EXPECT_EQ(r->lease_id(), "");
  r->Step();
  EXPECT_FALSE(r->server_id().empty());
  EXPECT_EQ(r->lease_id(), "");
  EXPECT_EQ(log_.back(), "registered as " + r->server_id() + " (lease " + lease + " ended)");
  auto status = raw_->GetStatus();
  ASSERT_EQ(status.servers.size(), 1u);
  EXPECT_FALSE(status.servers[0].busy);
}

}  // namespace
}  // namespace tunefarm::service
