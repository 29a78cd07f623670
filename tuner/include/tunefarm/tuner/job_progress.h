// One model's tuning run as the records' jobs table keeps it, for both kinds of run: a
// tuner-daemon job and a `tunefarm tune` run. The spec column holds the v1.TuningJobSpec, the
// progress column the v1.TuningJob without its spec (the tasks with their weights and FLOPs,
// trials done of the budget, each task's best), both as proto JSON with the proto's field names.
// The dashboard's Models view reads them (tuner/dashboard/dashboard_views.cc); both runners update
// them through these functions, so the two kinds of run look alike there.
#ifndef TUNEFARM_TUNER_JOB_PROGRESS_H_
#define TUNEFARM_TUNER_JOB_PROGRESS_H_

#include <google/protobuf/message.h>

#include <string>
#include <vector>

#include "tunefarm/compiler/model.h"
#include "tunefarm/tuner/records.h"
#include "tunefarm/tuner/tuner.h"
#include "tunefarm/v1/tuner.pb.h"

namespace tunefarm::tuner {

// The jobs table's runner of `tunefarm tune` runs (JobRecord::daemon): a tuner-daemon resumes
// only its own jobs, so none takes these over; a daemon may not take this name.
inline constexpr char kTuneCommandRunner[] = "tunefarm tune";

// Proto JSON with the proto's field names (the stored form of specs and progress).
std::string JobJson(const google::protobuf::Message& message);
// The progress column: the job without its spec.
std::string JobProgressJson(const v1::TuningJob& job);

// The run's tasks, in the order TuneTasks reports them, and its trial budget.
void StartJobTasks(const std::vector<compiler::Task>& tasks, int trials_budget, v1::TuningJob* job);
// One progress step of TuneTasks: the task's trials and best, the run's trials done, the line.
void RecordJobProgress(const TaskProgress& progress, v1::TuningJob* job);
// TuneTasks' summaries: each task's trials (resumed ones included), best and fallback speed.
void RecordJobSummaries(const std::vector<TaskSummary>& summaries, v1::TuningJob* job);

// Marks failed the `tunefarm tune` runs the database still shows queued or running: they ended
// without saying how (killed). Only for a caller that holds the file's tuning lock (TuningLock),
// so that none of them can be alive.
Status MarkEndedTuneRuns(RecordsDb& db);

}  // namespace tunefarm::tuner

#endif  // TUNEFARM_TUNER_JOB_PROGRESS_H_
