#include "tunefarm/tuner/job_progress.h"

namespace tunefarm::tuner {

void StartJobTasks(const std::vector<compiler::Task>& tasks, int trials_budget, TuningJob* job) {
  job->tasks.clear();
  for (const auto& t : tasks) {
    job->tasks.push_back(JobTask{t.workload.ImplementationKey(), 0, 0, 0, t.count, t.flops,
                                 t.default_workload ? t.default_workload->ImplementationKey() : std::string()});
  }
  job->trials_budget = trials_budget;
}

void RecordJobProgress(const TaskProgress& p, TuningJob* job) {
  if (p.task < 1 || p.task > int(job->tasks.size())) return;
  JobTask& t = job->tasks[size_t(p.task - 1)];
  t.trials = p.done;
  t.best_gflops = p.best_gflops;
  int total = p.total_budget > 0 ? p.total_done : 0;
  if (p.total_budget == 0) {
    for (const JobTask& each : job->tasks) total += each.trials;
  }
  job->trials_done = total;
  job->message = FormatProgress(p);
}

void RecordJobSummaries(const std::vector<TaskSummary>& summaries, TuningJob* job) {
  int total = 0;
  for (size_t i = 0; i < summaries.size() && i < job->tasks.size(); ++i) {
    const TaskSummary& s = summaries[i];
    JobTask& t = job->tasks[i];
    t.trials = s.trials + s.resumed;
    t.best_gflops = s.best_gflops;
    t.fallback_gflops = s.fallback_gflops;
    total += s.trials + s.resumed;
  }
  job->trials_done = total;
}

Status MarkEndedTuneRuns(JobStore& db) {
  TUNEFARM_ASSIGN_OR_RETURN(auto jobs, db.ListJobs());
  for (const JobRecord& j : jobs) {
    // A state this version does not know is left as it is: a newer version's run.
    const Result<JobState> state = j.state_kind();
    if (j.daemon != kTuneCommandRunner || !state.ok() || IsFinal(*state)) continue;
    TuningJob run;
    if (!ParseStoredProgress(j.progress_json, &run).ok()) run = TuningJob();  // the message below says enough
    run.state = JobState::kFailed;
    run.message = "the run ended without saying how (killed?); its trials are kept";
    TUNEFARM_RETURN_IF_ERROR(db.UpdateJob(j.id, run.state, StoredProgressJson(run)));
  }
  return Status::OK();
}

}  // namespace tunefarm::tuner
