#include "tunefarm/tuner/tuning_kinds.h"

#include <utility>

namespace tunefarm::tuner {
namespace {

// One table per kind: the stored and typed word of each value, in the enum's order.
template <typename Kind>
struct KindTable {
  const char* what;  // the noun of error messages
  std::vector<std::pair<Kind, const char*>> names;
};

const KindTable<TunerKind>& Table(TunerKind) {
  static const KindTable<TunerKind> kTable{
      "tuner",
      {{TunerKind::kXgb, "xgb"}, {TunerKind::kGa, "ga"}, {TunerKind::kRandom, "random"}, {TunerKind::kGrid, "grid"}}};
  return kTable;
}

const KindTable<SchedulerKind>& Table(SchedulerKind) {
  static const KindTable<SchedulerKind> kTable{
      "task scheduler", {{SchedulerKind::kGradient, "gradient"}, {SchedulerKind::kRoundRobin, "round-robin"}}};
  return kTable;
}

const KindTable<JobState>& Table(JobState) {
  static const KindTable<JobState> kTable{"job state",
                                          {{JobState::kQueued, "queued"},
                                           {JobState::kRunning, "running"},
                                           {JobState::kDone, "done"},
                                           {JobState::kFailed, "failed"},
                                           {JobState::kCancelled, "cancelled"}}};
  return kTable;
}

template <typename Kind>
std::string_view Name(Kind kind) {
  for (const auto& [k, name] : Table(kind).names) {
    if (k == kind) return name;
  }
  return "unknown";  // unreachable: every value is in its table (TuningKinds tests)
}

template <typename Kind>
Result<Kind> Parse(std::string_view text) {
  const KindTable<Kind>& table = Table(Kind{});
  std::string choices;
  for (const auto& [kind, name] : table.names) {
    if (text == name) return kind;
    choices += (choices.empty() ? "" : ", ") + std::string(name);
  }
  return Status::InvalidArgument("unknown " + std::string(table.what) + " '" + std::string(text) + "' (" + choices +
                                 ")");
}

template <typename Kind>
std::vector<std::string> Names() {
  std::vector<std::string> out;
  for (const auto& [kind, name] : Table(Kind{}).names) out.push_back(name);
  return out;
}

}  // namespace

std::string_view NameOf(TunerKind kind) { return Name(kind); }
std::string_view NameOf(SchedulerKind kind) { return Name(kind); }
std::string_view NameOf(JobState state) { return Name(state); }

Result<TunerKind> ParseTunerKind(std::string_view name) { return Parse<TunerKind>(name); }
Result<SchedulerKind> ParseSchedulerKind(std::string_view name) { return Parse<SchedulerKind>(name); }
Result<JobState> ParseJobState(std::string_view name) { return Parse<JobState>(name); }

std::vector<std::string> TunerKindNames() { return Names<TunerKind>(); }
std::vector<std::string> SchedulerKindNames() { return Names<SchedulerKind>(); }

std::vector<JobState> AllJobStates() {
  std::vector<JobState> out;
  for (const auto& [state, name] : Table(JobState{}).names) out.push_back(state);
  return out;
}

bool IsFinal(JobState state) {
  return state == JobState::kDone || state == JobState::kFailed || state == JobState::kCancelled;
}

}  // namespace tunefarm::tuner
