#include "tunefarm/service/auth.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "tunefarm/runtime/atomic_file.h"

namespace tunefarm::service {

namespace {
constexpr off_t kMaxTokenFileBytes = 4096;  // st_size's type
}  // namespace

Result<std::string> LoadToken(const std::string& token_file) {
  std::string token;
  if (!token_file.empty()) {
    // A token is a line of text: refuse what is not a small regular file before reading it
    // (a directory reads as nothing, /dev/zero never ends).
    struct stat st;
    if (stat(token_file.c_str(), &st) != 0) {
      return Status::InvalidArgument("cannot read token file " + token_file + ": " + std::strerror(errno));
    }
    if (!S_ISREG(st.st_mode)) return Status::InvalidArgument("token file " + token_file + " is not a regular file");
    char mode[8];
    std::snprintf(mode, sizeof(mode), "%04o", unsigned(st.st_mode & 07777));
    if (st.st_mode & S_IWOTH) {  // anyone could put their own token in, or empty it
      return Status::InvalidArgument("token file " + token_file + " is writable by every user (mode " + mode +
                                     "): anyone could replace the farm's token; chmod 600 it");
    }
    if (st.st_mode & S_IROTH) {
      std::fprintf(stderr, "warning: token file %s is readable by every user (mode %s); chmod 600 it\n",
                   token_file.c_str(), mode);
    }
    if (st.st_size > kMaxTokenFileBytes) {
      return Status::InvalidArgument("token file " + token_file + " holds " + std::to_string(st.st_size) +
                                     " bytes; a token is at most " + std::to_string(kMaxTokenFileBytes));
    }
    auto bytes = ReadFile(token_file);
    if (!bytes.ok())
      return Status::InvalidArgument("cannot read token file " + token_file + ": " + std::strerror(errno));
    token = std::move(*bytes);
  } else if (const char* env = std::getenv("TUNEFARM_TOKEN")) {
    token = env;
  } else {
    return Status::InvalidArgument("no farm token: pass --token-file PATH or set TUNEFARM_TOKEN");
  }
  // Blanks around the token (an editor's newline, an indented line) are not part of it, on either
  // side: a tracker and a client that read the same file must agree.
  const auto blank = [](char c) { return c == '\n' || c == '\r' || c == ' ' || c == '\t'; };
  while (!token.empty() && blank(token.back())) token.pop_back();
  size_t lead = 0;
  while (lead < token.size() && blank(token[lead])) ++lead;
  token.erase(0, lead);
  if (token.size() < 16) return Status::InvalidArgument("the farm token must be at least 16 characters");
  return token;
}

void AttachToken(grpc::ClientContext* context, const std::string& token) {
  context->AddMetadata("authorization", "Bearer " + token);
}

namespace {

Result<std::string> ReadPem(const std::string& path, const char* flag) {
  auto pem = ReadFile(path);
  if (!pem.ok()) return Status::InvalidArgument(std::string("cannot read ") + flag + " " + path);
  if (pem->find("-----BEGIN") == std::string::npos) {
    return Status::InvalidArgument(std::string(flag) + " " + path + " is not a PEM file");
  }
  return *pem;
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

std::shared_ptr<grpc::Channel> FarmChannel(const std::string& address, const TlsFiles& tls) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(kMaxClientReceiveBytes);
  args.SetMaxSendMessageSize(-1);  // the receiving service enforces its own cap
  // Reconnect from 100 ms, doubling, at most 1 s apart. gRPC's default (up to 120 s) would leave a
  // client unable to reach a tracker that restarted long ago.
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
  args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, 100);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 1000);
  if (!tls.enabled()) return grpc::CreateCustomChannel(address, grpc::InsecureChannelCredentials(), args);
  grpc::SslCredentialsOptions options;
  options.pem_root_certs = tls.ca;
  options.pem_private_key = tls.key;
  options.pem_cert_chain = tls.cert;
  return grpc::CreateCustomChannel(address, grpc::SslCredentials(options), args);
}

}  // namespace tunefarm::service
