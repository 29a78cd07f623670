// TrackerCore with a manual clock: queue order, deadlines, lease expiry, lost servers.
#include "tunefarm/tracker/tracker_core.h"

#include <gtest/gtest.h>

#include <random>

namespace tunefarm::tracker {
namespace {

class TrackerCoreTest : public ::testing::Test {
 protected:
  int64_t now_ = 1000;
  TrackerCore core_{TrackerOptions{100, 3, {}, {}}, [this] { return now_; }};
};

TEST_F(TrackerCoreTest, RequestForUnknownKeyFailsFast) {
  auto r = core_.RequestLease("rasp4b", 0, 5000, 10000, "t");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(r.status().message(), "no server is registered under key 'rasp4b'");
  EXPECT_FALSE(core_.Register("bad key!", "127.0.0.1:1", {}).ok());
  EXPECT_FALSE(core_.RequestLease("x", 5000, 5000, 10000, "t").ok());  // priority out of range
}

TEST_F(TrackerCoreTest, TwoHundredMixedPriorityRequestsAreServedInPriorityThenFifoOrder) {
  ASSERT_TRUE(core_.Register("cpu", "127.0.0.1:1", {}).ok());
  auto blocker = core_.RequestLease("cpu", 0, 100000, 100000, "blocker");
  ASSERT_TRUE(blocker.ok());
  ASSERT_EQ(core_.Poll(*blocker).kind, RequestState::kGranted);
  std::mt19937 rng(1);
  std::vector<std::pair<int64_t, int>> requests;  // (id, priority)
  for (int i = 0; i < 200; ++i) {
    int prio = int(rng() % 5) - 2;
    auto id = core_.RequestLease("cpu", prio, 100000, 100000, "c" + std::to_string(i));
    ASSERT_TRUE(id.ok());
    requests.emplace_back(*id, prio);
    ++now_;
  }
  std::vector<std::pair<int64_t, int>> expected = requests;
  std::stable_sort(expected.begin(), expected.end(), [](auto& a, auto& b) { return a.second > b.second; });
  EXPECT_EQ(core_.Poll(expected[0].first).position, 1);
  EXPECT_EQ(core_.Poll(expected[199].first).position, 200);
  std::string lease = core_.Poll(*blocker).lease_id;
  for (const auto& [id, prio] : expected) {
    ASSERT_TRUE(core_.Release(lease).ok());
    RequestState s = core_.Poll(id);
    ASSERT_EQ(s.kind, RequestState::kGranted) << "request " << id << " priority " << prio;
    lease = s.lease_id;
  }
}

TEST_F(TrackerCoreTest, DeadlinesExpiryAndLostServers) {
  auto server = core_.Register("cpu", "127.0.0.1:1", {});
  ASSERT_TRUE(server.ok());
  auto first = core_.RequestLease("cpu", 0, 1000, 1000, "a");
  auto second = core_.RequestLease("cpu", 0, 250, 1000, "b");
  ASSERT_TRUE(first.ok() && second.ok());
  EXPECT_EQ(core_.Poll(*first).kind, RequestState::kGranted);
  EXPECT_EQ(core_.Poll(*second).kind, RequestState::kQueued);
  now_ += 260;
  ASSERT_TRUE(core_.Heartbeat(server->server_id, 3).known);
  RequestState late = core_.Poll(*second);
  EXPECT_EQ(late.kind, RequestState::kFailed);
  EXPECT_EQ(late.failure.code(), StatusCode::kDeadlineExceeded);
  // Not renewed: the lease expires and the server is free again.
  for (int i = 0; i < 8; ++i) {
    now_ += 100;
    ASSERT_TRUE(core_.Heartbeat(server->server_id, 3).known);
  }
  RequestState expired = core_.Poll(*first);
  EXPECT_EQ(expired.kind, RequestState::kEnded);
  EXPECT_EQ(expired.end, LeaseEnd::kExpired);
  // A holder whose server stops heartbeating is told; the server disappears from status.
  auto third = core_.RequestLease("cpu", 0, 1000, 60000, "c");
  ASSERT_TRUE(third.ok());
  ASSERT_EQ(core_.Poll(*third).kind, RequestState::kGranted);
  EXPECT_EQ(core_.GetStatus().keys[0].busy, 1);
  now_ += 301;
  RequestState lost = core_.Poll(*third);
  EXPECT_EQ(lost.kind, RequestState::kEnded);
  EXPECT_EQ(lost.end, LeaseEnd::kServerLost);
  EXPECT_TRUE(core_.GetStatus().servers.empty());
  EXPECT_FALSE(core_.Heartbeat(server->server_id, 3).known);  // must register again
}

}  // namespace
}  // namespace tunefarm::tracker
