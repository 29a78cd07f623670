// TuneTasks: the task scheduler over a model's tasks (tuner.h), feeding one pipeline of builds and
// measurements (tuning_pipeline.h) from whichever task it picks.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <random>
#include <thread>

#include "tunefarm/tuner/tuner.h"
#include "tuner/search/tuning_pipeline.h"

namespace tunefarm::tuner {
namespace {

// A task's share of the model's latency in ms (weight x flops / best GFLOP/s); +inf before any
// successful trial, so unmeasured tasks come first.
double LatencyShare(const ScheduledTask& task, const TaskTuner& tuner) {
  double best = tuner.summary().best_gflops;
  return best > 0 ? task.weight * task.workload.Flops() / (best * 1e6) : std::numeric_limits<double>::infinity();
}

// Keeps `pipeline` fed from the task `next` names (-1: none may propose now; *n: how many) until
// nothing is in flight and nothing more can be proposed, or the stop flag is set (what is measured
// then is still recorded). `recorded(i)` after each arrival of task i's results.
Status RunPipeline(TuningPipeline& pipeline, const TuneOptions& options, const std::function<TaskTuner&(int)>& tuner,
                   const std::function<int(int* n)>& next, const std::function<void(int)>& recorded) {
  auto stopped = [&] { return options.stop && options.stop->load(); };
  auto record = [&](std::vector<FinishedCandidate>& finished) -> Status {
    std::map<int, std::vector<FinishedCandidate>> by_task;
    for (FinishedCandidate& f : finished) by_task[f.built.owner].push_back(std::move(f));
    for (auto& [i, group] : by_task) {
      TUNEFARM_RETURN_IF_ERROR(tuner(i).Record(group));
      recorded(i);
    }
    return Status::OK();
  };
  for (;;) {
    bool proposed = false, held_elsewhere = false;
    while (!stopped() && pipeline.WantsMore()) {
      int n = 0;
      const int i = next(&n);
      if (i < 0) break;
      TaskTuner& t = tuner(i);
      TUNEFARM_ASSIGN_OR_RETURN(std::vector<int64_t> configs, t.Propose(n));
      if (configs.empty() && !t.saturated()) {  // other tuners hold every config it proposed
        held_elsewhere = true;
        break;
      }
      for (int64_t c : configs) pipeline.Submit(i, t.BuildJob(c, pipeline.cancel()));
      proposed = proposed || !configs.empty();
    }
    if (stopped()) {
      std::vector<FinishedCandidate> last = pipeline.Stop();
      return record(last);
    }
    if (pipeline.pending() == 0) {
      if (!proposed && !held_elsewhere) return Status::OK();
      // Their trials arrive through the database (TaskTuner::Propose takes them in).
      if (held_elsewhere) std::this_thread::sleep_for(std::chrono::milliseconds(100));
      continue;
    }
    TUNEFARM_ASSIGN_OR_RETURN(std::vector<FinishedCandidate> finished, pipeline.Wait(100));
    TUNEFARM_RETURN_IF_ERROR(record(finished));
  }
}

// Progress after each batch's worth of a task's results (or its last in flight), not each result.
class ProgressEvery {
 public:
  ProgressEvery(const std::function<void(const TaskProgress&)>& progress, int batch)
      : progress_(progress), batch_(std::max(1, batch)) {}
  void Recorded(const TaskTuner& t, int task, int total_done = 0, int total_budget = 0) {
    int& since = since_[task];
    since += t.done() - last_done_[task];
    last_done_[task] = t.done();
    if (!progress_ || (since < batch_ && t.in_flight() > 0) || since == 0) return;
    since = 0;
    TaskProgress p = t.progress();
    p.total_done = total_done;
    p.total_budget = total_budget;
    progress_(p);
  }
  void Seen(const TaskTuner& t, int task) { last_done_[task] = t.done(); }

 private:
  const std::function<void(const TaskProgress&)>& progress_;
  const int batch_;
  std::map<int, int> since_, last_done_;
};

}  // namespace

Result<TaskSummary> TuneTask(const compiler::Workload& workload, const compiler::Target& target,
                             const TuneOptions& options, Measurer& measurer, TrialLog& db, int task_index,
                             int task_count, const std::function<void(const TaskProgress&)>& progress) {
  TUNEFARM_ASSIGN_OR_RETURN(auto t, TaskTuner::Create(workload, target, options, measurer, db, task_index, task_count));
  ProgressEvery every(progress, options.batch);
  every.Seen(*t, 0);
  {
    TuningPipeline pipeline(measurer, options.build_jobs, compiler::MeasuresWhileBuilding(target));
    auto next = [&](int* n) {
      *n = options.batch;
      return t->saturated() ? -1 : 0;
    };
    TUNEFARM_RETURN_IF_ERROR(RunPipeline(
        pipeline, options, [&](int) -> TaskTuner& { return *t; }, next, [&](int) { every.Recorded(*t, 0); }));
  }
  return t->summary();
}

Result<std::vector<TaskSummary>> TuneTasks(const std::vector<ScheduledTask>& tasks, const compiler::Target& target,
                                           const TuneOptions& options, const ScheduleOptions& schedule,
                                           Measurer& measurer, TrialLog& db,
                                           const std::function<void(const TaskProgress&)>& progress) {
  const bool global = schedule.total_trials > 0;
  // Declared before the pipeline, so the pipeline (whose builds read the tuners) goes first.
  std::vector<std::unique_ptr<TaskTuner>> tuners;
  ProgressEvery every(progress, options.batch);
  std::vector<TaskSummary> summaries;
  if (!global) {
    // Sequential: each task to its own budget, created only when its turn comes; where builds may
    // run beside measurements, the next task's first batch builds while this one's last is measured.
    size_t current = 0;
    Status created = Status::OK();
    auto next = [&](int* n) -> int {
      for (; current < tasks.size(); ++current) {
        if (tuners.size() <= current) {
          auto t = TaskTuner::Create(tasks[current].workload, target, options, measurer, db, int(current + 1),
                                     int(tasks.size()));
          if (!t.ok()) {
            created = t.status();
            return -1;
          }
          every.Seen(**t, int(current));
          tuners.push_back(std::move(*t));
        }
        if (!tuners[current]->saturated()) {
          *n = options.batch;
          return int(current);
        }
      }
      return -1;
    };
    {
      TuningPipeline pipeline(measurer, options.build_jobs, compiler::MeasuresWhileBuilding(target));
      Status s = RunPipeline(
          pipeline, options, [&](int i) -> TaskTuner& { return *tuners[size_t(i)]; }, next,
          [&](int i) { every.Recorded(*tuners[size_t(i)], i); });
      TUNEFARM_RETURN_IF_ERROR(s);
    }
    TUNEFARM_RETURN_IF_ERROR(created);
    for (const auto& t : tuners) summaries.push_back(t->summary());
    return summaries;
  }

  TuneOptions per_task = options;
  per_task.trials = std::numeric_limits<int>::max() / 2;  // the scheduler decides when a task stops
  int spent = 0;
  for (size_t i = 0; i < tasks.size(); ++i) {
    TUNEFARM_ASSIGN_OR_RETURN(
        auto t, TaskTuner::Create(tasks[i].workload, target, per_task, measurer, db, int(i + 1), int(tasks.size())));
    spent += t->done();
    every.Seen(*t, int(i));
    tuners.push_back(std::move(t));
  }
  // Latency share after each arrival of results, for the backward difference of the gradient.
  std::vector<std::vector<std::pair<int, double>>> history(tasks.size());
  for (size_t i = 0; i < tasks.size(); ++i)
    history[i].push_back({tuners[i]->done(), LatencyShare(tasks[i], *tuners[i])});
  // Alternatives of one node share a group, led by the default implementation's task.
  std::vector<size_t> group(tasks.size());
  for (size_t i = 0; i < tasks.size(); ++i) {
    group[i] = i;
    for (size_t j = 0; j < tasks.size() && tasks[i].alternative_of.has_value(); ++j) {
      if (tasks[j].workload.ImplementationKey() == tasks[i].alternative_of->ImplementationKey()) group[i] = j;
    }
  }
  // How much task i's latency matters: 1 for the best of its group, best / own for the others.
  auto relevance = [&](size_t i) {
    const double own = history[i].back().second;
    double best = own;
    for (size_t j = 0; j < tasks.size(); ++j) {
      if (group[j] == group[i]) best = std::min(best, history[j].back().second);
    }
    return std::isinf(own) || own <= 0 ? 1.0 : best / own;
  };
  std::mt19937_64 rng(options.seed ^ 0x5eedULL);
  size_t round_robin = 0;

  // The task to propose from among `open` (not empty).
  auto choose = [&](const std::vector<int>& open) -> int {
    // Every task gets a first batch before gradients mean anything.
    for (int i : open) {
      if (tuners[size_t(i)]->done() == 0 || std::isinf(history[size_t(i)].back().second)) return i;
    }
    if (schedule.scheduler == SchedulerKind::kRoundRobin) {
      for (size_t k = 0; k < tuners.size(); ++k) {
        const size_t i = (round_robin + k) % tuners.size();
        if (std::find(open.begin(), open.end(), int(i)) != open.end()) {
          round_robin = i + 1;
          return int(i);
        }
      }
      return open[0];
    }
    if (std::uniform_real_distribution<double>(0, 1)(rng) < 0.05) return open[rng() % open.size()];
    // Ansor's gradient: a mix of the recent drop per trial (backward) and an optimistic forward
    // estimate (latency falling as 1/trials), scaled by the task's relevance among the
    // alternatives of its nodes; the most negative wins.
    const double alpha = 0.2;
    int best = open[0];
    double best_gradient = std::numeric_limits<double>::infinity();
    for (int i : open) {
      const auto& h = history[size_t(i)];
      double now = h.back().second;
      double backward = 0;
      if (h.size() >= 2 && h.back().first > h[h.size() - 2].first && !std::isinf(h[h.size() - 2].second)) {
        backward = (now - h[h.size() - 2].second) / double(h.back().first - h[h.size() - 2].first);
      }
      double forward = -now / double(std::max(1, tuners[size_t(i)]->done()));
      double g = (alpha * backward + (1 - alpha) * forward) * relevance(size_t(i));
      if (g < best_gradient) {
        best_gradient = g;
        best = i;
      }
    }
    return best;
  };

  // When the budget cannot give every task a full first batch, the first batches shrink so every
  // task is measured at least a little (its fallback config first).
  const int first_batch =
      std::clamp(schedule.total_trials / std::max<int>(1, int(tasks.size())), 2, std::max(2, options.batch));
  auto next = [&](int* n) -> int {
    int in_flight = 0;
    for (const auto& t : tuners) in_flight += t->in_flight();
    const int left = schedule.total_trials - spent - in_flight;
    if (left <= 0) return -1;
    // A task with a batch in flight is picked again only when every open task has one: its next
    // batch is proposed knowing the last one's results where that costs the builders nothing.
    std::vector<int> open, idle;
    for (size_t i = 0; i < tuners.size(); ++i) {
      if (tuners[i]->saturated()) continue;
      open.push_back(int(i));
      if (tuners[i]->in_flight() == 0) idle.push_back(int(i));
    }
    if (open.empty()) return -1;
    const int i = choose(idle.empty() ? open : idle);
    const TaskTuner& t = *tuners[size_t(i)];
    *n = std::min(t.done() == 0 && t.in_flight() == 0 ? first_batch : options.batch, left);
    return i;
  };
  auto recorded = [&](int i) {
    // The budget counts the database's trials of these tasks: other tuners sharing it spend it too.
    spent = 0;
    for (const auto& tuner : tuners) spent += tuner->done();
    // A point per batch's worth of results (or the last of those in flight), as the gradient's
    // backward difference was defined over batches.
    auto& h = history[size_t(i)];
    const TaskTuner& t = *tuners[size_t(i)];
    if (t.done() - h.back().first >= options.batch || t.in_flight() == 0)
      h.push_back({t.done(), LatencyShare(tasks[size_t(i)], t)});
    every.Recorded(*tuners[size_t(i)], i, spent, schedule.total_trials);
  };
  {
    TuningPipeline pipeline(measurer, options.build_jobs, compiler::MeasuresWhileBuilding(target));
    TUNEFARM_RETURN_IF_ERROR(RunPipeline(
        pipeline, options, [&](int i) -> TaskTuner& { return *tuners[size_t(i)]; }, next, recorded));
  }
  for (const auto& t : tuners) summaries.push_back(t->summary());
  return summaries;
}

}  // namespace tunefarm::tuner
