// Mutual TLS on the farm (optional, for untrusted networks): with certificates from a test CA, a
// client with a CA-signed certificate reaches rpc_tracker; a plain-TCP client and a TLS client
// without a certificate do not. Skips when the openssl command is missing.
#include <gtest/gtest.h>
#include <unistd.h>

#include "common/process.h"
#include "common/test_certificates.h"
#include "common/test_files.h"
#include "tunefarm/service/auth.h"
#include "tunefarm/v1/tracker.grpc.pb.h"

namespace tunefarm::tracker {
namespace {

using service::AttachToken;
using service::FarmChannel;
using service::LoadTlsFlags;

const char* kToken = "tls-test-token-0123456789";

TEST(MutualTls, OnlyClientsWithACertificateFromTheCaGetIn) {
  if (!tunefarm::testing::HaveOpenssl()) TUNEFARM_MISSING_FIXTURE("openssl not installed");
  const std::string dir = ::testing::TempDir() + "tunefarm_tls_" + std::to_string(getpid());
  ASSERT_EQ(system(("rm -rf " + dir + " && mkdir -p " + dir).c_str()), 0);
  ASSERT_EQ(tunefarm::testing::WriteTestCertificates(dir), "");
  tunefarm::testing::ChildProcess tracker;
  std::vector<std::string> argv = {RPC_TRACKER, "--listen", "127.0.0.1:0"};
  for (const std::string& flag : tunefarm::testing::ServerTlsFlags(dir)) argv.push_back(flag);
  ASSERT_TRUE(tracker.Start(argv, {std::string("TUNEFARM_TOKEN=") + kToken}));
  const std::string address = tunefarm::testing::AddressFromLine(tracker.WaitForLine("listening on", 10000));
  ASSERT_FALSE(address.empty());

  auto status = [&](std::shared_ptr<grpc::Channel> channel) {
    auto stub = v1::Tracker::NewStub(channel);
    grpc::ClientContext ctx;
    AttachToken(&ctx, kToken);
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(3));
    v1::FarmStatusResponse resp;
    return stub->FarmStatus(&ctx, v1::FarmStatusRequest(), &resp);
  };
  auto tls = LoadTlsFlags(dir + "/client.pem", dir + "/client.key", dir + "/ca.pem");
  ASSERT_TRUE(tls.ok()) << tls.status().ToString();
  grpc::Status ok = status(FarmChannel(address, *tls));
  EXPECT_TRUE(ok.ok()) << ok.error_message();
  EXPECT_FALSE(status(FarmChannel(address)).ok());  // plain TCP
  grpc::SslCredentialsOptions no_cert;
  no_cert.pem_root_certs = tls->ca;
  EXPECT_FALSE(status(grpc::CreateChannel(address, grpc::SslCredentials(no_cert))).ok());  // TLS, no client certificate

  auto partial = LoadTlsFlags(dir + "/client.pem", "", "");
  ASSERT_FALSE(partial.ok());
  EXPECT_EQ(partial.status().message(), "mutual TLS needs all of --tls-cert, --tls-key and --tls-ca");
  ASSERT_EQ(system(("rm -rf " + dir).c_str()), 0);
}

}  // namespace
}  // namespace tunefarm::tracker
