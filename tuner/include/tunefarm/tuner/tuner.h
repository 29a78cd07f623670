// Tuning tasks: propose configs (search.h), build them in parallel, measure them (locally in an
// isolated child, or through the farm), and commit every trial to the records database as it
// completes. Running the same tuning again resumes: configs already in the database for the
// task's workload and target are learned from and never measured again.
#ifndef TUNEFARM_TUNER_TUNER_H_
#define TUNEFARM_TUNER_TUNER_H_

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "tunefarm/compiler/kernel.h"
#include "tunefarm/rpc_server/measure_client.h"
#include "tunefarm/tuner/records.h"
#include "tunefarm/tuner/search.h"

namespace tunefarm::tuner {

// Where built kernels are timed.
class Measurer {
 public:
  virtual ~Measurer() = default;
  virtual Result<std::vector<rpc_server::MeasureOutcome>> Measure(const std::vector<rpc_server::MeasureInput>& batch) = 0;
  virtual std::string device_key() const = 0;
};

// In an isolated child on this machine (tunefarm-measure-child), with rpc_server's protocol.
class LocalMeasurer final : public Measurer {
 public:
  LocalMeasurer(std::string child_binary, std::string tmp_root, int threads, int64_t memory_limit_bytes = int64_t(4) << 30)
      : child_(std::move(child_binary)), tmp_(std::move(tmp_root)), threads_(threads), memory_(memory_limit_bytes) {}
  Result<std::vector<rpc_server::MeasureOutcome>> Measure(const std::vector<rpc_server::MeasureInput>& batch) override;
  std::string device_key() const override { return "local"; }

 private:
  std::string child_, tmp_;
  int threads_;
  int64_t memory_;
};

// Through the farm: a lease on a server of the key, kept across batches.
class FarmMeasurer final : public Measurer {
 public:
  explicit FarmMeasurer(rpc_server::MeasureClientOptions options) : key_(options.key), client_(std::move(options)) {}
  Result<std::vector<rpc_server::MeasureOutcome>> Measure(const std::vector<rpc_server::MeasureInput>& batch) override {
    return client_.Measure(batch, 600000);
  }
  std::string device_key() const override { return key_; }

 private:
  std::string key_;
  rpc_server::MeasureClient client_;
};

struct TuneOptions {
  std::string tuner = "xgb";
  int trials = 64;           // distinct configs per task, including those already in the database
  int batch = 16;            // configs built and measured together
  int early_stopping = 0;    // stop a task after this many trials without a better config (0: never)
  uint64_t seed = 0;
  int build_jobs = 2;
  int threads = 1;           // recorded with every trial (the measurer runs with it)
  rpc_server::TimingParams timing;  // default: number 10, repeat 3
  std::string tmp_root = "/tmp";
  const std::atomic<bool>* stop = nullptr;  // set (Ctrl-C): finish the batch in flight, then return
};

struct TaskProgress {
  int task = 0, tasks = 0;   // 1-based index, count
  int done = 0, budget = 0;  // trials measured for the task, including resumed ones
  double current_gflops = 0, best_gflops = 0;
  double elapsed_s = 0;
};

struct TaskSummary {
  compiler::Workload workload;
  int trials = 0, resumed = 0;
  double best_gflops = 0, fallback_gflops = 0;
  int64_t best_config = -1;
  std::map<std::string, int> errors;  // by status
};

// Tunes one workload; progress after every batch.
Result<TaskSummary> TuneTask(const compiler::Workload& workload, const compiler::Target& target, const TuneOptions& options,
                             Measurer& measurer, RecordsDb& db, int task_index, int task_count,
                             const std::function<void(const TaskProgress&)>& progress);

}  // namespace tunefarm::tuner

#endif  // TUNEFARM_TUNER_TUNER_H_
