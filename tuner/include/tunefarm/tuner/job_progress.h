// One model's tuning run as the records' jobs table keeps it, for both kinds of run: a
// tuner-daemon job and a `tunefarm tune` run (the TuningJob and its stored form:
// tunefarm/tuner/tuning_job.h). The dashboard's Models view reads the table
// (tuner/dashboard/dashboard_views.cc); both runners update it through these functions, so the two
// kinds of run look alike there.
#ifndef TUNEFARM_TUNER_JOB_PROGRESS_H_
#define TUNEFARM_TUNER_JOB_PROGRESS_H_

#include <string>
#include <vector>

#include "tunefarm/compiler/model.h"
#include "tunefarm/tuner/records.h"
#include "tunefarm/tuner/tuner.h"
#include "tunefarm/tuner/tuning_job.h"

namespace tunefarm::tuner {

// The run's tasks, in the order TuneTasks reports them, and its trial budget.
void StartJobTasks(const std::vector<compiler::Task>& tasks, int trials_budget, TuningJob* job);
// One progress step of TuneTasks: the task's trials and best, the run's trials done, the line.
void RecordJobProgress(const TaskProgress& progress, TuningJob* job);
// TuneTasks' summaries: each task's trials (resumed ones included), best and fallback speed.
void RecordJobSummaries(const std::vector<TaskSummary>& summaries, TuningJob* job);

// Marks failed the `tunefarm tune` runs the database still shows queued or running: they ended
// without saying how (killed). Only for a caller that holds the file's tuning lock (TuningLock),
// so that none of them can be alive.
Status MarkEndedTuneRuns(JobStore& db);

}  // namespace tunefarm::tuner

#endif  // TUNEFARM_TUNER_JOB_PROGRESS_H_
