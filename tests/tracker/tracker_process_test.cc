// rpc_tracker as a real process on 127.0.0.1 (ephemeral port), driven over gRPC: the token is
// required on every call, leases stream their queue position and grant, a holder is told when its
// server stops heartbeating, and `tunefarm tracker status` shows the farm.
#include <gtest/gtest.h>
#include <signal.h>

#include <thread>

#include "common/process.h"
#include "tunefarm/service/auth.h"
#include "tunefarm/v1/tracker.grpc.pb.h"

namespace tunefarm::tracker {
namespace {

using service::AttachToken;
using service::FarmChannel;

const char* kToken = "test-token-0123456789";

class TrackerProcess : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(
        tracker_.Start({RPC_TRACKER, "--listen", "127.0.0.1:0", "--heartbeat-ms", std::to_string(heartbeat_ms_)},
                       {std::string("TUNEFARM_TOKEN=") + kToken}));
    std::string line = tracker_.WaitForLine("listening on", 10000);
    ASSERT_FALSE(line.empty()) << "rpc_tracker did not start";
    address_ = tunefarm::testing::AddressFromLine(line);
    stub_ = v1::Tracker::NewStub(FarmChannel(address_));
  }
  grpc::Status Register(const std::string& key, const std::string& addr, std::string* id, const char* token = kToken) {
    grpc::ClientContext ctx;
    if (token) AttachToken(&ctx, token);
    v1::RegisterRequest req;
    req.set_key(key);
    req.set_address(addr);
    req.mutable_device()->set_arch("x86_64");
    req.mutable_device()->set_cores(2);
    v1::RegisterResponse resp;
    grpc::Status s = stub_->Register(&ctx, req, &resp);
    if (id) *id = resp.server_id();
    return s;
  }
  bool Heartbeat(const std::string& id) {
    grpc::ClientContext ctx;
    AttachToken(&ctx, kToken);
    v1::HeartbeatRequest req;
    req.set_server_id(id);
    v1::HeartbeatResponse resp;
    return stub_->Heartbeat(&ctx, req, &resp).ok() && resp.known();
  }
  // Short, so a server that stops heartbeating is lost within a test (3 periods).
  int heartbeat_ms_ = 100;
  tunefarm::testing::ChildProcess tracker_;
  std::string address_;
  std::unique_ptr<v1::Tracker::Stub> stub_;
};

TEST_F(TrackerProcess, CallsWithoutOrWithAWrongTokenAreRefused) {
  std::string id;
  EXPECT_EQ(Register("cpu", "127.0.0.1:1", &id, nullptr).error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(Register("cpu", "127.0.0.1:1", &id, "wrong-token-0123456789").error_code(),
            grpc::StatusCode::UNAUTHENTICATED);
  grpc::Status ok = Register("cpu", "127.0.0.1:1", &id);
  EXPECT_TRUE(ok.ok()) << ok.error_message();
  // Refused in the transport's auth filter, before the request is read; logged (rate-limited).
  std::string refusal = tracker_.WaitForLine("refused a call", 5000);
  EXPECT_NE(refusal.find("rpc_tracker: refused a call: no token"), std::string::npos) << refusal;
}

TEST_F(TrackerProcess, LeaseStreamQueueGrantAndLostServer) {
  std::string id;
  ASSERT_TRUE(Register("rasp4b", "127.0.0.1:7001", &id).ok());
  grpc::ClientContext missing_ctx;
  AttachToken(&missing_ctx, kToken);
  v1::LeaseRequest missing;
  missing.set_key("h100");
  missing.set_deadline_ms(1000);
  missing.set_lease_ms(5000);
  auto missing_stream = stub_->RequestLease(&missing_ctx, missing);
  v1::LeaseUpdate update;
  EXPECT_FALSE(missing_stream->Read(&update));
  grpc::Status missing_status = missing_stream->Finish();
  EXPECT_EQ(missing_status.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(missing_status.error_message(), "no server is registered under key 'h100'");

  // Heartbeat for a while, then stop: the holder must hear SERVER_LOST within 3 periods (+ slack).
  std::atomic<bool> beating{true};
  std::thread heart([&] {
    while (beating) {
      Heartbeat(id);
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  });
  grpc::ClientContext ctx;
  AttachToken(&ctx, kToken);
  v1::LeaseRequest req;
  req.set_key("rasp4b");
  req.set_priority(5);
  req.set_deadline_ms(5000);
  req.set_lease_ms(60000);
  req.set_client("test");
  auto stream = stub_->RequestLease(&ctx, req);
  ASSERT_TRUE(stream->Read(&update));
  ASSERT_TRUE(update.has_granted()) << update.DebugString();
  EXPECT_EQ(update.granted().server_address(), "127.0.0.1:7001");

  // A second request queues behind it and reports position 1.
  grpc::ClientContext ctx2;
  AttachToken(&ctx2, kToken);
  req.set_client("second");
  req.set_deadline_ms(300);
  auto second = stub_->RequestLease(&ctx2, req);
  ASSERT_TRUE(second->Read(&update));
  ASSERT_TRUE(update.has_queued());
  EXPECT_EQ(update.queued().position(), 1);
  EXPECT_FALSE(second->Read(&update));
  EXPECT_EQ(second->Finish().error_code(), grpc::StatusCode::DEADLINE_EXCEEDED);

  auto stopped = std::chrono::steady_clock::now();
  beating = false;
  heart.join();
  ASSERT_TRUE(stream->Read(&update));
  ASSERT_TRUE(update.has_ended());
  EXPECT_EQ(update.ended().reason(), v1::LeaseEnded::SERVER_LOST);
  // How soon (3 heartbeat periods) is TrackerCoreTest's, on a virtual clock; here, that it happens.
  double waited = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - stopped).count();
  std::printf("the lease ended %.0f ms after the heartbeats stopped\n", waited);
  stream->Finish();

  std::string status = [&] {
    std::string cmd = std::string("TUNEFARM_TOKEN=") + kToken + " " + TUNEFARM_CLI + " tracker status --tracker " +
                      address_ + " 2>&1";
    FILE* p = popen(cmd.c_str(), "r");
    std::string out;
    char buf[4096];
    for (size_t n; (n = fread(buf, 1, sizeof(buf), p)) > 0;) out.append(buf, n);
    pclose(p);
    return out;
  }();
  EXPECT_NE(status.find("(no servers registered)"), std::string::npos) << status;
}

// Servers registered here never heartbeat: with 100 ms periods a loaded machine could drop them
// before the `tunefarm tracker status` process (a second or so to start under load) asks.
class TrackerStatusProcess : public TrackerProcess {
 protected:
  TrackerStatusProcess() { heartbeat_ms_ = 600000; }
};

TEST_F(TrackerStatusProcess, StatusShowsServersAndQueues) {
  std::string a, b;
  ASSERT_TRUE(Register("x86-avx512", "127.0.0.1:7101", &a).ok());
  ASSERT_TRUE(Register("rasp4b", "127.0.0.1:7102", &b).ok());
  std::string cmd = std::string("TUNEFARM_TOKEN=") + kToken + " " + TUNEFARM_CLI + " tracker status --tracker " +
                    address_ + " --json 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  std::string out;
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof(buf), p)) > 0;) out.append(buf, n);
  pclose(p);
  EXPECT_NE(out.find("\"key\": \"x86-avx512\""), std::string::npos) << out;
  EXPECT_NE(out.find("\"address\": \"127.0.0.1:7102\""), std::string::npos) << out;
  EXPECT_NE(out.find("\"free\": 1"), std::string::npos) << out;
}

}  // namespace
}  // namespace tunefarm::tracker
