// Tuning tasks: propose configs (search.h), build them in parallel, measure them (locally in an
// isolated child, or through the farm), and commit every trial to the records database as it
// completes. Running the same tuning again resumes: configs already in the database for the
// task's workload and target are learned from and never measured again.
#ifndef TUNEFARM_TUNER_TUNER_H_
#define TUNEFARM_TUNER_TUNER_H_

#include <algorithm>
#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "tunefarm/compiler/kernel.h"
#include "tunefarm/rpc_server/measure_client.h"
#include "tunefarm/runtime/mutex.h"
#include "tunefarm/tuner/records.h"
#include "tunefarm/tuner/search.h"
#include "tunefarm/tuner/tuning_kinds.h"

namespace tunefarm::tuner {

// Where built kernels are timed.
class Measurer {
 public:
  virtual ~Measurer() = default;
  virtual Result<std::vector<rpc_server::MeasureOutcome>> Measure(
      const std::vector<rpc_server::MeasureInput>& batch) = 0;
  virtual std::string device_key() const = 0;
  // Whether the kernels are timed on this machine's cores, so builds must leave them free
  // (TuningPipeline). A farm server counts as this machine when reached over loopback.
  virtual bool SharesThisMachine() const = 0;
};

// In an isolated child on this machine (tunefarm-measure-child), with rpc_server's protocol.
class LocalMeasurer final : public Measurer {
 public:
  LocalMeasurer(std::string child_binary, std::string tmp_root, int threads,
                int64_t memory_limit_bytes = int64_t(4) << 30)
      : child_(std::move(child_binary)), tmp_(std::move(tmp_root)), threads_(threads), memory_(memory_limit_bytes) {}
  Result<std::vector<rpc_server::MeasureOutcome>> Measure(const std::vector<rpc_server::MeasureInput>& batch) override;
  std::string device_key() const override { return "local"; }
  bool SharesThisMachine() const override { return true; }

 private:
  std::string child_, tmp_;
  int threads_;
  int64_t memory_;
  // GPU kernels go through one worker that keeps its CUDA context (rpc_server does the same).
  std::unique_ptr<rpc_server::MeasureWorker> gpu_worker_;
};

// Through the farm: a lease on a server of the key, kept across batches.
class FarmMeasurer final : public Measurer {
 public:
  explicit FarmMeasurer(rpc_server::MeasureClientOptions options) : key_(options.key), client_(std::move(options)) {}
  Result<std::vector<rpc_server::MeasureOutcome>> Measure(const std::vector<rpc_server::MeasureInput>& batch) override {
    return client_.Measure(batch, 600000);
  }
  std::string device_key() const override { return key_; }
  bool SharesThisMachine() const override { return client_.ServerOnThisMachine(); }

 private:
  std::string key_;
  rpc_server::MeasureClient client_;
};

// Shares one measurer between several tuning jobs fairly: batches are measured one at a time in
// the order they arrive (a ticket queue), so jobs alternate instead of one starving the others.
class FairMeasurer final : public Measurer {
 public:
  explicit FairMeasurer(std::unique_ptr<Measurer> inner)
      : inner_(std::move(inner)), shares_this_machine_(inner_->SharesThisMachine()) {}
  Result<std::vector<rpc_server::MeasureOutcome>> Measure(const std::vector<rpc_server::MeasureInput>& batch) override
      EXCLUDES(mu_);
  std::string device_key() const override { return inner_->device_key(); }
  // As the inner measurer said after the last batch (asking it while another job's batch runs
  // would race with that batch).
  bool SharesThisMachine() const override { return shares_this_machine_.load(); }

 private:
  // Not under mu_: its Measure runs outside the lock, one ticket holder at a time.
  std::unique_ptr<Measurer> inner_;
  std::atomic<bool> shares_this_machine_;
  Mutex mu_;
  CondVar turn_;
  uint64_t next_ticket_ GUARDED_BY(mu_) = 0;
  uint64_t serving_ GUARDED_BY(mu_) = 0;
};

// One build job per core of this machine, at least 2.
inline int DefaultBuildJobs() { return std::max(2, int(std::thread::hardware_concurrency())); }

struct TuneOptions {
  TunerKind tuner = TunerKind::kXgb;
  std::string xgb_objective = "rank";  // rank | reg
  int trials = 64;                     // distinct configs per task, including those already in the database
                                       // (and those other tuners sharing it measure meanwhile)
  int batch = 16;                      // configs built and measured together
  int early_stopping = 0;              // stop a task after this many trials without a better config (0: never)
  uint64_t seed = 0;
  // Candidates built at once: one per core (a GPU's candidates also run ptxas, when it is here).
  int build_jobs = DefaultBuildJobs();
  // A candidate whose external build tool (ptxas, ld) runs longer is recorded as a compile_error
  // and the tool killed: ptxas can spend minutes on a reduction unrolled thousands of steps deep,
  // and a farm would wait for it. TVM's LocalBuilder gives a build 10 s likewise. 0: no limit.
  double build_timeout_s = 10;
  int threads = 1;       // recorded with every trial (the measurer runs with it)
  bool transfer = true;  // xgb: warm-start from the database's records of similar workloads
  // Only configs that keep the activation layouts untuned neighbours use (KeepsModelLayout). Off:
  // the template's whole space, every channel block (tune --layouts any: the model compiler then
  // chooses the blocks over the graph, model/lowering/plan_layouts.h; kernel benchmarks).
  bool keep_model_layout = true;
  // Time CPU kernels with every argument but the input flushed from the caches, as a model runs
  // them (each layer's weights are cold). Off: hot timings (kernel benchmarks).
  bool cold_cache = true;
  rpc_server::TimingParams timing;  // default: number 10, repeat 3
  std::string tmp_root = "/tmp";
  int64_t job_id = 0;  // recorded with every trial (tuner-daemon jobs)
  // A claim on a config (TrialLog::Claim) lapses this long after it was taken when its holder
  // recorded no trial. A backstop only: the claims of a tuner that died are released as soon as
  // another tuner starts (TrialLog::ReleaseDeadClaims), so it can exceed any batch's wait for a
  // busy farm.
  int64_t claim_ttl_ms = 24LL * 3600 * 1000;
  const std::atomic<bool>* stop = nullptr;  // set (Ctrl-C): finish the batch in flight, then return
};

struct TaskProgress {
  int task = 0, tasks = 0;   // 1-based index, count
  int done = 0, budget = 0;  // trials measured for the task, including resumed ones
  double current_gflops = 0, best_gflops = 0;
  double elapsed_s = 0;
  int total_done = 0, total_budget = 0;  // under a global budget (ScheduleOptions::total_trials)
};

// AutoTVM's progress line: "[Task  1/12]  Current/Best:   17.48/  22.69 GFLOPS | Progress: (12/200) | 11.75 s"
// (under a global budget, Progress counts every task's trials against it).
std::string FormatProgress(const TaskProgress& p);

struct TaskSummary {
  compiler::Workload workload;
  int trials = 0, resumed = 0;
  double best_gflops = 0, fallback_gflops = 0;
  int64_t best_config = -1;
  std::map<std::string, int> errors;  // by status
  int transfer_rows = 0;              // xgb: rows of similar workloads the model started from
  // Records read back and refused (a config that is not this space's point at its index, a status
  // tunefarm never writes, an 'ok' time that is not finite and positive): they neither count as
  // measured nor steer the search.
  int skipped_records = 0;
  // Where the time went (this run). Builds, measurements and the search overlap (tuning_pipeline.h):
  // the measurer's time measuring (measure_s) and waiting for a built candidate (build_s), and the
  // tuner's proposing configs (search_s: model fits, annealing, features) and recording them.
  double search_s = 0, build_s = 0, measure_s = 0, record_s = 0;
  // Of build_s, summed over the candidates (so over the parallel build jobs too): lowering, LLVM's
  // code generation, the external tool (ptxas for CUDA, ld for CPUs). Their sum over build_s
  // against build_jobs says whether the jobs ran in parallel.
  double build_lower_s = 0, build_codegen_s = 0, build_tool_s = 0;
  int built = 0, build_jobs = 1;
  // Of measure_s, as the measuring children report it: loading kernels (GPU: the driver's JIT of
  // PTX) and the whole of each measurement (load, warm-up, timed rounds); the rest of measure_s
  // is transport and process overhead. `measured`: kernels sent to the measurer.
  double load_s = 0, run_s = 0;
  int measured = 0;
};

// One task's tuning state: resumes from the database on Create, then proposes, builds, measures
// and records candidates. The scheduler (TuneTasks) interleaves several through one pipeline
// (Propose / BuildJob / Record); RunBatch runs one batch on its own.
struct Built;              // a built candidate (tuner/search/candidate_build.h)
struct FinishedCandidate;  // built and measured (tuner/search/tuning_pipeline.h)

class TaskTuner {
 public:
  static Result<std::unique_ptr<TaskTuner>> Create(const compiler::Workload& workload, const compiler::Target& target,
                                                   const TuneOptions& options, Measurer& measurer, TrialLog& db,
                                                   int task_index, int task_count);
  ~TaskTuner();  // releases the claims of candidates proposed and never recorded
  // Builds, measures and records one batch of at most n trials (n <= 0: options.batch), never
  // past the budget; only configs it claims (TrialLog::Claim), after taking in what other tuners
  // sharing the database measured since. Returns the trials this tuner measured (0 when
  // finished(), or when other tuners held every proposed config).
  Result<int> RunBatch(int n = 0);

  // Pipelined use. Propose claims up to n configs (never past the budget with those in flight),
  // after taking in other tuners' trials and learning from results not yet learned from; none when
  // the space is exhausted or other tuners hold every one proposed. Each is built by BuildJob(c),
  // (its external tools killed once `cancel` is set), and its result handed to Record, which commits
  // the trials and counts them.
  Result<std::vector<int64_t>> Propose(int n);
  std::function<Built()> BuildJob(int64_t config, const std::atomic<bool>* cancel) const;
  Status Record(std::vector<FinishedCandidate>& finished);
  // Proposed, not yet recorded.
  int in_flight() const;
  // Nothing more to propose now: finished(), the space exhausted, or the budget in flight.
  bool saturated() const;

  // Budget reached, early stopping hit, or the space exhausted.
  bool finished() const { return finished_; }
  int done() const { return done_; }  // trials of the task in the database, any tuner's
  int budget() const { return budget_; }
  void set_budget(int budget) { budget_ = budget; }
  const TaskSummary& summary() const { return summary_; }
  TaskProgress progress() const;

 private:
  struct State;
  explicit TaskTuner(std::unique_ptr<State> state);
  // Trials of the task other tuners sharing the database recorded since the last look: they
  // count toward the budget and teach the cost model, as resumed ones do.
  Status TakeInOthersTrials();
  // Refits the search on what Record committed since the last refit.
  void Learn();
  bool StopsHere() const;
  std::unique_ptr<State> state_;
  TaskSummary summary_;
  int done_ = 0, budget_ = 0, since_best_ = 0;
  bool finished_ = false, exhausted_ = false;
  double last_batch_best_ = 0;
};

// Tunes one workload to options.trials; progress after every batch.
Result<TaskSummary> TuneTask(const compiler::Workload& workload, const compiler::Target& target,
                             const TuneOptions& options, Measurer& measurer, TrialLog& db, int task_index,
                             int task_count, const std::function<void(const TaskProgress&)>& progress);

// Several tasks of a model under one budget (tunefarm tune, tuner-daemon).
struct ScheduleOptions {
  // sequential: each task to options.trials in turn (--trials). With total_trials:
  //   round-robin: one batch per task in turn;
  //   gradient: after one batch each, the task whose share of the model's latency
  //             (occurrences x flops / best GFLOP/s) is expected to drop fastest (as Ansor's
  //             task scheduler), with 5% random picks.
  // With total_trials 0 the tasks are tuned in sequence; otherwise this scheduler shares them out.
  SchedulerKind scheduler = SchedulerKind::kGradient;
  int total_trials = 0;  // measured trials over all tasks, including resumed ones
};

struct ScheduledTask {
  compiler::Workload workload;
  int weight = 1;  // occurrences in the model
  // When this task is another implementation of some nodes: their default task
  // (Task::default_workload; nullopt for a default). The nodes run the fastest of their implementations, so the
  // scheduler weighs a task by how close it is to its group's best: trials go to an alternative that can still win, not
  // to one far behind.
  std::optional<compiler::Workload> alternative_of;
};

Result<std::vector<TaskSummary>> TuneTasks(const std::vector<ScheduledTask>& tasks, const compiler::Target& target,
                                           const TuneOptions& options, const ScheduleOptions& schedule,
                                           Measurer& measurer, TrialLog& db,
                                           const std::function<void(const TaskProgress&)>& progress);

}  // namespace tunefarm::tuner

#endif  // TUNEFARM_TUNER_TUNER_H_
