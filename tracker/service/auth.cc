#include "tunefarm/tracker/auth.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace tunefarm::tracker {

Result<std::string> LoadToken(const std::string& token_file) {
  std::string token;
  if (!token_file.empty()) {
    std::ifstream in(token_file);
    if (!in) return Status::InvalidArgument("cannot read token file " + token_file);
    std::stringstream ss;
    ss << in.rdbuf();
    token = ss.str();
  } else if (const char* env = std::getenv("TUNEFARM_TOKEN")) {
    token = env;
  } else {
    return Status::InvalidArgument("no farm token: pass --token-file PATH or set TUNEFARM_TOKEN");
  }
  while (!token.empty() && (token.back() == '\n' || token.back() == '\r' || token.back() == ' ')) token.pop_back();
  if (token.size() < 16) return Status::InvalidArgument("the farm token must be at least 16 characters");
  return token;
}

void AttachToken(grpc::ClientContext* context, const std::string& token) {
  context->AddMetadata("authorization", "Bearer " + token);
}

grpc::Status CheckToken(const grpc::ServerContext* context, const std::string& token, const char* method) {
  const auto& md = context->client_metadata();
  auto it = md.find("authorization");
  const std::string expected = "Bearer " + token;
  bool ok = it != md.end() && it->second.size() == expected.size();
  // Constant-time comparison: the token is a secret.
  unsigned char diff = 0;
  for (size_t i = 0; ok && i < expected.size(); ++i) diff |= static_cast<unsigned char>(it->second.data()[i] ^ expected[i]);
  if (ok && diff == 0) return grpc::Status::OK;
  std::fprintf(stderr, "refused %s from %s: %s\n", method, context->peer().c_str(),
               it == md.end() ? "no token" : "wrong token");
  return grpc::Status(grpc::StatusCode::UNAUTHENTICATED, "missing or wrong farm token");
}

namespace {

Result<std::string> ReadPem(const std::string& path, const char* flag) {
  std::ifstream in(path);
  if (!in) return Status::InvalidArgument(std::string("cannot read ") + flag + " " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  if (ss.str().find("-----BEGIN") == std::string::npos) {
    return Status::InvalidArgument(std::string(flag) + " " + path + " is not a PEM file");
  }
  return ss.str();
}

}  // namespace

Result<TlsFiles> LoadTlsFlags(const std::string& cert, const std::string& key, const std::string& ca) {
  if (cert.empty() && key.empty() && ca.empty()) return TlsFiles();
  if (cert.empty() || key.empty() || ca.empty()) {
    return Status::InvalidArgument("mutual TLS needs all of --tls-cert, --tls-key and --tls-ca");
  }
  TlsFiles tls;
  TUNEFARM_ASSIGN_OR_RETURN(tls.cert, ReadPem(cert, "--tls-cert"));
  TUNEFARM_ASSIGN_OR_RETURN(tls.key, ReadPem(key, "--tls-key"));
  TUNEFARM_ASSIGN_OR_RETURN(tls.ca, ReadPem(ca, "--tls-ca"));
  return tls;
}

Result<std::shared_ptr<grpc::ServerCredentials>> FarmServerCredentials(const TlsFiles& tls) {
  if (!tls.enabled()) return grpc::InsecureServerCredentials();
  grpc::SslServerCredentialsOptions options(GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
  options.pem_root_certs = tls.ca;
  options.pem_key_cert_pairs.push_back({tls.key, tls.cert});
  return grpc::SslServerCredentials(options);
}

std::shared_ptr<grpc::Channel> FarmChannel(const std::string& address, const TlsFiles& tls) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(kMaxMessageBytes);
  args.SetMaxSendMessageSize(kMaxMessageBytes);
  if (!tls.enabled()) return grpc::CreateCustomChannel(address, grpc::InsecureChannelCredentials(), args);
  grpc::SslCredentialsOptions options;
  options.pem_root_certs = tls.ca;
  options.pem_private_key = tls.key;
  options.pem_cert_chain = tls.cert;
  return grpc::CreateCustomChannel(address, grpc::SslCredentials(options), args);
}

Result<FarmServer> StartFarmServer(const std::string& name, const std::string& listen, const TlsFiles& tls,
                                   const std::vector<grpc::Service*>& services) {
  TUNEFARM_ASSIGN_OR_RETURN(auto credentials, FarmServerCredentials(tls));
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort(listen, credentials, &port);
  builder.SetMaxReceiveMessageSize(kMaxMessageBytes);
  builder.SetMaxSendMessageSize(kMaxMessageBytes);
  for (grpc::Service* s : services) builder.RegisterService(s);
  FarmServer out;
  out.server = builder.BuildAndStart();
  if (!out.server || port == 0) return Status::IOError("cannot listen on " + listen);
  out.address = listen.substr(0, listen.rfind(':')) + ":" + std::to_string(port);
  std::printf("%s listening on %s\n", name.c_str(), out.address.c_str());
  std::fflush(stdout);
  return out;
}

}  // namespace tunefarm::tracker
