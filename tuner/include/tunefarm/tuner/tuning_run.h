// One model's tuning run: the one sequence both `tunefarm tune` and a tuner-daemon job go through,
// so the two kinds of run cannot drift apart (they did: a run with no successful trial ended
// `failed` from the CLI and `done` from the daemon, and only the daemon's farm client had TLS).
//
//   PlanTuningRun   the spec checked, the model imported and its tasks extracted (at the opt
//                   level compile uses), before anything is admitted or measured;
//   MakeMeasurer    where trials run: this machine (an isolated child per batch) or a farm,
//                   with the farm's token and mutual TLS;
//   RunTuningJob    the tasks scheduled and tuned, every trial committed as it completes, the
//                   job's progress and summaries recorded, and its final state chosen by one rule
//                   (FinalStateOf).
//
// The callers keep only what is theirs: the CLI its flags, the tuning lock, the time limit and the
// printing; the daemon admission (memory, overlapping tasks, its run slots), cancel and stop, and
// where the job is kept. Neither builds TuneOptions by hand: TuneOptionsOf maps a spec.
#ifndef TUNEFARM_TUNER_TUNING_RUN_H_
#define TUNEFARM_TUNER_TUNING_RUN_H_

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "tunefarm/compiler/model.h"
#include "tunefarm/compiler/target.h"
#include "tunefarm/runtime/result.h"
#include "tunefarm/service/auth.h"
#include "tunefarm/tuner/records.h"
#include "tunefarm/tuner/tuner.h"
#include "tunefarm/tuner/tuning_job.h"

namespace tunefarm::tuner {

// The opt level a run extracts its tasks at: compile's default, so the tasks are compile's lookups.
inline constexpr int kTuningOptLevel = 3;

// A run ready to start: its spec (defaults filled in), target and tasks.
struct TuningRunPlan {
  TuningJobSpec spec;
  compiler::Target target;
  std::vector<compiler::Task> tasks;
  // What the run measures, one line per task ("IMPL:KEY @ target"): two runs sharing one wait.
  std::vector<std::string> TaskKeys() const;
};
// InvalidArgument naming the field for a bad target or input shape; the import's error otherwise.
Result<TuningRunPlan> PlanTuningRun(const TuningJobSpec& spec);

// The search's options and the scheduler's, from a spec (WithDefaults applied by the caller).
TuneOptions TuneOptionsOf(const TuningJobSpec& spec);
ScheduleOptions ScheduleOptionsOf(const TuningJobSpec& spec);

// Where a run's trials are measured.
struct MeasurerOptions {
  std::string tracker, key;                     // a farm; an empty tracker measures on this machine
  std::string token;                            // the farm's token
  service::TlsFiles tls;                        // mutual TLS towards the tracker and its servers, when enabled
  std::string client_name;                      // how the tracker lists the lease ("tunefarm tune", "tuner-daemon")
  std::string measure_child, tmp_root;          // this machine: tunefarm-measure-child and its work folders
  int threads = 1;                              // this machine: threads each measurement runs on
  std::function<void(const std::string&)> log;  // the farm client's lease lines
};
std::unique_ptr<Measurer> MakeMeasurer(const MeasurerOptions& options);

// Why a run's stop flag was set, asked once the search has returned after it was set.
enum class StopCause {
  kCancelled,  // Ctrl-C, `tunefarm jobs cancel`: the run ends cancelled
  kTimeLimit,  // tune --time-limit: the run is done with what the time allowed
  kShutdown,   // the daemon is stopping: the job stays running and resumes when it starts again
};

struct TuningRunContext {
  TrialLog* trials = nullptr;  // the trials, and the claims shared tuners take
  Measurer* measurer = nullptr;
  int64_t job_id = 0;  // the run's row in the jobs table; every trial carries it
  int build_jobs = DefaultBuildJobs();
  std::string tmp_root = "/tmp";
  const std::atomic<bool>* stop = nullptr;  // set: the measurement in flight finishes, then the run ends
  std::function<StopCause()> stop_cause;    // required with stop
  // Applies a change to the run's job and keeps it (under the owner's lock; a persist). `progress`
  // is the search's step that caused it, or null (the tasks at the start, the summaries, the end).
  std::function<void(const std::function<void(TuningJob*)>& change, const TaskProgress* progress)> update;
};

struct TuningRunEnd {
  JobState state = JobState::kFailed;  // kRunning after a kShutdown stop
  std::string message;
  std::vector<TaskSummary> summaries;  // empty when the search failed
  bool no_trial_succeeded = false;     // failed because every measurement failed (see the records)
};

// The final state of a run whose search returned `summaries` (or failed), by the one rule:
// cancelled wins; then a search error, or no successful trial over any task (the measurements
// fail, not the configs: "no trial succeeded (runtime_error 6) ..."), fails the run; otherwise it
// is done ("finished", or "stopped at the time limit").
TuningRunEnd FinalStateOf(Result<std::vector<TaskSummary>> summaries, bool stopped, StopCause cause);

// Tunes the plan's tasks to the spec's budget and records the job through context.update: its
// tasks first, every progress step, the summaries and the final state. Never throws.
TuningRunEnd RunTuningJob(const TuningRunPlan& plan, const TuningRunContext& context);

}  // namespace tunefarm::tuner

#endif  // TUNEFARM_TUNER_TUNING_RUN_H_
