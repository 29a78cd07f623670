// The one Status <-> gRPC mapping: every tunefarm status code reaches a client through a real gRPC
// call as itself, with its message; and the service start every daemon uses answers the health
// service, refuses calls without the token before reading them, and caps request sizes.
#include "tunefarm/service/status_grpc.h"

#include <gtest/gtest.h>

#include <chrono>

#include "grpc/health/v1/health.grpc.pb.h"
#include "tunefarm/service/auth.h"
#include "tunefarm/service/server.h"
#include "tunefarm/v1/measure.grpc.pb.h"

namespace tunefarm::service {
namespace {

const char* kToken = "status-test-token-0123456789";

// Answers Measure with the status whose code is the request's number of kernels.
class EchoStatusService final : public v1::Measure::Service {
 public:
  grpc::Status Measure(grpc::ServerContext*, const v1::MeasureRequest* req, v1::MeasureResponse*) override {
    const auto code = static_cast<StatusCode>(req->kernels_size());
    return ToGrpcStatus(Status(code, "status " + std::string(StatusCodeName(code))));
  }
};

class FarmServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto listen = ParseListenAddress("127.0.0.1:0");
    ASSERT_TRUE(listen.ok());
    auto started = StartFarmServer({"status-test", *listen, {}, kToken, 64 << 10},
                                   {{v1::Measure::service_full_name(), &service_}});
    ASSERT_TRUE(started.ok()) << started.status().ToString();
    server_ = std::move(*started);
    stub_ = v1::Measure::NewStub(FarmChannel(server_.address));
  }
  void TearDown() override { server_.Shutdown(); }

  grpc::Status Call(int kernels, const char* token = kToken, size_t library_bytes = 0) {
    v1::MeasureRequest req;
    for (int i = 0; i < kernels; ++i) req.add_kernels();
    if (library_bytes) req.mutable_kernels(0)->set_library(std::string(library_bytes, 'x'));
    grpc::ClientContext ctx;
    // The server is up; a connection attempt a loaded machine drops is retried, not reported
    // as the call's status (the test is about the status mapping, not about connecting).
    ctx.set_wait_for_ready(true);
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));
    if (token) AttachToken(&ctx, token);
    v1::MeasureResponse resp;
    return stub_->Measure(&ctx, req, &resp);
  }

  EchoStatusService service_;
  FarmServer server_;
  std::unique_ptr<v1::Measure::Stub> stub_;
};

TEST_F(FarmServerTest, EveryStatusCodeRoundTripsThroughGrpc) {
  for (int c = 0; c <= int(StatusCode::kUnauthenticated); ++c) {
    const auto code = static_cast<StatusCode>(c);
    const Status sent =
        code == StatusCode::kOk ? Status::OK() : Status(code, "status " + std::string(StatusCodeName(code)));
    EXPECT_EQ(FromGrpcStatus(ToGrpcStatus(sent)).code(), code);
    const Status received = FromGrpcStatus(Call(c));
    EXPECT_EQ(received.code(), code) << StatusCodeName(code);
    EXPECT_EQ(received.message(), sent.message()) << StatusCodeName(code);
  }
  // The ones that used to reach clients as INTERNAL.
  EXPECT_EQ(ToGrpcStatus(Status::IOError("x")).error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_EQ(ToGrpcStatus(Status::Corruption("x")).error_code(), grpc::StatusCode::DATA_LOSS);
  EXPECT_EQ(ToGrpcStatus(Status::Unimplemented("x")).error_code(), grpc::StatusCode::UNIMPLEMENTED);
  // A code outside tunefarm's range keeps its message.
  const Status unknown = FromGrpcStatus(grpc::Status(grpc::StatusCode::DO_NOT_USE, "from the future"));
  EXPECT_EQ(unknown.code(), StatusCode::kUnknown);
  EXPECT_EQ(unknown.message(), "from the future");
}

TEST_F(FarmServerTest, TokenIsCheckedBeforeTheRequestAndRefusalsAreCounted) {
  EXPECT_EQ(Call(0, nullptr).error_code(), grpc::StatusCode::UNAUTHENTICATED);
  grpc::Status wrong = Call(0, "wrong-token-0123456789");
  EXPECT_EQ(wrong.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(wrong.error_message(), "missing or wrong farm token");
  EXPECT_EQ(server_.refused_calls(), 2);
  EXPECT_TRUE(Call(0).ok());
}

TEST_F(FarmServerTest, RequestsOverTheServiceCapAreRefused) {
  EXPECT_EQ(Call(1, kToken, 100 << 10).error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_EQ(Call(1, kToken, 1 << 10).error_code(), grpc::StatusCode::CANCELLED);  // 1 kernel: code 1
}

TEST_F(FarmServerTest, HealthServiceAnswersServingWithoutAToken) {
  auto health = grpc::health::v1::Health::NewStub(FarmChannel(server_.address));
  for (const char* service : {"", "tunefarm.v1.Measure"}) {
    grpc::ClientContext ctx;
    grpc::health::v1::HealthCheckRequest req;
    req.set_service(service);
    grpc::health::v1::HealthCheckResponse resp;
    grpc::Status s = health->Check(&ctx, req, &resp);
    ASSERT_TRUE(s.ok()) << service << ": " << s.error_message();
    EXPECT_EQ(resp.status(), grpc::health::v1::HealthCheckResponse::SERVING) << service;
  }
}

}  // namespace
}  // namespace tunefarm::service
