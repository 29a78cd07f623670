#include "tunefarm/tuner/tuning_run.h"

#include <map>

#include "tunefarm/runtime/no_throw.h"
#include "tunefarm/tuner/job_progress.h"

namespace tunefarm::tuner {

std::vector<std::string> TuningRunPlan::TaskKeys() const {
  std::vector<std::string> keys;
  for (const auto& t : tasks) keys.push_back(t.workload.ImplementationKey() + " @ " + target.ToString());
  return keys;
}

Result<TuningRunPlan> PlanTuningRun(const TuningJobSpec& spec) {
  TuningRunPlan plan;
  plan.spec = WithDefaults(spec);
  auto target = compiler::ParseTarget(plan.spec.target);
  if (!target.ok()) return target.status();
  plan.target = *target;
  std::vector<compiler::InputShape> input_shapes;
  for (const std::string& text : plan.spec.input_shapes) {
    auto shape = compiler::ParseInputShape(text);
    if (!shape.ok()) return Status::InvalidArgument("input_shapes: " + shape.status().message());
    input_shapes.push_back(*shape);
  }
  TUNEFARM_ASSIGN_OR_RETURN(plan.tasks,
                            compiler::ExtractTasks(plan.spec.model, plan.target, kTuningOptLevel, input_shapes));
  return plan;
}

TuneOptions TuneOptionsOf(const TuningJobSpec& spec) {
  TuneOptions o;
  o.tuner = spec.tuner;
  o.trials = spec.trials_per_task > 0 ? spec.trials_per_task : 64;
  o.early_stopping = spec.early_stopping;
  o.seed = spec.seed;
  o.keep_model_layout = spec.keep_model_layout;
  o.transfer = spec.transfer;
  o.threads = spec.threads > 0 ? spec.threads : 1;
  return o;
}

ScheduleOptions ScheduleOptionsOf(const TuningJobSpec& spec) {
  ScheduleOptions schedule;
  if (spec.total_trials > 0) {
    schedule.scheduler = spec.scheduler;
    schedule.total_trials = spec.total_trials;
  }
  return schedule;
}

std::unique_ptr<Measurer> MakeMeasurer(const MeasurerOptions& options) {
  if (options.tracker.empty()) {
    return std::make_unique<LocalMeasurer>(options.measure_child, options.tmp_root, options.threads);
  }
  return std::make_unique<FarmMeasurer>(rpc_server::MeasureClientOptions{
      options.tracker, options.key, options.token, options.client_name, 0, 600000, options.tls, options.log});
}

TuningRunEnd FinalStateOf(Result<std::vector<TaskSummary>> summaries, bool stopped, StopCause cause) {
  TuningRunEnd end;
  if (stopped && cause == StopCause::kShutdown) {
    end.state = JobState::kRunning;
    end.message = "stopped with the daemon; resumes when it starts again";
    if (summaries.ok()) end.summaries = std::move(*summaries);
    return end;
  }
  if (stopped && cause == StopCause::kCancelled) {
    end.state = JobState::kCancelled;
    end.message = "cancelled";
    if (summaries.ok()) end.summaries = std::move(*summaries);
    return end;
  }
  if (!summaries.ok()) {
    end.state = JobState::kFailed;
    end.message = summaries.status().message();
    return end;
  }
  end.summaries = std::move(*summaries);
  bool any_success = false;
  std::map<std::string, int> errors;  // by status word, in order
  for (const auto& s : end.summaries) {
    any_success = any_success || s.best_gflops > 0;
    for (const auto& [status, n] : s.errors) errors[status] += n;
  }
  if (!end.summaries.empty() && !any_success) {
    // Every task without one successful trial (this run's or resumed): the measurements are
    // broken, not slow, and there is nothing to compile from.
    std::string why;
    for (const auto& [status, n] : errors) why += (why.empty() ? "" : ", ") + status + " " + std::to_string(n);
    end.state = JobState::kFailed;
    end.no_trial_succeeded = true;
    end.message = "no trial succeeded (" + (why.empty() ? std::string("no trials") : why) +
                  "); the measurements fail, not the configs";
    return end;
  }
  end.state = JobState::kDone;
  end.message = stopped && cause == StopCause::kTimeLimit ? "stopped at the time limit" : "finished";
  return end;
}

TuningRunEnd RunTuningJob(const TuningRunPlan& plan, const TuningRunContext& context) {
  TuneOptions options = TuneOptionsOf(plan.spec);
  options.build_jobs = context.build_jobs;
  options.tmp_root = context.tmp_root;
  options.job_id = context.job_id;
  options.stop = context.stop;
  const ScheduleOptions schedule = ScheduleOptionsOf(plan.spec);
  std::vector<ScheduledTask> scheduled;
  for (const auto& t : plan.tasks) scheduled.push_back({t.workload, t.count, t.default_workload});
  const int budget = schedule.total_trials > 0 ? schedule.total_trials : options.trials * int(plan.tasks.size());
  context.update([&](TuningJob* job) { StartJobTasks(plan.tasks, budget, job); }, nullptr);

  auto summaries = NoThrow("tuning job " + std::to_string(context.job_id), [&] {
    return TuneTasks(
        scheduled, plan.target, options, schedule, *context.measurer, *context.trials,
        [&](const TaskProgress& p) { context.update([&](TuningJob* job) { RecordJobProgress(p, job); }, &p); });
  });
  const bool stopped = context.stop != nullptr && context.stop->load();
  TuningRunEnd end =
      FinalStateOf(std::move(summaries), stopped, stopped ? context.stop_cause() : StopCause::kCancelled);
  context.update(
      [&](TuningJob* job) {
        if (!end.summaries.empty()) RecordJobSummaries(end.summaries, job);
        if (end.state == JobState::kRunning) return;  // the daemon's stop: the job resumes as it stands
        job->state = end.state;
        job->message = end.message;
      },
      nullptr);
  return end;
}

}  // namespace tunefarm::tuner
