// The farm's shared token: read from --token-file PATH or $TUNEFARM_TOKEN (never a command-line
// literal: it would show in `ps`), sent by clients as "authorization: Bearer TOKEN" metadata and
// checked by every service before anything else (docs/security.md).
#ifndef TUNEFARM_TRACKER_AUTH_H_
#define TUNEFARM_TRACKER_AUTH_H_

#include <memory>
#include <string>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "tunefarm/runtime/result.h"

namespace tunefarm::tracker {

// token_file empty: $TUNEFARM_TOKEN. InvalidArgument when neither gives a token of 16+ bytes.
Result<std::string> LoadToken(const std::string& token_file);

void AttachToken(grpc::ClientContext* context, const std::string& token);

// OK, or UNAUTHENTICATED (logged to stderr with the peer address) when the call lacks the token.
grpc::Status CheckToken(const grpc::ServerContext* context, const std::string& token, const char* method);

// Message size cap on both ends of every farm channel (a kernel batch fits well within it).
inline constexpr int kMaxMessageBytes = 96 << 20;

// Optional mutual TLS: PEM files of this party's certificate and key and of the CA that signs every
// party of the farm. Empty cert: plain TCP (token only; trusted networks).
struct TlsFiles {
  std::string cert, key, ca;
  bool enabled() const { return !cert.empty(); }
};
// InvalidArgument naming the flag when only some files are given or one cannot be read.
Result<TlsFiles> LoadTlsFlags(const std::string& cert, const std::string& key, const std::string& ca);
// Servers require and verify a client certificate signed by the CA when TLS is on.
Result<std::shared_ptr<grpc::ServerCredentials>> FarmServerCredentials(const TlsFiles& tls);

std::shared_ptr<grpc::Channel> FarmChannel(const std::string& address, const TlsFiles& tls = TlsFiles());

// Starts a farm service the way every farm process does: credentials from the TLS files, the
// message caps, the services registered; then prints "<name> listening on HOST:PORT" (PORT is the
// one picked when `listen` asks for port 0) and flushes, the line tests and scripts wait for.
// IOError (unavailable) naming the address when it cannot listen.
struct FarmServer {
  std::unique_ptr<grpc::Server> server;
  std::string address;  // HOST:PORT actually bound
};
Result<FarmServer> StartFarmServer(const std::string& name, const std::string& listen, const TlsFiles& tls,
                                   const std::vector<grpc::Service*>& services);

}  // namespace tunefarm::tracker

#endif  // TUNEFARM_TRACKER_AUTH_H_
