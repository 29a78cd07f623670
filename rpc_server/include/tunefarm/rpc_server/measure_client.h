// MeasureClient: what the tuner uses to measure through the farm. Given a device key and batches
// of built kernels, it leases a server from the tracker (keeping the lease across batches: no
// reconnect per trial), sends each batch, and returns one outcome per kernel. When the server
// fails mid-batch (unreachable, killed, lease lost), the batch is retried on another server; it
// never waits past the batch's deadline.
// Thread safety: one thread at a time per client.
#ifndef TUNEFARM_RPC_SERVER_MEASURE_CLIENT_H_
#define TUNEFARM_RPC_SERVER_MEASURE_CLIENT_H_

#include <memory>
#include <set>
#include <string>
#include <vector>

#include "tunefarm/rpc_server/measurement.h"
#include "tunefarm/tracker/auth.h"
#include "tunefarm/runtime/result.h"

namespace tunefarm::rpc_server {

struct MeasureInput {
  std::string library;  // shared-library bytes for the key's architecture
  MeasureSpec spec;     // symbol, args, seed, expected outputs; the batch uses the first one's timing
};

struct MeasureClientOptions {
  std::string tracker;  // HOST:PORT
  std::string key;
  std::string token;
  std::string client_name = "tunefarm";
  int priority = 0;
  int64_t lease_ms = 60000;
  tracker::TlsFiles tls;  // mutual TLS towards the tracker and the servers, when enabled
};

class MeasureClient {
 public:
  explicit MeasureClient(MeasureClientOptions options);
  ~MeasureClient();
  MeasureClient(const MeasureClient&) = delete;
  MeasureClient& operator=(const MeasureClient&) = delete;

  Result<std::vector<MeasureOutcome>> Measure(const std::vector<MeasureInput>& batch, int64_t deadline_ms);
  // The server that measured the last batch.
  const std::string& server_id() const { return server_id_; }
  int attempts_last_batch() const { return attempts_; }
  void Release();

 private:
  struct Lease;
  Status AcquireLease(int64_t deadline_ms);
  MeasureClientOptions options_;
  std::unique_ptr<Lease> lease_;
  std::set<std::string> failed_servers_;
  std::string server_id_;
  int attempts_ = 0;
};

}  // namespace tunefarm::rpc_server

#endif  // TUNEFARM_RPC_SERVER_MEASURE_CLIENT_H_
