// TuneTasks: the task scheduler over a model's tasks (tuner.h).
#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

#include "tunefarm/tuner/tuner.h"

namespace tunefarm::tuner {
namespace {

// A task's share of the model's latency in ms (weight x flops / best GFLOP/s); +inf before any
// successful trial, so unmeasured tasks come first.
double LatencyShare(const ScheduledTask& task, const TaskTuner& tuner) {
  double best = tuner.summary().best_gflops;
  return best > 0 ? task.weight * task.workload.Flops() / (best * 1e6) : std::numeric_limits<double>::infinity();
}

}  // namespace

Result<std::vector<TaskSummary>> TuneTasks(const std::vector<ScheduledTask>& tasks, const compiler::Target& target,
                                           const TuneOptions& options, const ScheduleOptions& schedule,
                                           Measurer& measurer, TrialLog& db,
                                           const std::function<void(const TaskProgress&)>& progress) {
  const bool global = schedule.total_trials > 0;
  auto stopped = [&] { return options.stop && options.stop->load(); };
  std::vector<std::unique_ptr<TaskTuner>> tuners;
  std::vector<TaskSummary> summaries;
  if (!global) {  // sequential: each task to its own budget, created only when its turn comes
    for (size_t i = 0; i < tasks.size() && !stopped(); ++i) {
      TUNEFARM_ASSIGN_OR_RETURN(TaskSummary s, TuneTask(tasks[i].workload, target, options, measurer, db, int(i + 1),
                                                        int(tasks.size()), progress));
      summaries.push_back(std::move(s));
    }
    return summaries;
  }

  TuneOptions per_task = options;
  per_task.trials = std::numeric_limits<int>::max() / 2;  // the scheduler decides when a task stops
  int spent = 0;
  for (size_t i = 0; i < tasks.size(); ++i) {
    TUNEFARM_ASSIGN_OR_RETURN(
        auto t, TaskTuner::Create(tasks[i].workload, target, per_task, measurer, db, int(i + 1), int(tasks.size())));
    spent += t->done();
    tuners.push_back(std::move(t));
  }
  // Latency share after each batch, for the backward difference of the gradient.
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

  auto pick = [&]() -> int {
    std::vector<int> open;
    for (size_t i = 0; i < tuners.size(); ++i) {
      if (!tuners[i]->finished()) open.push_back(int(i));
    }
    if (open.empty()) return -1;
    // Every task gets a first batch before gradients mean anything.
    for (int i : open) {
      if (tuners[size_t(i)]->done() == 0 || std::isinf(history[size_t(i)].back().second)) return i;
    }
    if (schedule.scheduler == SchedulerKind::kRoundRobin) {
      for (size_t k = 0; k < tuners.size(); ++k) {
        size_t i = (round_robin + k) % tuners.size();
        if (!tuners[i]->finished()) {
          round_robin = i + 1;
          return int(i);
        }
      }
      return -1;
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
  while (spent < schedule.total_trials && !stopped()) {
    int i = pick();
    if (i < 0) break;  // every space exhausted
    TaskTuner& t = *tuners[size_t(i)];
    const int batch = t.done() == 0 ? first_batch : options.batch;
    TUNEFARM_ASSIGN_OR_RETURN(int n, t.RunBatch(std::min(batch, schedule.total_trials - spent)));
    // The budget counts the database's trials of these tasks: other tuners sharing it spend it too.
    spent = 0;
    for (const auto& tuner : tuners) spent += tuner->done();
    history[size_t(i)].push_back({t.done(), LatencyShare(tasks[size_t(i)], t)});
    if (n > 0 && progress) {
      TaskProgress p = t.progress();
      p.total_done = spent;
      p.total_budget = schedule.total_trials;
      progress(p);
    }
  }
  for (const auto& t : tuners) summaries.push_back(t->summary());
  return summaries;
}

}  // namespace tunefarm::tuner
