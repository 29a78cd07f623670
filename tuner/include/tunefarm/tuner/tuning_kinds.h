// The tuner's choices as types: the search strategy (`--tuner`), the task scheduler
// (`--scheduler`) and a tuning job's state. Each has one table (tuning_kinds.cc) of the names users
// type, the CLI offers and the records database's jobs table stores; the words never change, so
// every stored job stays readable.
#ifndef TUNEFARM_TUNER_TUNING_KINDS_H_
#define TUNEFARM_TUNER_TUNING_KINDS_H_

#include <string>
#include <string_view>
#include <vector>

#include "tunefarm/runtime/result.h"

namespace tunefarm::tuner {

// xgb: XGBoost cost model (AutoTVM's XGBTuner); ga: genetic; random; grid: every config in order.
enum class TunerKind { kXgb, kGa, kRandom, kGrid };
// Under a global trial budget: gradient (AutoTVM's task scheduler, trials where the model's
// latency falls fastest) or round-robin.
enum class SchedulerKind { kGradient, kRoundRobin };
// done, failed and cancelled end a job; queued and running do not.
enum class JobState { kQueued, kRunning, kDone, kFailed, kCancelled };

std::string_view NameOf(TunerKind kind);
std::string_view NameOf(SchedulerKind kind);
std::string_view NameOf(JobState state);

// InvalidArgument naming the word and the choices: "unknown tuner 'anneal' (xgb, ga, random, grid)".
Result<TunerKind> ParseTunerKind(std::string_view name);
Result<SchedulerKind> ParseSchedulerKind(std::string_view name);
Result<JobState> ParseJobState(std::string_view name);

// Every name, in the enum's order (the CLI's choices).
std::vector<std::string> TunerKindNames();
std::vector<std::string> SchedulerKindNames();
std::vector<JobState> AllJobStates();

bool IsFinal(JobState state);

}  // namespace tunefarm::tuner

#endif  // TUNEFARM_TUNER_TUNING_KINDS_H_
