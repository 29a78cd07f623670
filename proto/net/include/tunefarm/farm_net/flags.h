// Command-line flags of the farm's daemons (rpc_tracker, rpc_server, tuner-daemon): one strict
// parser, so `--listen 0`, `--listen :99999` and `--threads 4x` are refused the same way everywhere.
//
// Contract:
//  - ParseListenAddress accepts HOST:PORT with PORT in 0..65535 (0 = a free port picked at bind) and
//    HOST a name, an IPv4 address or a bracketed IPv6 address. A wildcard host (0.0.0.0, [::]) must be
//    spelled out; it is accepted and marked so the server warns that it listens on every interface.
//  - ParseIntFlag accepts an optional sign and decimal digits only, within [min, max].
//  - FlagSet parses `--name VALUE` pairs against a table; an unknown flag, a missing value, a bad
//    value or a missing required flag is an InvalidArgument naming the flag. `--help` sets help().
#ifndef TUNEFARM_FARM_NET_FLAGS_H_
#define TUNEFARM_FARM_NET_FLAGS_H_

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "tunefarm/runtime/result.h"

namespace tunefarm::farm_net {

struct ListenAddress {
  std::string host;  // as written; IPv6 without brackets
  int port = 0;
  bool wildcard = false;  // every interface
  std::string ToString() const;  // "host:port", "[v6]:port"
};

Result<ListenAddress> ParseListenAddress(std::string_view text, std::string_view flag = "--listen");
Result<int64_t> ParseIntFlag(std::string_view flag, std::string_view value, int64_t min, int64_t max);

class FlagSet {
 public:
  explicit FlagSet(std::string usage) : usage_(std::move(usage)) {}

  void String(std::string name, std::string* out, bool required = false);
  void Int(std::string name, int64_t* out, int64_t min, int64_t max);
  void Int(std::string name, int* out, int min, int max);
  void Listen(std::string name, ListenAddress* out, bool required = true);

  Status Parse(int argc, char** argv);
  bool help() const { return help_; }
  const std::string& usage() const { return usage_; }

 private:
  struct Flag {
    std::string name;
    bool required = false, seen = false;
    std::function<Status(std::string_view)> set;
  };
  std::string usage_;
  std::vector<Flag> flags_;
  bool help_ = false;
};

// The flags every farm daemon shares: where it listens, its token and its TLS files.
struct CommonDaemonFlags {
  ListenAddress listen;
  std::string token_file, tls_cert, tls_key, tls_ca;
};
void AddCommonDaemonFlags(FlagSet& flags, CommonDaemonFlags* out);

}  // namespace tunefarm::farm_net

#endif  // TUNEFARM_FARM_NET_FLAGS_H_
