// TuneTask: the propose -> build -> measure -> record loop for one workload.
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

#include "tunefarm/tuner/tuner.h"

namespace tunefarm::tuner {
namespace {

using Clock = std::chrono::steady_clock;

double MsSince(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

struct Built {
  int64_t config = -1;
  std::string library;   // bytes; empty when the build failed
  std::string status, message;
  compiler::KernelInfo info;
  double build_ms = 0;
};

Built BuildOne(const compiler::Workload& w, const compiler::Target& t, int64_t config, const std::string& tmp) {
  static std::atomic<int> counter{0};
  Built b;
  b.config = config;
  auto t0 = Clock::now();
  compiler::KernelSpec spec;
  spec.workload = w;
  spec.target = t;
  spec.config_index = config;
  spec.symbol = "candidate";
  const std::string path = tmp + "/tunefarm-cand-" + std::to_string(getpid()) + "-" + std::to_string(counter++) + ".so";
  std::vector<compiler::KernelInfo> infos;
  Status s = compiler::BuildSharedLibrary({spec}, path, &infos);
  if (s.ok()) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    b.library = ss.str();
    b.info = infos[0];
  } else {
    b.status = s.code() == StatusCode::kInvalidArgument ? "instantiation_error" : "compile_error";
    b.message = s.message();
  }
  std::remove(path.c_str());
  b.build_ms = MsSince(t0);
  return b;
}

}  // namespace

Result<std::vector<rpc_server::MeasureOutcome>> LocalMeasurer::Measure(const std::vector<rpc_server::MeasureInput>& batch) {
  std::vector<rpc_server::MeasureOutcome> out;
  for (const auto& in : batch) {
    rpc_server::MeasureSpec spec = in.spec;
    spec.threads = threads_;
    spec.timing.memory_limit_bytes = memory_;
    out.push_back(rpc_server::MeasureIsolated({child_}, tmp_, in.library, spec));
  }
  return out;
}

Result<TaskSummary> TuneTask(const compiler::Workload& workload, const compiler::Target& target, const TuneOptions& options,
                             Measurer& measurer, RecordsDb& db, int task_index, int task_count,
                             const std::function<void(const TaskProgress&)>& progress) {
  TUNEFARM_ASSIGN_OR_RETURN(compiler::ConfigSpace space, compiler::GetConfigSpace(workload, target));
  TUNEFARM_ASSIGN_OR_RETURN(int64_t fallback, compiler::FallbackConfigIndex(workload, target));
  SearchOptions so;
  so.seed = options.seed + uint64_t(task_index) * 7919;
  // Tuned kernels must fit the model's activation layouts: a faster kernel that needs a layout
  // transform on each side loses more than it gains (TVM solves this with a graph tuner).
  so.accept = [&workload, &target](const compiler::Config& c) { return compiler::KeepsModelLayout(workload, target, c); };
  TUNEFARM_ASSIGN_OR_RETURN(auto search, MakeSearch(options.tuner, space, so));
  const std::string target_string = target.ToString();
  const double flops = workload.Flops();
  TaskSummary summary;
  summary.workload = workload;

  // Resume: what the database already holds for this workload on this target.
  TUNEFARM_ASSIGN_OR_RETURN(auto previous, db.List(workload.Key()));
  std::vector<int64_t> seen;
  std::vector<double> seen_gflops;
  std::set<int64_t> measured;
  for (const auto& t : previous) {
    if (t.target != target_string || measured.count(t.config_index)) continue;
    measured.insert(t.config_index);
    double g = t.status == "ok" && t.mean_ms > 0 ? flops / (t.mean_ms * 1e6) : 0.0;
    seen.push_back(t.config_index);
    seen_gflops.push_back(g);
    if (g > summary.best_gflops) {
      summary.best_gflops = g;
      summary.best_config = t.config_index;
    }
    if (t.config_index == fallback) summary.fallback_gflops = g;
  }
  if (!seen.empty()) search->MarkMeasured(seen, seen_gflops);
  summary.resumed = int(seen.size());

  auto start = Clock::now();
  int done = summary.resumed, since_best = 0;
  bool need_fallback = !measured.count(fallback);
  while (done < options.trials) {
    if (options.early_stopping > 0 && since_best >= options.early_stopping) break;
    if (options.stop && options.stop->load()) break;
    int n = std::min(options.batch, options.trials - done);
    std::vector<int64_t> configs;
    if (need_fallback) {  // measured first: the baseline of the summary's speedup
      configs.push_back(fallback);
      search->Reserve({fallback});
      need_fallback = false;
      --n;
    }
    for (int64_t c : search->NextBatch(n)) configs.push_back(c);
    if (configs.empty()) break;  // the space is exhausted

    // Build in parallel, each candidate its own library.
    std::vector<Built> built(configs.size());
    std::atomic<size_t> next{0};
    std::vector<std::thread> workers;
    for (int j = 0; j < std::max(1, options.build_jobs); ++j) {
      workers.emplace_back([&] {
        for (size_t i; (i = next++) < configs.size();) built[i] = BuildOne(workload, target, configs[i], options.tmp_root);
      });
    }
    for (auto& w : workers) w.join();

    std::vector<rpc_server::MeasureInput> inputs;
    std::vector<size_t> input_of;
    for (size_t i = 0; i < built.size(); ++i) {
      if (built[i].library.empty()) continue;
      rpc_server::MeasureInput in;
      in.library = built[i].library;
      in.spec.symbol = "candidate";
      for (const auto& b : built[i].info.buffers) in.spec.args.push_back(rpc_server::ArgSpec{b.shape, "float32", b.role});
      in.spec.timing = options.timing;
      in.spec.seed = uint64_t(configs[i]);
      input_of.push_back(i);
      inputs.push_back(std::move(in));
    }
    std::vector<rpc_server::MeasureOutcome> outcomes;
    if (!inputs.empty()) {
      TUNEFARM_ASSIGN_OR_RETURN(outcomes, measurer.Measure(inputs));
    }
    std::vector<double> gflops(configs.size(), 0.0);
    double batch_best = 0;
    for (size_t i = 0; i < built.size(); ++i) {
      TrialRecord t;
      t.workload_key = workload.Key();
      t.template_name = workload.template_name;
      t.flops = flops;
      t.target = target_string;
      t.target_model = target.model;
      for (size_t k = 0; k < target.keys.size(); ++k) t.target_keys += (k ? "," : "") + target.keys[k];
      t.config_index = configs[i];
      auto cfg = space.Get(configs[i]);
      t.config_json = cfg.ok() ? cfg->ToJson() : "";
      t.threads = options.threads;
      t.device_key = measurer.device_key();
      t.build_ms = built[i].build_ms;
      if (built[i].library.empty()) {
        t.status = built[i].status;
        t.error_message = built[i].message;
      } else {
        size_t k = size_t(std::find(input_of.begin(), input_of.end(), i) - input_of.begin());
        const auto& o = outcomes[k];
        t.status = rpc_server::OutcomeKindName(o.kind);
        t.error_message = o.message;
        t.costs_ms = o.costs_ms;
        t.run_ms = o.run_ms;
        if (o.kind == rpc_server::OutcomeKind::kOk && !o.costs_ms.empty()) {
          double mean = 0;
          for (double c : o.costs_ms) mean += c;
          t.mean_ms = mean / double(o.costs_ms.size());
          gflops[i] = flops / (t.mean_ms * 1e6);
        }
      }
      TUNEFARM_RETURN_IF_ERROR(db.AddTrial(&t));  // committed as it completes
      if (t.status != "ok") ++summary.errors[t.status];
      if (configs[i] == fallback) summary.fallback_gflops = gflops[i];
      batch_best = std::max(batch_best, gflops[i]);
      ++summary.trials;
      ++done;
      if (gflops[i] > summary.best_gflops) {
        summary.best_gflops = gflops[i];
        summary.best_config = configs[i];
        since_best = 0;
      } else {
        ++since_best;
      }
    }
    search->Update(configs, gflops);
    if (progress) {
      TaskProgress p{task_index, task_count, done, options.trials, batch_best, summary.best_gflops,
                     std::chrono::duration<double>(Clock::now() - start).count()};
      progress(p);
    }
  }
  return summary;
}

}  // namespace tunefarm::tuner
