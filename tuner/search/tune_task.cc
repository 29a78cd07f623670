// TuneTask: the propose -> build -> measure -> record loop for one workload.
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <thread>

#include "tunefarm/tuner/features.h"
#include "tunefarm/tuner/tuner.h"
#include "tuner/search/candidate_build.h"
#include "tuner/search/tuning_pipeline.h"

namespace tunefarm::tuner {
namespace {

using Clock = std::chrono::steady_clock;
constexpr int kGpuMinRepeatMs = 5;

double MsSince(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

}  // namespace

Result<std::vector<rpc_server::MeasureOutcome>> LocalMeasurer::Measure(
    const std::vector<rpc_server::MeasureInput>& batch) {
  std::vector<rpc_server::MeasureOutcome> out;
  for (const auto& in : batch) {
    rpc_server::MeasureSpec spec = in.spec;
    spec.threads = threads_;
    spec.timing.memory_limit_bytes = memory_;
    if (spec.gpu.enabled) {
      if (!gpu_worker_)
        gpu_worker_ = std::make_unique<rpc_server::MeasureWorker>(std::vector<std::string>{child_}, tmp_);
      out.push_back(gpu_worker_->Measure(in.library, spec));
    } else {
      out.push_back(rpc_server::MeasureIsolated({child_}, tmp_, in.library, spec));
    }
  }
  return out;
}

std::string FormatProgress(const TaskProgress& p) {
  char buf[160];
  const bool global = p.total_budget > 0;
  std::snprintf(buf, sizeof(buf), "[Task %2d/%2d]  Current/Best: %7.2f/%7.2f GFLOPS | Progress: (%d/%d) | %.2f s",
                p.task, p.tasks, p.current_gflops, p.best_gflops, global ? p.total_done : p.done,
                global ? p.total_budget : p.budget, p.elapsed_s);
  return buf;
}

Result<std::vector<rpc_server::MeasureOutcome>> FairMeasurer::Measure(
    const std::vector<rpc_server::MeasureInput>& batch) {
  MutexLock lock(&mu_);
  const uint64_t ticket = next_ticket_++;
  while (serving_ != ticket) turn_.Wait(&mu_);
  lock.Unlock();
  auto result = inner_->Measure(batch);
  shares_this_machine_ = inner_->SharesThisMachine();
  lock.Lock();
  ++serving_;
  turn_.SignalAll();
  return result;
}

struct TaskTuner::State {
  compiler::Workload workload;
  compiler::Target target;
  TuneOptions options;
  Measurer* measurer;
  TrialLog* db;
  compiler::ConfigSpace space;
  explicit State(compiler::ConfigSpace sp) : space(std::move(sp)) {}
  // A record read back (resumed, or another tuner's) that must not steer the search: its config
  // is not this space's point at its index (stale, from another version, or edited), its status is
  // none tunefarm writes, or it claims success with a time that is not a finite positive number.
  // Counted, never used.
  bool Refused(const TrialRecord& t) const {
    if (!t.status_kind()) return true;
    auto cfg = space.Get(t.config_index);
    if (!cfg.ok() || (!t.config_json.empty() && cfg->ToJson() != t.config_json)) return true;
    return t.ok() && !t.usable();
  }
  std::shared_ptr<TaskFeatures> features;
  std::unique_ptr<SearchStrategy> search;
  int64_t fallback = -1;
  bool need_fallback = false;
  std::string target_string, target_keys;
  double flops = 0;
  int task_index = 0, task_count = 0;
  Clock::time_point start;
  // Sharing the database: this tuner's claim holder name, the configs whose trials it has taken
  // in (resumed, its own, other tuners'), the trials read so far, and failures it measures again.
  std::string holder;
  TrialRecord task;  // the task's workload and target fields, for claims
  std::set<int64_t> measured;
  NewTrials trials_seen;             // this task's trials, any tuner's, taken in
  std::map<int64_t, int64_t> retry;  // config -> the id of its failed trial that is measured again
  // Configs proposed (claimed by this tuner) and not yet recorded, and results recorded and not
  // yet learned from (the cost model refits once per batch's worth, or before proposing).
  std::set<int64_t> in_flight;
  std::vector<int64_t> unlearned;
  std::vector<double> unlearned_gflops;
};

TaskTuner::TaskTuner(std::unique_ptr<State> state) : state_(std::move(state)) {}

TaskTuner::~TaskTuner() {
  if (!state_) return;
  if (!state_->in_flight.empty()) {
    // Built or building, never measured: another tuner, or this one's next run, measures them.
    std::vector<int64_t> unrecorded(state_->in_flight.begin(), state_->in_flight.end());
    (void)state_->db->ReleaseClaims(state_->task, unrecorded, state_->holder);
  }
}

namespace {

// Unique among every tuner sharing a database: "HOST pid N RANDOM" (pids repeat, hosts too).
std::string ClaimHolder() {
  static const std::string holder = [] {
    char host[256] = {};
    gethostname(host, sizeof(host) - 1);
    std::random_device rd;
    char suffix[20];
    std::snprintf(suffix, sizeof(suffix), "%08x%08x", rd(), rd());
    return std::string(host) + " pid " + std::to_string(getpid()) + " " + suffix;
  }();
  return holder;
}

// Transfer learning: the database's successful trials of other workloads of the same template on
// the same target, as feature rows grouped by workload with labels scaled by each one's best.
std::vector<SearchOptions::TransferGroup> TransferData(const compiler::Workload& workload,
                                                       const compiler::Target& target, TrialLog& db, int jobs) {
  std::vector<SearchOptions::TransferGroup> groups;
  auto similar = db.ListSimilar(workload.implementation, target.ToString(), workload.Key(), 2000);
  if (!similar.ok() || similar->empty()) return groups;
  std::map<std::string, std::vector<const TrialRecord*>> by_workload;
  for (const auto& t : *similar) {
    if (t.mean_ms > 0) by_workload[t.workload_key].push_back(&t);
  }
  for (const auto& [key, trials] : by_workload) {
    auto w = compiler::Workload::FromKey(key);
    if (!w.ok() || trials.size() < 8) continue;
    w->implementation = workload.implementation;
    auto space = compiler::GetConfigSpace(*w, target);
    if (!space.ok()) continue;
    TaskFeatures features(*w, target, *space, jobs);
    std::vector<int64_t> configs;
    std::vector<float> gflops;
    std::set<int64_t> seen;
    for (const TrialRecord* t : trials) {
      if (!seen.insert(t->config_index).second || configs.size() >= 256) continue;
      configs.push_back(t->config_index);
      gflops.push_back(float(t->gflops()));
    }
    float top = *std::max_element(gflops.begin(), gflops.end());
    SearchOptions::TransferGroup g;
    g.x = features.Get(configs);
    for (float v : gflops) g.y.push_back(top > 0 ? v / top : 0.0f);
    groups.push_back(std::move(g));
  }
  return groups;
}

}  // namespace

Result<std::unique_ptr<TaskTuner>> TaskTuner::Create(const compiler::Workload& workload, const compiler::Target& target,
                                                     const TuneOptions& options, Measurer& measurer, TrialLog& db,
                                                     int task_index, int task_count) {
  TUNEFARM_ASSIGN_OR_RETURN(compiler::ConfigSpace space, compiler::GetConfigSpace(workload, target));
  auto st = std::make_unique<State>(std::move(space));
  st->workload = workload;
  st->target = target;
  st->options = options;
  st->measurer = &measurer;
  st->db = &db;
  st->task_index = task_index;
  st->task_count = task_count;
  TUNEFARM_ASSIGN_OR_RETURN(st->fallback, compiler::FallbackConfigIndex(workload, target));
  st->target_string = target.ToString();
  for (size_t k = 0; k < target.keys.size(); ++k) st->target_keys += (k ? "," : "") + target.keys[k];
  st->flops = workload.Flops();
  SearchOptions so;
  so.seed = options.seed + uint64_t(task_index) * 7919;
  so.xgb_objective = options.xgb_objective;
  // Tuned kernels must fit the model's activation layouts: a faster kernel that needs a layout
  // transform on each side loses more than it gains (TVM solves this with a graph tuner).
  // And every core must get work: a config whose parallel loop splits only over a few channel
  // chunks wins at one thread, then runs on one core of many (compiler::ParallelismFilter).
  auto feeds_every_core = compiler::ParallelismFilter(workload);
  if (options.keep_model_layout) {
    auto keeps_layout = compiler::ModelLayoutFilter(workload, target);
    so.accept = [keeps_layout, feeds_every_core](const compiler::Config& c) {
      return keeps_layout(c) && feeds_every_core(c);
    };
  } else {
    so.accept = feeds_every_core;
  }
  int transfer_rows = 0;
  if (options.tuner == TunerKind::kXgb) {
    st->features = std::make_shared<TaskFeatures>(workload, target, st->space, options.build_jobs);
    so.features = st->features;
    if (options.transfer) {
      so.transfer = TransferData(workload, target, db, options.build_jobs);
      for (const auto& g : so.transfer) transfer_rows += int(g.x.size());
    }
  }
  TUNEFARM_ASSIGN_OR_RETURN(st->search, MakeSearch(options.tuner, st->space, so));

  std::unique_ptr<TaskTuner> tuner(new TaskTuner(std::move(st)));
  State& s = *tuner->state_;
  TaskSummary& summary = tuner->summary_;
  summary.workload = workload;
  summary.transfer_rows = transfer_rows;
  tuner->budget_ = options.trials;
  summary.build_jobs = options.build_jobs;

  s.holder = ClaimHolder();
  // Alive for as long as this connection is open; claims of tuners that died are released.
  TUNEFARM_RETURN_IF_ERROR(db.HoldClaimHolder(s.holder));
  TUNEFARM_RETURN_IF_ERROR(db.ReleaseDeadClaims(s.holder));
  s.task.workload_key = workload.Key();
  s.task.template_name = workload.implementation;
  s.task.flops = s.flops;
  s.task.target = s.target_string;
  s.task.target_model = target.model;
  s.task.target_keys = s.target_keys;

  // Resume: what the database already holds for this workload on this target.
  TUNEFARM_ASSIGN_OR_RETURN(auto previous, db.List(workload.Key(), -1, workload.implementation));
  for (const auto& t : previous) s.trials_seen.First(t.id);
  std::vector<int64_t> seen;
  std::vector<double> seen_gflops;
  std::set<int64_t>& measured = s.measured;
  // A failure that may be the machine's rather than the config's (a crash, a timeout, a build or a
  // request the server refused) is measured again when the conditions say so: the earlier runs had
  // no success at all on this target (a broken setup fails everything), the thread count changed,
  // or it is the fallback (the summary's baseline is never hidden by one bad run).
  // Records are per thread count: trials measured at another count are another tuning of the task
  // (a config tuned for one core can lose on two), neither resumed nor counted here.
  auto here = [&](const TrialRecord& t) { return t.target == s.target_string && t.threads == options.threads; };
  bool any_ok = false;
  for (const auto& t : previous) any_ok = any_ok || (here(t) && t.ok());
  auto retried = [&](const TrialRecord& t) {
    const std::optional<TrialStatus> kind = t.status_kind();
    const bool machine_kind = kind && MayBeTheMachines(*kind);
    return machine_kind && (!any_ok || t.config_index == s.fallback);
  };
  for (const auto& t : previous) {
    if (here(t) && s.Refused(t)) {
      ++summary.skipped_records;
      continue;
    }
    // A claim is per config, not per thread count: one measured at another count is claimed again
    // through the trial that holds it, like a retry (ids ascend: the latest holds it).
    const bool other_threads = t.target == s.target_string && t.threads != options.threads;
    if ((here(t) && retried(t)) || other_threads) s.retry[t.config_index] = t.id;
    if (!here(t) || measured.count(t.config_index) || retried(t)) continue;
    measured.insert(t.config_index);
    double g = t.ok() ? Gflops(s.flops, t.mean_ms) : 0.0;
    seen.push_back(t.config_index);
    seen_gflops.push_back(g);
    if (g > summary.best_gflops) {
      summary.best_gflops = g;
      summary.best_config = t.config_index;
    }
    if (t.config_index == s.fallback) summary.fallback_gflops = g;
  }
  for (int64_t c : measured) s.retry.erase(c);
  if (!seen.empty()) s.search->MarkMeasured(seen, seen_gflops);
  summary.resumed = int(seen.size());
  tuner->done_ = summary.resumed;
  s.need_fallback = !measured.count(s.fallback);
  s.start = Clock::now();
  tuner->finished_ = tuner->done_ >= tuner->budget_;
  return tuner;
}

TaskProgress TaskTuner::progress() const {
  return TaskProgress{state_->task_index,
                      state_->task_count,
                      done_,
                      budget_,
                      last_batch_best_,
                      summary_.best_gflops,
                      std::chrono::duration<double>(Clock::now() - state_->start).count()};
}

Status TaskTuner::TakeInOthersTrials() {
  State& s = *state_;
  TUNEFARM_ASSIGN_OR_RETURN(auto fresh, s.db->TrialsOfTaskAfter(s.task.workload_key, s.task.template_name,
                                                                s.target_string, s.trials_seen.ReadFrom()));
  std::vector<int64_t> configs;
  std::vector<double> gflops;
  for (const auto& t : fresh) {
    if (!s.trials_seen.First(t.id)) continue;
    if (s.Refused(t)) {
      ++summary_.skipped_records;
      continue;
    }
    if (!s.measured.insert(t.config_index).second) continue;
    const double g = t.ok() ? Gflops(s.flops, t.mean_ms) : 0.0;
    configs.push_back(t.config_index);
    gflops.push_back(g);
    if (t.config_index == s.fallback) {
      summary_.fallback_gflops = g;
      s.need_fallback = false;
    }
    if (g > summary_.best_gflops) {
      summary_.best_gflops = g;
      summary_.best_config = t.config_index;
    }
    ++done_;
  }
  if (!configs.empty()) s.search->MarkMeasured(configs, gflops);
  return Status::OK();
}

int TaskTuner::in_flight() const { return int(state_->in_flight.size()); }

bool TaskTuner::StopsHere() const {
  const TuneOptions& options = state_->options;
  return done_ >= budget_ || (options.early_stopping > 0 && since_best_ >= options.early_stopping);
}

bool TaskTuner::saturated() const { return finished_ || exhausted_ || done_ + in_flight() >= budget_; }

void TaskTuner::Learn() {
  State& s = *state_;
  if (s.unlearned.empty()) return;
  const auto t_search = Clock::now();
  s.search->Update(s.unlearned, s.unlearned_gflops);  // refits the cost model
  summary_.search_s += MsSince(t_search) / 1e3;
  s.unlearned.clear();
  s.unlearned_gflops.clear();
}

Result<std::vector<int64_t>> TaskTuner::Propose(int n) {
  State& s = *state_;
  const TuneOptions& options = s.options;
  TUNEFARM_RETURN_IF_ERROR(TakeInOthersTrials());
  if (StopsHere()) finished_ = true;
  if (saturated()) return std::vector<int64_t>{};
  Learn();
  n = std::min(n > 0 ? n : options.batch, budget_ - done_ - in_flight());
  std::vector<int64_t> proposed;
  if (n > 0 && s.need_fallback) {  // measured first: the baseline of the summary's speedup
    proposed.push_back(s.fallback);
    s.search->Reserve({s.fallback});
    s.need_fallback = false;
    --n;
  }
  if (n > 0) {
    auto t_search = Clock::now();
    for (int64_t c : s.search->NextBatch(n)) proposed.push_back(c);
    summary_.search_s += MsSince(t_search) / 1e3;
  }
  if (proposed.empty()) {  // the space is exhausted
    exhausted_ = true;
    if (in_flight() == 0) finished_ = true;
    return proposed;
  }
  // Another tuner holds the claims it refused; their trials arrive through TakeInOthersTrials.
  TUNEFARM_ASSIGN_OR_RETURN(std::vector<int64_t> configs,
                            s.db->Claim(s.task, proposed, s.holder, options.claim_ttl_ms, s.retry));
  s.in_flight.insert(configs.begin(), configs.end());
  return configs;
}

namespace {

// What the measurer is sent for a built candidate.
rpc_server::MeasureInput MeasureInputOf(const Built& b, const compiler::Target& target, const TuneOptions& options) {
  rpc_server::MeasureInput in;
  in.library = b.library;
  in.cubin = b.cubin;
  if (!in.cubin.empty()) in.cubin_arch = target.arch;
  in.spec.symbol = "candidate";
  for (const auto& arg : b.info.buffers) in.spec.args.push_back(rpc_server::ArgSpec{arg.shape, arg.dtype, arg.role});
  in.spec.timing = options.timing;
  // In a model each layer's weights come from memory (the model's weights exceed the caches), not
  // from the cache a kernel timed alone warms: timed hot, kernels with large weights (Winograd's
  // transformed ones above all) rank up to 2x too fast and apply-history-best picks them wrongly
  // (bench/RESULTS.md, issue 16). So a model's CPU kernels are timed with every argument but the
  // input flushed before each call, as TVM's enable_cpu_cache_flush.
  if (options.cold_cache && !b.info.gpu) in.spec.timing.flush_cache = true;
  in.spec.seed = uint64_t(b.config);
  if (b.info.gpu) {
    // GPU kernels run in microseconds: rounds of about 5 ms of back-to-back launches between two
    // CUDA events (hundreds of launches of a 10-20 us kernel) keep the spread low at a thirtieth
    // of TVM's 450 ms per config, so a farm's GPU measures 20-40 candidates a second.
    if (in.spec.timing.min_repeat_ms == 0) in.spec.timing.min_repeat_ms = kGpuMinRepeatMs;
    in.spec.gpu.enabled = true;
    for (int d = 0; d < 3; ++d) {
      in.spec.gpu.grid[d] = b.info.grid[d];
      in.spec.gpu.block[d] = b.info.block[d];
    }
  }
  return in;
}

}  // namespace

std::function<Built()> TaskTuner::BuildJob(int64_t config, const std::atomic<bool>* cancel) const {
  // The state outlives the job: a tuner outlives the pipelines that build its candidates.
  const State* s = state_.get();
  return [s, config, cancel] {
    const BuildLimits limits{s->options.build_timeout_s * 1e3, cancel};
    Built b = BuildOne(s->workload, s->target, config, s->options.tmp_root, limits);
    if (!b.library.empty()) b.input = MeasureInputOf(b, s->target, s->options);
    return b;
  };
}

Result<int> TaskTuner::RunBatch(int n) {
  State& s = *state_;
  TUNEFARM_ASSIGN_OR_RETURN(std::vector<int64_t> configs, Propose(n));
  if (configs.empty()) return 0;
  TuningPipeline pipeline(*s.measurer, s.options.build_jobs, compiler::MeasuresWhileBuilding(s.target));
  for (int64_t c : configs) pipeline.Submit(0, BuildJob(c, pipeline.cancel()));
  int recorded = 0;
  while (pipeline.pending() > 0) {
    if (s.options.stop && s.options.stop->load()) {
      // Stopping (Ctrl-C, --time-limit): what is measured is recorded; the builds still running are
      // cancelled and their claims released (~TaskTuner).
      std::vector<FinishedCandidate> last = pipeline.Stop();
      TUNEFARM_RETURN_IF_ERROR(Record(last));
      recorded += int(last.size());
      break;
    }
    auto finished = pipeline.Wait(100);
    if (!finished.ok()) {
      // Give back what was not recorded: another tuner, or this one's next run, measures them.
      pipeline.Stop();
      std::vector<int64_t> unrecorded(s.in_flight.begin(), s.in_flight.end());
      (void)s.db->ReleaseClaims(s.task, unrecorded, s.holder);
      s.in_flight.clear();
      return finished.status();
    }
    TUNEFARM_RETURN_IF_ERROR(Record(*finished));
    recorded += int(finished->size());
  }
  Learn();
  return recorded;
}

Status TaskTuner::Record(std::vector<FinishedCandidate>& finished) {
  State& s = *state_;
  const TuneOptions& options = s.options;
  auto t_record = Clock::now();
  last_batch_best_ = 0;
  for (FinishedCandidate& f : finished) {
    const Built& b = f.built;
    summary_.built += 1;
    summary_.build_lower_s += b.phases.lower_ms / 1e3;
    summary_.build_codegen_s += b.phases.codegen_ms / 1e3;
    summary_.build_tool_s += b.phases.tool_ms / 1e3;
    summary_.measure_s += f.measure_ms / 1e3;
    summary_.build_s += f.waited_ms / 1e3;
    TrialRecord t;
    t.workload_key = s.workload.Key();
    t.template_name = s.workload.implementation;
    t.flops = s.flops;
    t.target = s.target_string;
    t.target_model = s.target.model;
    t.target_keys = s.target_keys;
    t.config_index = b.config;
    auto cfg = s.space.Get(b.config);
    t.config_json = cfg.ok() ? cfg->ToJson() : "";
    t.threads = options.threads;
    t.device_key = s.measurer->device_key();
    t.build_ms = b.build_ms;
    t.job_id = options.job_id;
    double gflops = 0;
    if (b.library.empty()) {
      t.set_status(b.status);
      t.error_message = b.message;
    } else {
      const rpc_server::MeasureOutcome& o = f.outcome;
      summary_.measured += 1;
      summary_.load_s += o.load_ms / 1e3;
      summary_.run_s += o.run_ms / 1e3;
      t.set_status(o.kind);
      t.error_message = o.message;
      t.costs_ms = o.costs_ms;
      t.run_ms = o.run_ms;
      if (o.kind == rpc_server::OutcomeKind::kOk && !o.costs_ms.empty()) {
        double mean = 0;
        for (double c : o.costs_ms) mean += c;
        t.mean_ms = mean / double(o.costs_ms.size());
        gflops = Gflops(s.flops, t.mean_ms);
      }
    }
    TUNEFARM_RETURN_IF_ERROR(s.db->AddTrial(&t, s.holder));  // committed as it completes
    s.trials_seen.First(t.id);
    s.measured.insert(t.config_index);
    s.in_flight.erase(b.config);
    s.unlearned.push_back(b.config);
    s.unlearned_gflops.push_back(gflops);
    if (!t.ok()) ++summary_.errors[t.status];
    if (b.config == s.fallback) summary_.fallback_gflops = gflops;
    last_batch_best_ = std::max(last_batch_best_, gflops);
    ++summary_.trials;
    ++done_;
    if (gflops > summary_.best_gflops) {
      summary_.best_gflops = gflops;
      summary_.best_config = b.config;
      since_best_ = 0;
    } else {
      ++since_best_;
    }
  }
  summary_.record_s += MsSince(t_record) / 1e3;
  // The cost model refits once a batch's worth has arrived, or when nothing of this task is in
  // flight (its batch is complete): as often as a batch-synchronous search refits it.
  if (int(s.unlearned.size()) >= options.batch || s.in_flight.empty()) Learn();
  if (StopsHere() || (exhausted_ && s.in_flight.empty())) finished_ = true;
  return Status::OK();
}

}  // namespace tunefarm::tuner
