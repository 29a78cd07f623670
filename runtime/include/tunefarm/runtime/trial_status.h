// TrialStatus: the outcome of one trial (a config built, then measured), the one enum of the
// measurement server (rpc_server's OutcomeKind), the tuner and the records.
//
// Contract:
//  - TrialStatusName gives the text stored for a status: the records' `trials.status` column, the
//    JSON-lines export, the servers' Prometheus `result` label. These words are a stored format
//    (docs/formats/records_db.md): never rename one; a new status is a new word.
//  - ParseTrialStatus reads that text back, and nothing else (a database may hold a word a newer
//    version wrote, or an edited one: nullopt, which readers refuse or show as it is).
//  - kOk has costs; every other status has a message.
#ifndef TUNEFARM_RUNTIME_TRIAL_STATUS_H_
#define TUNEFARM_RUNTIME_TRIAL_STATUS_H_

#include <optional>
#include <string_view>

namespace tunefarm {

enum class TrialStatus {
  kOk,             // "ok": measured, costs recorded
  kInstantiation,  // "instantiation_error": the config cannot exist on the target
  kCompile,        // "compile_error": the build failed or its tool ran out of time
  kRuntimeCrash,   // "runtime_error": the kernel crashed or returned an error
  kTimeout,        // "timeout": the measurement ran past its limit
  kWrongAnswer,    // "wrong_answer": outputs differ from the reference
  kBadRequest,     // "bad_request": the server refused the request
};

inline constexpr TrialStatus kAllTrialStatuses[] = {
    TrialStatus::kOk,      TrialStatus::kInstantiation, TrialStatus::kCompile,   TrialStatus::kRuntimeCrash,
    TrialStatus::kTimeout, TrialStatus::kWrongAnswer,   TrialStatus::kBadRequest};

constexpr const char* TrialStatusName(TrialStatus s) {
  switch (s) {
    case TrialStatus::kOk:
      return "ok";
    case TrialStatus::kInstantiation:
      return "instantiation_error";
    case TrialStatus::kCompile:
      return "compile_error";
    case TrialStatus::kRuntimeCrash:
      return "runtime_error";
    case TrialStatus::kTimeout:
      return "timeout";
    case TrialStatus::kWrongAnswer:
      return "wrong_answer";
    case TrialStatus::kBadRequest:
      return "bad_request";
  }
  return "runtime_error";
}

inline std::optional<TrialStatus> ParseTrialStatus(std::string_view text) {
  for (TrialStatus s : kAllTrialStatuses) {
    if (text == TrialStatusName(s)) return s;
  }
  return std::nullopt;
}

// A failure that may be the machine's rather than the config's: a crash, a timeout, a build or a
// request the farm refused. The tuner measures such a config again when the conditions say so.
constexpr bool MayBeTheMachines(TrialStatus s) {
  return s == TrialStatus::kRuntimeCrash || s == TrialStatus::kTimeout || s == TrialStatus::kBadRequest ||
         s == TrialStatus::kCompile;
}

}  // namespace tunefarm

#endif  // TUNEFARM_RUNTIME_TRIAL_STATUS_H_
