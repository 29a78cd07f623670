// MeasureClient: what the tuner uses to measure through the farm. Given a device key and batches
// of built kernels, it leases a server from the tracker (keeping the lease across batches: no
// reconnect per trial), sends each batch, and returns one outcome per kernel.
//
// Lease protocol, client side (docs/lease_protocol.md):
//  - While it holds a lease it renews it every lease_ms/3 and watches the lease stream. When the
//    tracker ends the lease (server lost, expired) or no longer knows it, the in-flight Measure
//    call is cancelled at once and the batch fails over to another server.
//  - A tracker that goes away (restart, network) does not end the lease: the client keeps
//    measuring on its server, renews more often, and the lease is restored when the server
//    re-registers with the new tracker.
//  - A lease request the tracker cannot take (unreachable) is retried with backoff (100 ms doubling
//    to 2 s) within the batch deadline; so is "no server under this key" for a key this client has
//    leased before or right after the tracker was unreachable (servers re-register within seconds
//    of a tracker restart).
//  - Each Measure call's deadline comes from the batch itself: per kernel its timeout_ms plus 1 s of
//    transfer and process start, plus 2 s, never past the batch deadline.
// Thread safety: one thread at a time per client.
#ifndef TUNEFARM_RPC_SERVER_MEASURE_CLIENT_H_
#define TUNEFARM_RPC_SERVER_MEASURE_CLIENT_H_

#include <functional>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "tunefarm/rpc_server/measurement.h"
#include "tunefarm/runtime/result.h"
#include "tunefarm/service/auth.h"

namespace tunefarm::rpc_server {

struct MeasureInput {
  std::string library;  // shared-library bytes for the key's architecture (CUDA: PTX text)
  MeasureSpec spec;     // symbol, args, seed, expected outputs; the batch uses the first one's timing
  // CUDA, optional: ptxas's machine code of `library` for cubin_arch; a server with that GPU loads
  // it instead of JIT-compiling the PTX (measure.proto, KernelToMeasure.cubin).
  std::string cubin, cubin_arch;
};

struct MeasureClientOptions {
  std::string tracker;  // HOST:PORT
  std::string key;
  std::string token;
  std::string client_name = "tunefarm";
  int priority = 0;
  int64_t lease_ms = 60000;
  service::TlsFiles tls;  // mutual TLS towards the tracker and the servers, when enabled
  // Log lines about the lease (lost, restored, tracker unreachable); empty: silent.
  std::function<void(const std::string&)> log;
};

class MeasureClient {
 public:
  explicit MeasureClient(MeasureClientOptions options);
  ~MeasureClient();
  MeasureClient(const MeasureClient&) = delete;
  MeasureClient& operator=(const MeasureClient&) = delete;

  Result<std::vector<MeasureOutcome>> Measure(const std::vector<MeasureInput>& batch, int64_t deadline_ms);
  // The server that measured the last batch, and the lease it was measured under.
  const std::string& server_id() const { return server_id_; }
  const std::string& lease_id() const { return lease_id_; }
  int attempts_last_batch() const { return attempts_; }
  // Whether the server leased last listens on a loopback address, so it times kernels on this
  // machine's cores; true before any lease (the tuner then assumes the worst).
  bool ServerOnThisMachine() const;
  // Gives the lease back (explicitly, then closes the stream).
  void Release();

  // Milliseconds a Measure call of this batch may take (see the header comment).
  static int64_t CallBudgetMs(const std::vector<MeasureInput>& batch);

 private:
  class Lease;
  Status AcquireLease(int64_t deadline_ms);
  void Log(const std::string& line) const;
  MeasureClientOptions options_;
  std::unique_ptr<Lease> lease_;
  std::set<std::string> failed_servers_;
  std::string server_id_, lease_id_, server_address_;
  int attempts_ = 0;
  bool leased_before_ = false;
};

}  // namespace tunefarm::rpc_server

#endif  // TUNEFARM_RPC_SERVER_MEASURE_CLIENT_H_
