// MeasureService: the gRPC face of the measurement core (tunefarm.v1.Measure).
//
// Contract:
//  - The farm token was checked before the handler runs (service/server.h).
//  - A Measure call must carry the lease the tracker says may use this server. A lease this server
//    has not been told about is checked with the tracker once more (Registrar::RefreshLease: a
//    fresh grant reaches the server that way); any other is refused FAILED_PRECONDITION naming
//    both leases. Refusals are counted.
//  - One batch at a time per server, so measurements never share the device. A batch whose lease
//    ends while it runs stops between kernels with ABORTED; a cancelled call stops likewise.
//  - ServerState reports the leases batches ran under (first and last batch times), so a test or
//    an operator can check that no two leases ever overlapped on this device.
#ifndef TUNEFARM_RPC_SERVER_MEASURE_SERVICE_H_
#define TUNEFARM_RPC_SERVER_MEASURE_SERVICE_H_

#include <atomic>
#include <chrono>
#include <deque>
#include <functional>
#include <memory>
#include <string>

#include "tunefarm/rpc_server/measurement.h"
#include "tunefarm/runtime/mutex.h"
#include "tunefarm/service/registrar.h"
#include "tunefarm/v1/measure.grpc.pb.h"

namespace tunefarm::rpc_server {

struct ServerOptions {
  std::vector<std::string> child_command;  // tunefarm-measure-child, optionally after a launcher
  std::string tmp_root = "/tmp";
  int threads = 1;                                // every measurement runs with this many threads
  int64_t memory_limit_bytes = int64_t(4) << 30;  // default address-space limit of a child
  int cuda_ordinal = -1;                          // >= 0: a CUDA server measuring PTX on this GPU (--device cuda[:N])
  std::string cuda_arch;                          // that GPU's arch ("sm_90"): a kernel's cubin for it replaces its PTX
  // One measurement child kept across kernels (MeasureWorker) instead of one per kernel: on for
  // CUDA servers (a CUDA context costs 0.1-0.3 s to create).
  bool persistent_worker = false;
};

class MeasureService final : public v1::Measure::Service {
 public:
  // `registrar` knows which lease may use this server; it must outlive the service.
  MeasureService(ServerOptions options, service::Registrar* registrar);
  grpc::Status Measure(grpc::ServerContext* ctx, const v1::MeasureRequest* req, v1::MeasureResponse* resp) override
      EXCLUDES(device_mu_, state_mu_);
  grpc::Status ServerState(grpc::ServerContext* ctx, const v1::ServerStateRequest* req,
                           v1::ServerStateResponse* resp) override EXCLUDES(state_mu_);
  int64_t measurements_done() const { return done_.load(); }
  // Counted into ServerState (the farm server's auth filter counts them).
  void set_unauthenticated_counter(std::function<int64_t()> f) { unauthenticated_ = std::move(f); }
  // Called after every measurement with its outcome and wall time (the /metrics counters).
  void set_observer(std::function<void(OutcomeKind, double seconds)> f) { observer_ = std::move(f); }

 private:
  grpc::Status CheckLease(const std::string& lease_id);
  int64_t SinceStartMs() const;
  void RecordBatch(const std::string& lease_id, int64_t start_ms, int64_t end_ms) EXCLUDES(state_mu_);

  const ServerOptions options_;
  service::Registrar* const registrar_;
  const std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
  Mutex device_mu_ ACQUIRED_BEFORE(state_mu_);  // one batch at a time
  Mutex state_mu_;
  std::deque<v1::ServerStateResponse::LeaseUse> lease_uses_ GUARDED_BY(state_mu_);
  std::atomic<int64_t> done_{0}, refused_{0};
  std::unique_ptr<MeasureWorker> worker_ PT_GUARDED_BY(device_mu_);  // with persistent_worker
  std::function<int64_t()> unauthenticated_;
  std::function<void(OutcomeKind, double)> observer_;
};

}  // namespace tunefarm::rpc_server

#endif  // TUNEFARM_RPC_SERVER_MEASURE_SERVICE_H_
