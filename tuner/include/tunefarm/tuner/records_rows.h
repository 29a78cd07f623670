// The rows of the records database as its roles (tunefarm/tuner/records_roles.h) exchange them: a
// trial, a job, and the dashboard's aggregates. Plain values; docs/formats/records_db.md is the
// schema they are read from. Workload keys are always in the current schema's form: the records
// layer converts keys of older schemas where it reads them (tuner/records/legacy_keys.h).
#ifndef TUNEFARM_TUNER_RECORDS_ROWS_H_
#define TUNEFARM_TUNER_RECORDS_ROWS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tunefarm/runtime/result.h"
#include "tunefarm/runtime/trial_status.h"
#include "tunefarm/tuner/tuning_kinds.h"

namespace tunefarm::tuner {

inline constexpr int kRecordsSchemaVersion = 3;

// Outcomes of a trial: TrialStatus (tunefarm/runtime/trial_status.h), stored as its name.
bool IsTrialStatus(const std::string& status);
std::string TrialStatusList();         // "ok, instantiation_error, ..." for messages
bool IsOk(const std::string& status);  // the stored word of TrialStatus::kOk
struct TrialRecord {
  int64_t id = 0;   // assigned by the database
  std::string uid;  // globally unique; import skips trials already present
  // The record key: what was measured (the target-neutral workload key of
  // tunefarm/compiler/workload.h), by which implementation (the template, "template" in JSON and
  // in the workloads table), on which target.
  std::string workload_key;
  std::string template_name;
  double flops = 0;
  std::string target;        // canonical target string
  std::string target_model;  // device model (may be empty)
  std::string target_keys;   // comma-separated keys, e.g. "cpu" or "arm_cpu,cpu"
  int64_t config_index = -1;
  std::string config_json;
  // The stored word, TrialStatusName of a TrialStatus when tunefarm wrote it. Kept as text: a
  // database may hold a word this version does not know (ParseTrialStatus: nullopt), which
  // readers show and the tuner refuses; decisions go through status_kind() and ok().
  std::string status = TrialStatusName(TrialStatus::kOk);
  std::string error_message;
  std::vector<double> costs_ms;  // per repeat
  double mean_ms = 0;
  int threads = 1;
  std::string device_key, device_info;
  double build_ms = 0, run_ms = 0;
  int64_t job_id = 0;      // 0: none
  std::string created_at;  // ISO 8601 UTC, set by the database

  std::string ToJson() const;
  // InvalidArgument naming the missing or mistyped field.
  static Result<TrialRecord> FromJson(const std::string& line);
  // Gflops(flops, mean_ms) of a successful trial; 0 for any other.
  double gflops() const;
  std::optional<TrialStatus> status_kind() const { return ParseTrialStatus(status); }
  bool ok() const { return IsOk(status); }
  // Ok with a time that may be applied (a best config, a task's best, the cost model's fastest): at
  // least a nanosecond (no kernel is faster: 5e-324 ms is an edited row) and finite. The SQL form
  // is records_sql.h's kUsableTrial.
  static constexpr double kMinUsableMs = 1e-6, kMaxUsableMs = 1e300;
  bool usable() const { return ok() && mean_ms >= kMinUsableMs && mean_ms < kMaxUsableMs; }
  void set_status(TrialStatus s) { status = TrialStatusName(s); }
};

// The speed of `flops` floating-point operations done in `ms` milliseconds, in GFLOP/s: flops /
// (ms x 1e6); 0 when ms is not a positive time. Every GFLOP/s tunefarm prints, stores or serves (the
// tuner's summaries, `records`, the dashboard's API, which the page shows as sent) is this one.
double Gflops(double flops, double ms);

// The jobs table's runner of `tunefarm tune` runs (JobRecord::daemon): a tuner-daemon resumes
// only its own jobs, so none takes these over; a daemon may not take this name.
inline constexpr char kTuneCommandRunner[] = "tunefarm tune";

// A tuning job (tuner-daemon's or a `tunefarm tune` run's) as stored: its spec and progress as JSON
// (tunefarm/tuner/tuning_job.h reads and writes them) and its state.
struct JobRecord {
  int64_t id = 0;
  std::string spec_json, progress_json = "{}";
  // The stored word of the state (NameOf(JobState)). Kept as text because a database may hold a
  // word this version does not know; every decision goes through state_kind().
  std::string state;
  std::string daemon;  // the tuner-daemon's --name that runs it ("" before schema version 2)
  std::string created_at, updated_at;

  Result<JobState> state_kind() const { return ParseJobState(state); }
};

// One task as the dashboard counts it: a workload on a target.
struct TaskStats {
  int64_t workload_id = 0, target_id = 0;
  std::string workload_key, template_name, target, target_model;
  double flops = 0;
  int64_t trials = 0, ok_trials = 0;
  double best_ms = 0;  // 0: no successful trial
  int64_t best_trial_id = 0, last_trial_id = 0;
  std::string first_at, last_at;
};

// A trial without its costs and device text: what charts plot.
struct TrialPoint {
  int64_t id = 0, workload_id = 0, target_id = 0, config_index = -1, job_id = 0;
  std::string config_json, status, device_key, created_at;
  double mean_ms = 0, build_ms = 0;  // mean_ms 0 unless ok
  int threads = 1;                   // measured on this many threads (records are per thread count)
};

// Failed trials grouped by outcome, message and device.
struct ErrorGroup {
  std::string status, message, device_key;
  int64_t count = 0, last_trial_id = 0;
};

struct WorkloadInfo {
  int64_t id = 0;
  std::string key, template_name;
  double flops = 0;
};

// A task as a job's progress or a user may name it: "IMPL:KEY" (compiler::ParseTaskName), a
// workload key alone (implementation ""), or a key written before schema version 3, which began with
// its implementation: "IMPL|N1...|NCHW|float32" gives {"IMPL", "conv2d|N1...|NCHW|float32"}.
struct StoredTaskName {
  std::string implementation, key;
};
StoredTaskName ParseStoredTaskName(const std::string& name);

struct TargetMatch {
  std::string target, model;
  std::vector<std::string> keys;
  // > 0: only trials measured on this many threads (a config tuned for one core can lose on two:
  // records are per thread count); 0: any.
  int threads = 0;
};

}  // namespace tunefarm::tuner

#endif  // TUNEFARM_TUNER_RECORDS_ROWS_H_
