#include "tunefarm/tuner/job_progress.h"

#include <google/protobuf/util/json_util.h>

namespace tunefarm::tuner {

std::string JobJson(const google::protobuf::Message& message) {
  std::string out;
  google::protobuf::util::JsonPrintOptions o;
  o.preserve_proto_field_names = true;
  (void)google::protobuf::util::MessageToJsonString(message, &out, o);
  return out;
}

std::string JobProgressJson(const v1::TuningJob& job) {
  v1::TuningJob progress = job;
  progress.clear_spec();
  return JobJson(progress);
}

void StartJobTasks(const std::vector<compiler::Task>& tasks, int trials_budget, v1::TuningJob* job) {
  job->clear_tasks();
  for (const auto& t : tasks) {
    v1::TaskStatus* status = job->add_tasks();
    status->set_workload(t.workload.ImplementationKey());
    status->set_weight(t.count);
    status->set_flops(t.flops);
    status->set_alternative_of(t.default_workload);
  }
  job->set_trials_budget(trials_budget);
}

void RecordJobProgress(const TaskProgress& p, v1::TuningJob* job) {
  if (p.task < 1 || p.task > job->tasks_size()) return;
  v1::TaskStatus* t = job->mutable_tasks(p.task - 1);
  t->set_trials(p.done);
  t->set_best_gflops(p.best_gflops);
  int total = p.total_budget > 0 ? p.total_done : 0;
  if (p.total_budget == 0) {
    for (const auto& ts : job->tasks()) total += ts.trials();
  }
  job->set_trials_done(total);
  job->set_message(FormatProgress(p));
}

void RecordJobSummaries(const std::vector<TaskSummary>& summaries, v1::TuningJob* job) {
  int total = 0;
  for (size_t i = 0; i < summaries.size() && int(i) < job->tasks_size(); ++i) {
    const TaskSummary& s = summaries[i];
    v1::TaskStatus* t = job->mutable_tasks(int(i));
    t->set_trials(s.trials + s.resumed);
    t->set_best_gflops(s.best_gflops);
    t->set_fallback_gflops(s.fallback_gflops);
    total += s.trials + s.resumed;
  }
  job->set_trials_done(total);
}

Status MarkEndedTuneRuns(RecordsDb& db) {
  TUNEFARM_ASSIGN_OR_RETURN(auto jobs, db.ListJobs());
  for (const JobRecord& j : jobs) {
    if (j.daemon != kTuneCommandRunner || (j.state != "queued" && j.state != "running")) continue;
    v1::TuningJob progress;
    if (!google::protobuf::util::JsonStringToMessage(j.progress_json, &progress).ok()) progress.Clear();
    progress.set_state("failed");
    progress.set_message("the run ended without saying how (killed?); its trials are kept");
    TUNEFARM_RETURN_IF_ERROR(db.UpdateJob(j.id, "failed", JobProgressJson(progress)));
  }
  return Status::OK();
}

}  // namespace tunefarm::tuner
