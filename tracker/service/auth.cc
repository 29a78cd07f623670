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

std::shared_ptr<grpc::Channel> FarmChannel(const std::string& address) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(kMaxMessageBytes);
  args.SetMaxSendMessageSize(kMaxMessageBytes);
  return grpc::CreateCustomChannel(address, grpc::InsecureChannelCredentials(), args);
}

}  // namespace tunefarm::tracker
