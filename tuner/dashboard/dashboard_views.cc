#include "tuner/dashboard/dashboard_views.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <limits>
#include <map>

#include "tunefarm/compiler/workload.h"
#include "tuner/dashboard/knob_importance.h"

namespace tunefarm::tuner::dashboard {
namespace {

constexpr int64_t kAllRows = std::numeric_limits<int64_t>::max();
// What one answer may read of the trials table, whatever the database holds: a page of /api/trials
// (the page asks for the rest with `more`), and the trials a Task, Model or Compare view analyses
// (the oldest ones up to the budget: "sampled" says when some were left out).
constexpr int64_t kPageBytes = int64_t(8) << 20, kAnalysisBytes = int64_t(32) << 20;

// A task as a job's progress names it: "implementation:workload key" (Workload::ImplementationKey),
// or, in jobs run before schema version 3, the old key that began with its implementation.
std::string StoredTaskKey(const std::string& stored) {
  const StoredTaskName task = ParseStoredTaskName(stored);
  return compiler::TaskName(task.implementation, task.key);
}

Json NullIfZero(double v) { return v > 0 ? Json(v) : Json(nullptr); }

Json TrialJson(const TrialRecord& t) {
  return Json{{"id", t.id},
              {"workload", t.workload_key},
              {"task_name", TaskDisplayName(t.template_name, t.workload_key)},
              {"template", t.template_name},
              {"target", t.target},
              {"device", t.device_key},
              {"status", t.status},
              {"message", t.error_message},
              {"config_index", t.config_index},
              {"config", t.config_json},
              {"mean_ms", NullIfZero(t.mean_ms)},
              {"gflops", Gflops(t.flops, t.mean_ms)},
              {"job", t.job_id},
              {"created_at", t.created_at}};
}

// A job row: its spec's model and target, progress, and an ETA from its rate so far.
Json JobJson(const JobRecord& job) {
  const Json spec = Json::parse(job.spec_json, nullptr, false);
  const Json progress = Json::parse(job.progress_json, nullptr, false);
  auto field = [](const Json& j, const char* name, const Json& def) {
    return j.is_object() && j.contains(name) ? j[name] : def;
  };
  const int64_t done = field(progress, "trials_done", 0).get<int64_t>();
  const int64_t budget = field(progress, "trials_budget", 0).get<int64_t>();
  Json eta = nullptr;
  const int64_t elapsed_ms = EpochMs(job.updated_at) - EpochMs(job.created_at);
  if (job.state_kind().ok() && *job.state_kind() == JobState::kRunning && done > 0 && budget > done && elapsed_ms > 0) {
    eta = double(elapsed_ms) / 1000.0 / double(done) * double(budget - done);
  }
  return Json{{"id", job.id},
              {"model", field(spec, "model", "")},
              {"target", field(spec, "target", "")},
              {"tuner", field(spec, "tuner", "")},
              {"state", job.state},
              {"trials_done", done},
              {"trials_budget", budget},
              {"eta_s", eta},
              {"message", field(progress, "message", "")},
              {"runner", job.daemon},  // the tuner-daemon's name, or kTuneCommandRunner
              {"cancellable", job.daemon != kTuneCommandRunner},
              {"created_at", job.created_at},
              {"updated_at", job.updated_at}};
}

struct ModelTask {
  std::string workload;  // the task: "implementation:workload key" (Workload::ImplementationKey)
  int weight = 1;
  double flops = 0;
  int64_t budget = 0;  // trials per task when the job has a sequential budget; 0: unknown
  std::string alternative_of;
};

// The model's estimated latency from each task's best (0: none yet): the sum over the default
// tasks of weight x the fastest of the default and its alternatives (the compiler runs the faster
// implementation of the same nodes). 0 while some nodes have no result at all.
class LatencyEstimate {
 public:
  explicit LatencyEstimate(const std::vector<ModelTask>& tasks) : tasks_(tasks), group_(tasks.size()) {
    std::map<std::string, size_t> index;
    for (size_t i = 0; i < tasks.size(); ++i) index.emplace(tasks[i].workload, i);
    for (size_t i = 0; i < tasks.size(); ++i) {
      auto it = tasks[i].alternative_of.empty() ? index.end() : index.find(tasks[i].alternative_of);
      group_[i] = it == index.end() ? i : it->second;
    }
  }
  // The default task i runs as (itself when it is one).
  size_t group(size_t i) const { return group_[i]; }
  double Ms(const std::vector<double>& best_ms) const {
    std::vector<double> fastest(tasks_.size(), 0.0);
    for (size_t i = 0; i < tasks_.size(); ++i) {
      double& f = fastest[group_[i]];
      if (best_ms[i] > 0 && (f == 0 || best_ms[i] < f)) f = best_ms[i];
    }
    double total = 0;
    for (size_t i = 0; i < tasks_.size(); ++i) {
      if (group_[i] != i) continue;
      if (fastest[i] == 0) return 0;
      total += fastest[i] * tasks_[i].weight;
    }
    return total;
  }

 private:
  const std::vector<ModelTask>& tasks_;
  std::vector<size_t> group_;
};

}  // namespace

std::string WorkloadDisplayName(const std::string& key) {
  std::vector<std::string> fields;
  for (size_t begin = 0;;) {
    const size_t bar = key.find('|', begin);
    fields.push_back(key.substr(begin, bar == std::string::npos ? std::string::npos : bar - begin));
    if (bar == std::string::npos) break;
    begin = bar + 1;
  }
  // Keys of schema version 3 have five fields: operator, input, parameters, layout, dtype.
  if (fields.size() != 5) return key;
  std::string name = fields[0] + " " + fields[1] + " " + fields[2];
  if (fields[4] != "float32") name += " " + fields[4];
  return name;
}

std::string TaskDisplayName(const std::string& template_name, const std::string& workload_key) {
  const std::string workload = WorkloadDisplayName(workload_key);
  return template_name.empty() ? workload : template_name + " " + workload;
}

int64_t EpochMs(const std::string& iso) {
  std::tm tm{};
  int year, month, day, hour, minute;
  double second;
  if (std::sscanf(iso.c_str(), "%d-%d-%dT%d:%d:%lfZ", &year, &month, &day, &hour, &minute, &second) != 6) return 0;
  tm.tm_year = year - 1900;
  tm.tm_mon = month - 1;
  tm.tm_mday = day;
  tm.tm_hour = hour;
  tm.tm_min = minute;
  return int64_t(timegm(&tm)) * 1000 + int64_t(std::lround(second * 1000.0));
}

Result<Json> OverviewView(DashboardRecords db) {
  TUNEFARM_ASSIGN_OR_RETURN(int64_t trials, db.queries.CountTrials());
  TUNEFARM_ASSIGN_OR_RETURN(int64_t last_id, db.queries.LastTrialId());
  TUNEFARM_ASSIGN_OR_RETURN(auto jobs, db.jobs.ListJobs());
  TUNEFARM_ASSIGN_OR_RETURN(auto failures, db.queries.RecentFailures(20));
  Json out{{"path", db.queries.location()},
           {"trials", trials},
           {"last_id", last_id},
           {"jobs", Json::array()},
           {"recent_errors", Json::array()}};
  for (auto it = jobs.rbegin(); it != jobs.rend(); ++it) out["jobs"].push_back(JobJson(*it));
  for (const auto& t : failures) out["recent_errors"].push_back(TrialJson(t));
  return out;
}

Result<Json> ModelsView(DashboardRecords db) {
  TUNEFARM_ASSIGN_OR_RETURN(auto jobs, db.jobs.ListJobs());
  Json out{{"models", Json::array()}};
  for (const auto& job : jobs) out["models"].push_back(JobJson(job));
  TUNEFARM_ASSIGN_OR_RETURN(int64_t trials, db.queries.CountTrialsOfJob(0));
  if (trials > 0) {
    out["models"].push_back(
        Json{{"id", 0}, {"model", "trials outside daemon jobs"}, {"state", ""}, {"trials_done", trials}});
  }
  return out;
}

Result<Json> ModelView(DashboardRecords db, int64_t job_id) {
  std::vector<ModelTask> tasks;
  Json header;
  bool job_done = false;
  if (job_id > 0) {
    TUNEFARM_ASSIGN_OR_RETURN(JobRecord job, db.jobs.GetJob(job_id));
    header = JobJson(job);
    job_done = job.state_kind().ok() && *job.state_kind() == JobState::kDone;
    const Json progress = Json::parse(job.progress_json, nullptr, false);
    const Json spec = Json::parse(job.spec_json, nullptr, false);
    const int64_t per_task = spec.is_object() && !spec.contains("total_trials") ? spec.value("trials_per_task", 0) : 0;
    if (progress.is_object() && progress.contains("tasks")) {
      for (const auto& t : progress["tasks"]) {
        tasks.push_back({StoredTaskKey(t.value("workload", "")), std::max(1, t.value("weight", 1)),
                         t.value("flops", 0.0), per_task, StoredTaskKey(t.value("alternative_of", ""))});
      }
    }
  } else {
    header = Json{{"id", 0}, {"model", "trials outside daemon jobs"}};
  }
  TUNEFARM_ASSIGN_OR_RETURN(auto stats, db.queries.TaskStatsOf(job_id, 0));
  std::map<std::string, const TaskStats*> by_key;
  // A task as jobs name it; a version-2 database (read as it is) stores its keys in their older form.
  auto task_key = [](const TaskStats& s) { return compiler::TaskName(s.template_name, s.workload_key); };
  for (const auto& s : stats) by_key.emplace(task_key(s), &s);
  if (job_id == 0) {
    for (const auto& s : stats) tasks.push_back({task_key(s), 1, s.flops, 0, ""});
  }

  const LatencyEstimate estimate(tasks);
  Json rows = Json::array();
  std::vector<double> best_now(tasks.size(), 0.0);
  std::map<int64_t, size_t> task_of_workload;  // workload id -> row, for the latency history
  for (size_t i = 0; i < tasks.size(); ++i) {
    const ModelTask& t = tasks[i];
    auto it = by_key.find(t.workload);
    const TaskStats* s = it == by_key.end() ? nullptr : it->second;
    const double flops = t.flops > 0 ? t.flops : (s ? s->flops : 0.0);
    const double best_ms = s ? s->best_ms : 0.0;
    const double latency_us = best_ms * 1000.0;
    best_now[i] = best_ms;
    const int64_t trials = s ? s->trials : 0;
    if (s) task_of_workload[s->workload_id] = i;
    const bool done = job_done || (t.budget > 0 && trials >= t.budget);
    const auto [implementation, key] = compiler::ParseTaskName(t.workload);
    rows.push_back(Json{{"task", i},
                        {"task_id", s ? s->workload_id : 0},
                        {"workload", key},
                        {"template", implementation},
                        {"name", TaskDisplayName(implementation, key)},
                        {"flops", flops},
                        {"weight", t.weight},
                        {"best_gflops", Gflops(flops, best_ms)},
                        {"latency_us", NullIfZero(latency_us)},
                        {"weighted_latency_us", NullIfZero(latency_us * t.weight)},
                        {"trials", trials},
                        {"ok_trials", s ? s->ok_trials : 0},
                        {"done", job_id > 0 ? Json(done) : Json(nullptr)},
                        {"alternative_of", estimate.group(i) == i ? Json(nullptr) : Json(estimate.group(i))}});
  }
  const double total_ms = estimate.Ms(best_now);

  // The estimated end-to-end latency each time a best improves, from the first moment every node
  // has a successful trial.
  Json history = Json::array();
  bool sampled = false;
  if (!tasks.empty()) {
    TUNEFARM_ASSIGN_OR_RETURN(auto trials, db.queries.TrialsAfter(0, 0, kAllRows, kAnalysisBytes, &sampled));
    std::vector<double> best(tasks.size(), 0.0);
    double last_total = 0;
    for (const auto& p : trials) {
      if (!IsOk(p.status) || (job_id > 0 ? p.job_id != job_id : p.job_id != 0)) continue;
      auto it = task_of_workload.find(p.workload_id);
      if (it == task_of_workload.end()) continue;
      double& b = best[it->second];
      if (b > 0 && b <= p.mean_ms) continue;
      b = p.mean_ms;
      const double total = estimate.Ms(best);
      if (total > 0 && total != last_total) history.push_back(Json::array({EpochMs(p.created_at), total, p.id}));
      last_total = total;
    }
  }
  return Json{{"model", header},
              {"tasks", rows},
              {"total_latency_ms", total_ms > 0 ? Json(total_ms) : Json(nullptr)},
              {"latency_history", history},
              {"sampled", sampled}};
}

Result<Json> TaskView(RecordsQueries& db, int64_t workload_id) {
  TUNEFARM_ASSIGN_OR_RETURN(WorkloadInfo w, db.GetWorkload(workload_id));
  TUNEFARM_ASSIGN_OR_RETURN(auto stats, db.TaskStatsOf(-1, workload_id));
  TUNEFARM_ASSIGN_OR_RETURN(auto errors, db.ErrorGroups(workload_id, 50));
  TUNEFARM_ASSIGN_OR_RETURN(auto fastest, db.FastestTrials(workload_id, 10));
  bool sampled = false;
  TUNEFARM_ASSIGN_OR_RETURN(auto trials, db.TrialsAfter(0, workload_id, kAllRows, kAnalysisBytes, &sampled));
  std::vector<std::pair<std::string, double>> ok;
  for (const auto& p : trials) {
    if (IsOk(p.status)) ok.push_back({p.config_json, p.mean_ms});
  }
  // The task's best over every target and device, as the page's "best GFLOP/s" card shows it.
  double best_ms = 0;
  for (const auto& s : stats) {
    if (s.best_ms > 0 && (best_ms == 0 || s.best_ms < best_ms)) best_ms = s.best_ms;
  }
  Json out{{"task",
            {{"id", w.id},
             {"workload", w.key},
             {"template", w.template_name},
             {"name", TaskDisplayName(w.template_name, w.key)},
             {"flops", w.flops},
             {"best_ms", NullIfZero(best_ms)},
             {"best_gflops", Gflops(w.flops, best_ms)}}},
           {"targets", Json::array()},
           {"errors", Json::array()},
           {"fastest", Json::array()},
           {"knobs", Json::array()},
           {"sampled", sampled},
           {"last_id", trials.empty() ? 0 : trials.back().id}};
  for (const auto& s : stats) {
    out["targets"].push_back(Json{{"target_id", s.target_id},
                                  {"target", s.target},
                                  {"model", s.target_model},
                                  {"trials", s.trials},
                                  {"ok_trials", s.ok_trials},
                                  {"best_ms", NullIfZero(s.best_ms)},
                                  {"best_gflops", Gflops(s.flops, s.best_ms)},
                                  {"best_trial", s.best_trial_id},
                                  {"first_at", s.first_at},
                                  {"last_at", s.last_at}});
  }
  for (const auto& e : errors) {
    out["errors"].push_back(Json{{"status", e.status},
                                 {"message", e.message},
                                 {"device", e.device_key},
                                 {"count", e.count},
                                 {"last_trial", e.last_trial_id}});
  }
  for (const auto& t : fastest) out["fastest"].push_back(TrialJson(t));
  for (const auto& k : RankKnobs(ok)) {
    out["knobs"].push_back(Json{{"knob", k.knob}, {"importance", k.importance}, {"values", k.distinct_values}});
  }
  return out;
}

Result<Json> TrialsView(RecordsQueries& db, int64_t workload_id, int64_t after, int64_t limit) {
  // Each trial's GFLOP/s from its workload's FLOPs, so the page shows the speed it is sent.
  std::map<int64_t, double> flops_of;
  if (workload_id != 0) {
    TUNEFARM_ASSIGN_OR_RETURN(WorkloadInfo w, db.GetWorkload(workload_id));
    flops_of[w.id] = w.flops;
  } else {
    TUNEFARM_ASSIGN_OR_RETURN(auto all, db.Workloads());
    for (const WorkloadInfo& w : all) flops_of[w.id] = w.flops;
  }
  TUNEFARM_ASSIGN_OR_RETURN(int64_t last_id, db.LastTrialId());
  if (after > last_id) {
    return Status::InvalidArgument("after=" + std::to_string(after) + " is past the newest trial (" +
                                   std::to_string(last_id) + "): positions come from an earlier answer's last_id");
  }
  bool cut = false;
  TUNEFARM_ASSIGN_OR_RETURN(auto trials, db.TrialsAfter(after, workload_id, limit + 1, kPageBytes, &cut));
  bool more = int64_t(trials.size()) > limit;
  if (more) trials.pop_back();
  more = more || cut;
  Json id = Json::array(), workload = Json::array(), target = Json::array(), job = Json::array(),
       config_index = Json::array(), config = Json::array(), status = Json::array(), device = Json::array(),
       time_ms = Json::array(), mean_ms = Json::array(), gflops = Json::array(), build_ms = Json::array(),
       threads = Json::array();
  for (const auto& p : trials) {
    id.push_back(p.id);
    workload.push_back(p.workload_id);
    target.push_back(p.target_id);
    job.push_back(p.job_id);
    config_index.push_back(p.config_index);
    config.push_back(p.config_json);
    status.push_back(p.status);
    device.push_back(p.device_key);
    time_ms.push_back(EpochMs(p.created_at));
    mean_ms.push_back(NullIfZero(p.mean_ms));
    gflops.push_back(Gflops(flops_of[p.workload_id], p.mean_ms));
    build_ms.push_back(p.build_ms);
    threads.push_back(p.threads);
  }
  // The next `after`: past everything read, and past the trials of other workloads up to the newest
  // id seen before reading (trials committed since have larger ids).
  int64_t position = trials.empty() ? after : trials.back().id;
  if (!more) position = std::max(position, last_id);
  return Json{{"after", after},
              {"last_id", position},
              {"more", more},
              {"count", trials.size()},
              {"trials",
               {{"id", id},
                {"workload", workload},
                {"target", target},
                {"job", job},
                {"config_index", config_index},
                {"config", config},
                {"status", status},
                {"device", device},
                {"time_ms", time_ms},
                {"mean_ms", mean_ms},
                {"gflops", gflops},
                {"build_ms", build_ms},
                {"threads", threads}}}};
}

Result<Json> CompareView(const std::vector<RecordsQueries*>& dbs, const std::string& workload_key) {
  Json rows = Json::array();
  bool found = false, sampled = false;
  for (size_t d = 0; d < dbs.size(); ++d) {
    TUNEFARM_ASSIGN_OR_RETURN(auto targets, dbs[d]->Targets());
    std::map<int64_t, std::string> target_name(targets.begin(), targets.end());
    // Every implementation of the workload: the key is target-neutral, so a CPU template and a
    // CUDA one of the same convolution compare side by side.
    TUNEFARM_ASSIGN_OR_RETURN(auto implementations, dbs[d]->FindWorkloads(workload_key));
    for (const WorkloadInfo& w : implementations) {
      found = true;
      bool cut = false;
      TUNEFARM_ASSIGN_OR_RETURN(auto trials,
                                dbs[d]->TrialsAfter(0, w.id, kAllRows, kAnalysisBytes / int64_t(dbs.size()), &cut));
      sampled = sampled || cut;
      struct Cell {
        int64_t trials = 0, ok = 0, best_trial = 0;
        double best_ms = 0;
      };
      std::map<std::pair<int64_t, std::string>, Cell> cells;  // (target, device)
      for (const auto& p : trials) {
        Cell& c = cells[{p.target_id, p.device_key}];
        ++c.trials;
        if (!IsOk(p.status)) continue;
        ++c.ok;
        if (c.best_ms == 0 || p.mean_ms < c.best_ms) {
          c.best_ms = p.mean_ms;
          c.best_trial = p.id;
        }
      }
      for (const auto& [key, c] : cells) {
        // The bar's label: the implementation, the target's kind (its first word) and the device,
        // prefixed with the database when there are several.
        const std::string& target = target_name[key.first];
        std::string label = (dbs.size() > 1 ? "[" + std::to_string(d) + "] " : "") + w.template_name + " " +
                            target.substr(0, target.find(' ')) + (key.second.empty() ? "" : " @ " + key.second);
        rows.push_back(Json{{"db", d},
                            {"label", label},
                            {"records", dbs[d]->location()},
                            {"template", w.template_name},
                            {"target", target_name[key.first]},
                            {"device", key.second},
                            {"trials", c.trials},
                            {"ok_trials", c.ok},
                            {"best_ms", NullIfZero(c.best_ms)},
                            {"best_gflops", Gflops(w.flops, c.best_ms)},
                            {"best_trial", c.best_trial}});
      }
    }
  }
  if (!found) return Status::NotFound("no workload \"" + workload_key.substr(0, 200) + "\" in any records database");
  return Json{
      {"workload", workload_key}, {"name", WorkloadDisplayName(workload_key)}, {"rows", rows}, {"sampled", sampled}};
}

}  // namespace tunefarm::tuner::dashboard
