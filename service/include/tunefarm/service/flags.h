// Command-line flags of the farm's daemons (rpc_tracker, rpc_server, tuner-daemon), declared on a
// CLI11 app (tunefarm/command_line/command_line.h), so `--listen 0`, `--listen :99999` and
// `--threads 4x` are refused the same way everywhere.
//
// Contract:
//  - ParseListenAddress accepts HOST:PORT with PORT in 0..65535 (0 = a free port picked at bind) and
//    HOST a name, an IPv4 address or a bracketed IPv6 address. A wildcard host (0.0.0.0, [::]) must be
//    spelled out; it is accepted and marked so the server warns that it listens on every interface.
//  - AddListenFlag declares such a flag (required unless said otherwise); AddCommonDaemonFlags the
//    flags every daemon shares. Errors name the flag and the value.
#ifndef TUNEFARM_SERVICE_FLAGS_H_
#define TUNEFARM_SERVICE_FLAGS_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "tunefarm/runtime/result.h"

// CLI11's types, declared here so the many users of this header do not compile CLI11 (flags.cc
// and each program's main include tunefarm/command_line/command_line.h).
namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace tunefarm::service {

struct ListenAddress {
  std::string host;  // as written; IPv6 without brackets
  int port = 0;
  bool wildcard = false;         // every interface
  std::string ToString() const;  // "host:port", "[v6]:port"
};

Result<ListenAddress> ParseListenAddress(std::string_view text, std::string_view flag = "--listen");

CLI::Option* AddListenFlag(CLI::App& app, const std::string& name, ListenAddress* out, std::string help,
                           bool required = true);

// The flags every farm daemon shares: where it listens, its token and its TLS files.
struct CommonDaemonFlags {
  ListenAddress listen;
  std::string token_file, tls_cert, tls_key, tls_ca;
};
void AddCommonDaemonFlags(CLI::App& app, CommonDaemonFlags* out);

}  // namespace tunefarm::service

#endif  // TUNEFARM_SERVICE_FLAGS_H_
