// TuningJob: one model's tuning run, the domain type of tuner-daemon's jobs and of `tunefarm tune`
// runs, in three forms:
//  - this struct, which the JobManager and the CLI work on;
//  - the records database's jobs table (JobStore::AddJob/UpdateJob): the spec and the progress
//    as JSON with the proto's field names and the kinds' words ("tuner": "xgb", "state":
//    "running"), zero fields left out -- the form stored since the table's first version, so old
//    rows read back and the dashboard reads new ones alike (docs/formats/records_db.md);
//  - tunefarm.v1 messages (proto/tunefarm/v1/tuner.proto), only at the gRPC boundary.
// Parsing never throws: bad JSON, an unknown word or an unknown enum value is an InvalidArgument
// naming the field.
#ifndef TUNEFARM_TUNER_TUNING_JOB_H_
#define TUNEFARM_TUNER_TUNING_JOB_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tunefarm/runtime/result.h"
#include "tunefarm/tuner/tuning_kinds.h"
#include "tunefarm/v1/tuner.pb.h"

namespace tunefarm::tuner {

// The ranges a job's counts may take, the same for `tunefarm tune`'s flags and a daemon's job spec.
inline constexpr int kMaxTrialsPerTask = 1000000, kMaxTotalTrials = 100000000, kMaxEarlyStopping = 1000000,
                     kMaxJobThreads = 1024;

// What to tune and how. Fields left 0 or empty take the defaults WithDefaults fills in.
struct TuningJobSpec {
  std::string model;   // a zoo name (resnet-18) or an ONNX path readable by the daemon
  std::string target;  // target string (docs/targets.md); default "native"
  TunerKind tuner = TunerKind::kXgb;
  int trials_per_task = 0;  // sequential budget per task (when total_trials is 0); default 64
  int total_trials = 0;     // global budget over all tasks, shared by the scheduler
  SchedulerKind scheduler = SchedulerKind::kGradient;
  int early_stopping = 0;  // 0: never
  int threads = 0;         // threads per measurement; default 1
  std::string tracker;     // HOST:PORT; empty: the daemon's runner
  std::string key;         // device key with tracker
  uint64_t seed = 0;
  bool keep_model_layout = true;          // layouts "model"; false: "any"
  bool transfer = true;                   // xgb: warm-start from similar workloads' records
  std::vector<std::string> input_shapes;  // "NAME:DIMS", as `tunefarm tune --input-shape`
};

// The defaults filled in: target native, trials_per_task 64 without a global budget, threads 1.
TuningJobSpec WithDefaults(TuningJobSpec spec);
// The thread count tuning and compiling default to (records are per thread count): this machine's
// cores when it measures a native target itself, as the artifact's `run` then uses them; 1 for a
// board or a farm device, whose count the user states.
int DefaultThreads(bool measured_here);

// One task of a job: its implementation and target-neutral workload key
// (Workload::ImplementationKey), its trials so far and its speeds.
struct JobTask {
  std::string workload;
  int trials = 0;
  double best_gflops = 0, fallback_gflops = 0;
  int weight = 1;              // occurrences in the model
  double flops = 0;            // per occurrence
  std::string alternative_of;  // the task whose nodes this one implements another way, or ""
};

struct TuningJob {
  int64_t id = 0;
  TuningJobSpec spec;
  JobState state = JobState::kQueued;
  int trials_done = 0;  // measured so far (resumed trials included)
  int trials_budget = 0;
  std::string message;  // failed: why; otherwise the last progress line
  // Runs of the job the daemon did not survive (a crash, an abort, SIGKILL) while it imported the
  // model or measured its first trials: counted while it does those, given back once past them or
  // at a clean stop. A daemon does not resume a job at JobManager's limit; it fails it saying so.
  int interrupted_runs = 0;
  std::vector<JobTask> tasks;
  std::string created_at, updated_at;
};

// The jobs table's columns.
std::string StoredSpecJson(const TuningJobSpec& spec);
std::string StoredProgressJson(const TuningJob& job);  // the job without its spec, id and times
Result<TuningJobSpec> ParseStoredSpec(std::string_view json);
// Into *job (its tasks, trials, message; the state the column holds, if any).
Status ParseStoredProgress(std::string_view json, TuningJob* job);

// The gRPC boundary. FromProto refuses what this version cannot honour: an enum value it does not
// know, a layouts word other than model/any, or a field of the API's earlier versions (the
// string-typed tuner and scheduler), each named.
v1::TuningJobSpec ToProto(const TuningJobSpec& spec);
Result<TuningJobSpec> FromProto(const v1::TuningJobSpec& spec);
v1::TuningJob ToProto(const TuningJob& job);
Result<TuningJob> FromProto(const v1::TuningJob& job);
v1::JobState ToProto(JobState state);
// The word of a state a daemon sent ("unspecified" where it sent none this version knows).
std::string_view NameOf(v1::JobState state);

}  // namespace tunefarm::tuner

#endif  // TUNEFARM_TUNER_TUNING_JOB_H_
