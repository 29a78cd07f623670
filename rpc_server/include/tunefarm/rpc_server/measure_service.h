// MeasureService: the gRPC face of the measurement core (tunefarm.v1.Measure). Checks the farm
// token, measures a batch one kernel at a time in isolated children (one batch at a time per
// server, so measurements never share the device), and counts measurements for heartbeats.
#ifndef TUNEFARM_RPC_SERVER_MEASURE_SERVICE_H_
#define TUNEFARM_RPC_SERVER_MEASURE_SERVICE_H_

#include <atomic>
#include <mutex>
#include <string>

#include "tunefarm/rpc_server/measurement.h"
#include "tunefarm/v1/measure.grpc.pb.h"

namespace tunefarm::rpc_server {

struct ServerOptions {
  std::string token;
  std::vector<std::string> child_command;  // tunefarm-measure-child, optionally after a launcher
  std::string tmp_root = "/tmp";
  int threads = 1;            // every measurement runs with this many threads
  int64_t memory_limit_bytes = int64_t(4) << 30;  // default address-space limit of a child
  std::string server_id;      // set once registered (reported in responses)
};

class MeasureService final : public v1::Measure::Service {
 public:
  explicit MeasureService(ServerOptions options) : options_(std::move(options)) {}
  grpc::Status Measure(grpc::ServerContext* ctx, const v1::MeasureRequest* req, v1::MeasureResponse* resp) override;
  int64_t measurements_done() const { return done_.load(); }
  void set_server_id(const std::string& id) {
    std::lock_guard<std::mutex> lock(id_mu_);
    options_.server_id = id;
  }

 private:
  ServerOptions options_;
  std::mutex device_mu_, id_mu_;
  std::atomic<int64_t> done_{0};
};

}  // namespace tunefarm::rpc_server

#endif  // TUNEFARM_RPC_SERVER_MEASURE_SERVICE_H_
