// A farm of real processes on 127.0.0.1 with ephemeral ports for integration tests: one
// rpc_tracker and any number of rpc_servers (optionally started through a launcher such as
// qemu-aarch64), all sharing one token. Processes are killed when the LocalFarm goes away.
#ifndef TUNEFARM_TESTS_COMMON_LOCAL_FARM_H_
#define TUNEFARM_TESTS_COMMON_LOCAL_FARM_H_

#include <memory>
#include <string>
#include <vector>

#include "common/process.h"

namespace tunefarm::testing {

struct ServerSpec {
  std::string rpc_server, measure_child;  // binaries
  std::string key;
  std::string tmp;       // the server's --tmp
  std::string launcher;  // e.g. "qemu-aarch64": runs the server and its children
  int register_timeout_ms = 10000;
};

class LocalFarm {
 public:
  explicit LocalFarm(std::string token) : token_(std::move(token)) {}
  // Flags every daemon of the farm also gets, set before starting them: the server side of mutual
  // TLS (common/test_certificates.h).
  void set_daemon_flags(std::vector<std::string> flags) { daemon_flags_ = std::move(flags); }
  // "" on success, else what failed.
  std::string StartTracker(const std::string& rpc_tracker, int heartbeat_ms = 1000,
                           const std::string& listen = "127.0.0.1:0");
  // Starts a server and waits until it has registered with the tracker.
  std::string StartServer(const ServerSpec& spec);

  const std::string& tracker_address() const { return tracker_address_; }
  const std::vector<std::string>& server_addresses() const { return server_addresses_; }
  ChildProcess& tracker() { return *tracker_; }
  ChildProcess& server(size_t i) { return *servers_[i]; }
  // TUNEFARM_TOKEN=..., for every process that talks to the farm.
  std::vector<std::string> env() const { return {"TUNEFARM_TOKEN=" + token_}; }
  const std::string& token() const { return token_; }

 private:
  std::string token_;
  std::vector<std::string> daemon_flags_;
  std::unique_ptr<ChildProcess> tracker_;
  std::string tracker_address_;
  std::vector<std::unique_ptr<ChildProcess>> servers_;
  std::vector<std::string> server_addresses_;
};

}  // namespace tunefarm::testing

#endif  // TUNEFARM_TESTS_COMMON_LOCAL_FARM_H_
