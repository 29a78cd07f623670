// The farm's shared token and TLS files, and channels to farm services.
//
// The token is read from --token-file PATH or $TUNEFARM_TOKEN (never a command-line literal: it
// would show in `ps`), sent by clients as "authorization: Bearer TOKEN" metadata and checked by
// every service in gRPC's transport auth filter (server.h), before the request message is read.
#ifndef TUNEFARM_SERVICE_AUTH_H_
#define TUNEFARM_SERVICE_AUTH_H_

#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>

#include "tunefarm/runtime/result.h"

namespace tunefarm::service {

// token_file empty: $TUNEFARM_TOKEN. InvalidArgument when neither gives a token of 16+ bytes, and
// for a token file every user may write; one every user may read is taken with a warning on stderr.
Result<std::string> LoadToken(const std::string& token_file);

void AttachToken(grpc::ClientContext* context, const std::string& token);

// Optional mutual TLS: PEM files of this party's certificate and key and of the CA that signs every
// party of the farm. Empty cert: plain TCP (token only; trusted networks).
struct TlsFiles {
  std::string cert, key, ca;
  bool enabled() const { return !cert.empty(); }
};
// InvalidArgument naming the flag when only some files are given or one cannot be read.
Result<TlsFiles> LoadTlsFlags(const std::string& cert, const std::string& key, const std::string& ca);

// What a client accepts in one response (a farm status of thousands of servers, a kernel batch's
// results). Requests are capped by each service (server.h).
inline constexpr int kMaxClientReceiveBytes = 64 << 20;

// A channel to a farm service: client receive cap, reconnection backoff 100 ms doubling to 1 s.
std::shared_ptr<grpc::Channel> FarmChannel(const std::string& address, const TlsFiles& tls = TlsFiles());

}  // namespace tunefarm::service

#endif  // TUNEFARM_SERVICE_AUTH_H_
