#include "common/local_farm.h"

namespace tunefarm::testing {

std::string LocalFarm::StartTracker(const std::string& rpc_tracker, int heartbeat_ms, const std::string& listen) {
  tracker_ = std::make_unique<ChildProcess>();
  std::vector<std::string> argv = {rpc_tracker, "--listen", listen, "--heartbeat-ms", std::to_string(heartbeat_ms)};
  argv.insert(argv.end(), daemon_flags_.begin(), daemon_flags_.end());
  if (!tracker_->Start(argv, env())) {
    return "cannot start " + rpc_tracker;
  }
  tracker_address_ = AddressFromLine(tracker_->WaitForLine("listening on", 10000));
  return tracker_address_.empty() ? "rpc_tracker did not say where it listens" : "";
}

std::string LocalFarm::StartServer(const ServerSpec& spec) {
  auto s = std::make_unique<ChildProcess>();
  std::vector<std::string> argv;
  if (!spec.launcher.empty()) argv = {"/usr/bin/timeout", "600", spec.launcher};
  argv.insert(argv.end(), {spec.rpc_server, "--tracker", tracker_address_, "--key", spec.key, "--listen", "127.0.0.1:0",
                           "--tmp", spec.tmp, "--child", spec.measure_child});
  if (!spec.launcher.empty()) argv.insert(argv.end(), {"--child-launcher", spec.launcher});
  argv.insert(argv.end(), daemon_flags_.begin(), daemon_flags_.end());
  if (!s->Start(argv, env())) return "cannot start " + spec.rpc_server;
  const std::string line = s->WaitForLine("listening on", spec.register_timeout_ms);
  if (line.empty()) return "rpc_server (" + spec.key + ") did not say where it listens";
  if (s->WaitForLine("registered with", spec.register_timeout_ms).empty()) {
    return "rpc_server (" + spec.key + ") did not register with the tracker";
  }
  server_addresses_.push_back(AddressFromLine(line));
  servers_.push_back(std::move(s));
  return "";
}

}  // namespace tunefarm::testing
