#include "tunefarm/tuner/tuning_job.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <thread>
#include <type_traits>
#include <utility>

namespace tunefarm::tuner {
namespace {

using Json = nlohmann::json;

// Domain kind <-> proto enum, one pair per value.
constexpr std::pair<TunerKind, v1::Tuner> kTuners[] = {{TunerKind::kXgb, v1::TUNER_XGB},
                                                       {TunerKind::kGa, v1::TUNER_GA},
                                                       {TunerKind::kRandom, v1::TUNER_RANDOM},
                                                       {TunerKind::kGrid, v1::TUNER_GRID}};
constexpr std::pair<SchedulerKind, v1::Scheduler> kSchedulers[] = {
    {SchedulerKind::kGradient, v1::SCHEDULER_GRADIENT}, {SchedulerKind::kRoundRobin, v1::SCHEDULER_ROUND_ROBIN}};
constexpr std::pair<JobState, v1::JobState> kStates[] = {{JobState::kQueued, v1::JOB_STATE_QUEUED},
                                                         {JobState::kRunning, v1::JOB_STATE_RUNNING},
                                                         {JobState::kDone, v1::JOB_STATE_DONE},
                                                         {JobState::kFailed, v1::JOB_STATE_FAILED},
                                                         {JobState::kCancelled, v1::JOB_STATE_CANCELLED}};

template <typename Domain, typename Proto, size_t N>
Proto ProtoOf(const std::pair<Domain, Proto> (&table)[N], Domain d) {
  for (const auto& [domain, proto] : table) {
    if (domain == d) return proto;
  }
  return Proto{};
}

// The domain value of a proto enum; `fallback` for UNSPECIFIED; an error for a value this version
// does not know (a newer client's).
template <typename Domain, typename Proto, size_t N>
Result<Domain> DomainOf(const std::pair<Domain, Proto> (&table)[N], int value, Domain fallback, const char* field) {
  if (value == 0) return fallback;
  for (const auto& [domain, proto] : table) {
    if (int(proto) == value) return domain;
  }
  return Status::InvalidArgument("job spec: unknown " + std::string(field) + " " + std::to_string(value));
}

// A field of the stored JSON, or `fallback` where it is missing or of another type.
template <typename T>
T Field(const Json& j, const char* name, T fallback) {
  auto it = j.find(name);
  if (it == j.end()) return fallback;
  if constexpr (std::is_same_v<T, std::string>) {
    return it->is_string() ? it->template get<std::string>() : fallback;
  } else if constexpr (std::is_same_v<T, bool>) {
    return it->is_boolean() ? it->template get<bool>() : fallback;
  } else {
    // proto JSON writes 64-bit integers as strings
    if (it->is_string()) {
      try {
        const std::string text = it->template get<std::string>();
        if constexpr (std::is_unsigned_v<T>) return T(std::stoull(text));
        return T(std::stoll(text));
      } catch (...) {
        return fallback;
      }
    }
    return it->is_number() ? it->template get<T>() : fallback;
  }
}

template <typename T>
void PutNonZero(Json& j, const char* name, const T& value) {
  if (value != T{}) j[name] = value;
}

}  // namespace

TuningJobSpec WithDefaults(TuningJobSpec spec) {
  if (spec.target.empty()) spec.target = "native";
  if (spec.trials_per_task == 0 && spec.total_trials == 0) spec.trials_per_task = 64;
  if (spec.threads == 0) spec.threads = DefaultThreads(spec.tracker.empty() && spec.target == "native");
  return spec;
}

int DefaultThreads(bool measured_here) {
  const unsigned cores = std::thread::hardware_concurrency();
  return measured_here && cores > 0 ? int(std::min(cores, 1024u)) : 1;
}

std::string StoredSpecJson(const TuningJobSpec& spec) {
  Json j = Json::object();
  PutNonZero(j, "model", spec.model);
  PutNonZero(j, "target", spec.target);
  j["tuner"] = NameOf(spec.tuner);
  PutNonZero(j, "trials_per_task", spec.trials_per_task);
  PutNonZero(j, "total_trials", spec.total_trials);
  if (spec.total_trials > 0) j["scheduler"] = NameOf(spec.scheduler);
  PutNonZero(j, "early_stopping", spec.early_stopping);
  PutNonZero(j, "threads", spec.threads);
  PutNonZero(j, "tracker", spec.tracker);
  PutNonZero(j, "key", spec.key);
  if (spec.seed != 0) j["seed"] = std::to_string(spec.seed);  // as proto JSON writes a uint64
  j["layouts"] = spec.keep_model_layout ? "model" : "any";
  if (!spec.transfer) j["no_transfer"] = true;
  if (!spec.input_shapes.empty()) j["input_shapes"] = spec.input_shapes;
  return j.dump();
}

Result<TuningJobSpec> ParseStoredSpec(std::string_view json) {
  const Json j = Json::parse(json, nullptr, false);
  if (!j.is_object())
    return Status::InvalidArgument("stored job spec is not a JSON object: " + std::string(json.substr(0, 200)));
  TuningJobSpec spec;
  spec.model = Field<std::string>(j, "model", "");
  spec.target = Field<std::string>(j, "target", "");
  if (const std::string tuner = Field<std::string>(j, "tuner", ""); !tuner.empty()) {
    TUNEFARM_ASSIGN_OR_RETURN(spec.tuner, ParseTunerKind(tuner));
  }
  spec.trials_per_task = Field<int>(j, "trials_per_task", 0);
  spec.total_trials = Field<int>(j, "total_trials", 0);
  if (const std::string scheduler = Field<std::string>(j, "scheduler", ""); !scheduler.empty()) {
    TUNEFARM_ASSIGN_OR_RETURN(spec.scheduler, ParseSchedulerKind(scheduler));
  }
  spec.early_stopping = Field<int>(j, "early_stopping", 0);
  spec.threads = Field<int>(j, "threads", 0);
  spec.tracker = Field<std::string>(j, "tracker", "");
  spec.key = Field<std::string>(j, "key", "");
  spec.seed = Field<uint64_t>(j, "seed", 0);
  const std::string layouts = Field<std::string>(j, "layouts", "model");
  if (layouts != "model" && layouts != "any") {
    return Status::InvalidArgument("stored job spec: unknown layouts '" + layouts + "' (model, any)");
  }
  spec.keep_model_layout = layouts == "model";
  spec.transfer = !Field<bool>(j, "no_transfer", false);
  if (auto it = j.find("input_shapes"); it != j.end() && it->is_array()) {
    for (const Json& s : *it) {
      if (s.is_string()) spec.input_shapes.push_back(s.get<std::string>());
    }
  }
  return spec;
}

std::string StoredProgressJson(const TuningJob& job) {
  Json j = Json::object();
  j["state"] = NameOf(job.state);
  PutNonZero(j, "trials_done", job.trials_done);
  PutNonZero(j, "trials_budget", job.trials_budget);
  PutNonZero(j, "message", job.message);
  PutNonZero(j, "interrupted_runs", job.interrupted_runs);
  if (!job.tasks.empty()) {
    Json tasks = Json::array();
    for (const JobTask& t : job.tasks) {
      Json task = Json::object();
      PutNonZero(task, "workload", t.workload);
      PutNonZero(task, "trials", t.trials);
      PutNonZero(task, "best_gflops", t.best_gflops);
      PutNonZero(task, "fallback_gflops", t.fallback_gflops);
      PutNonZero(task, "weight", t.weight);
      PutNonZero(task, "flops", t.flops);
      PutNonZero(task, "alternative_of", t.alternative_of);
      tasks.push_back(std::move(task));
    }
    j["tasks"] = std::move(tasks);
  }
  return j.dump();
}

Status ParseStoredProgress(std::string_view json, TuningJob* job) {
  const Json j = Json::parse(json, nullptr, false);
  if (!j.is_object()) return Status::InvalidArgument("stored job progress is not a JSON object");
  if (const std::string state = Field<std::string>(j, "state", ""); !state.empty()) {
    TUNEFARM_ASSIGN_OR_RETURN(job->state, ParseJobState(state));
  }
  job->trials_done = Field<int>(j, "trials_done", 0);
  job->trials_budget = Field<int>(j, "trials_budget", 0);
  job->message = Field<std::string>(j, "message", "");
  job->interrupted_runs = Field<int>(j, "interrupted_runs", 0);
  job->tasks.clear();
  if (auto it = j.find("tasks"); it != j.end() && it->is_array()) {
    for (const Json& t : *it) {
      if (!t.is_object()) continue;
      job->tasks.push_back(JobTask{Field<std::string>(t, "workload", ""), Field<int>(t, "trials", 0),
                                   Field<double>(t, "best_gflops", 0), Field<double>(t, "fallback_gflops", 0),
                                   Field<int>(t, "weight", 1), Field<double>(t, "flops", 0),
                                   Field<std::string>(t, "alternative_of", "")});
    }
  }
  return Status::OK();
}

v1::TuningJobSpec ToProto(const TuningJobSpec& spec) {
  v1::TuningJobSpec p;
  p.set_model(spec.model);
  p.set_target(spec.target);
  p.set_tuner(ProtoOf(kTuners, spec.tuner));
  p.set_trials_per_task(spec.trials_per_task);
  p.set_total_trials(spec.total_trials);
  if (spec.total_trials > 0) p.set_scheduler(ProtoOf(kSchedulers, spec.scheduler));
  p.set_early_stopping(spec.early_stopping);
  p.set_threads(spec.threads);
  p.set_tracker(spec.tracker);
  p.set_key(spec.key);
  p.set_seed(spec.seed);
  p.set_layouts(spec.keep_model_layout ? "model" : "any");
  p.set_no_transfer(!spec.transfer);
  for (const std::string& s : spec.input_shapes) p.add_input_shapes(s);
  return p;
}

Result<TuningJobSpec> FromProto(const v1::TuningJobSpec& p) {
  // Fields 3 and 6 held the tuner and the scheduler as words before the enums: a client that
  // still sends them would otherwise be tuned with defaults it did not ask for.
  const google::protobuf::UnknownFieldSet& unknown = p.GetReflection()->GetUnknownFields(p);
  for (int i = 0; i < unknown.field_count(); ++i) {
    const int number = unknown.field(i).number();
    if (number == 3 || number == 6) {
      return Status::InvalidArgument(std::string("job spec: field ") + std::to_string(number) + " (" +
                                     (number == 3 ? "tuner" : "scheduler") +
                                     " as a word) is from an earlier version of the API; this daemon takes the " +
                                     (number == 3 ? "Tuner" : "Scheduler") + " enum (update the client)");
    }
  }
  TuningJobSpec spec;
  spec.model = p.model();
  spec.target = p.target();
  TUNEFARM_ASSIGN_OR_RETURN(spec.tuner, DomainOf(kTuners, p.tuner(), TunerKind::kXgb, "tuner"));
  spec.trials_per_task = p.trials_per_task();
  spec.total_trials = p.total_trials();
  TUNEFARM_ASSIGN_OR_RETURN(spec.scheduler,
                            DomainOf(kSchedulers, p.scheduler(), SchedulerKind::kGradient, "scheduler"));
  spec.early_stopping = p.early_stopping();
  spec.threads = p.threads();
  spec.tracker = p.tracker();
  spec.key = p.key();
  spec.seed = p.seed();
  if (!p.layouts().empty() && p.layouts() != "model" && p.layouts() != "any") {
    return Status::InvalidArgument("job spec: unknown layouts '" + p.layouts() + "' (model, any)");
  }
  spec.keep_model_layout = p.layouts() != "any";
  spec.transfer = !p.no_transfer();
  spec.input_shapes.assign(p.input_shapes().begin(), p.input_shapes().end());
  return spec;
}

v1::JobState ToProto(JobState state) { return ProtoOf(kStates, state); }

std::string_view NameOf(v1::JobState state) {
  for (const auto& [domain, proto] : kStates) {
    if (proto == state) return NameOf(domain);
  }
  return "unspecified";
}

v1::TuningJob ToProto(const TuningJob& job) {
  v1::TuningJob p;
  p.set_id(job.id);
  *p.mutable_spec() = ToProto(job.spec);
  p.set_state(ToProto(job.state));
  p.set_trials_done(job.trials_done);
  p.set_trials_budget(job.trials_budget);
  p.set_message(job.message);
  for (const JobTask& t : job.tasks) {
    v1::TaskStatus* s = p.add_tasks();
    s->set_workload(t.workload);
    s->set_trials(t.trials);
    s->set_best_gflops(t.best_gflops);
    s->set_fallback_gflops(t.fallback_gflops);
    s->set_weight(t.weight);
    s->set_flops(t.flops);
    s->set_alternative_of(t.alternative_of);
  }
  p.set_created_at(job.created_at);
  p.set_updated_at(job.updated_at);
  return p;
}

Result<TuningJob> FromProto(const v1::TuningJob& p) {
  TuningJob job;
  job.id = p.id();
  TUNEFARM_ASSIGN_OR_RETURN(job.spec, FromProto(p.spec()));
  bool known = false;
  for (const auto& [domain, proto] : kStates) {
    if (int(proto) == int(p.state())) {
      job.state = domain;
      known = true;
    }
  }
  if (!known) {
    return Status::InvalidArgument("job " + std::to_string(p.id()) + ": unknown state " +
                                   std::to_string(int(p.state())));
  }
  job.trials_done = p.trials_done();
  job.trials_budget = p.trials_budget();
  job.message = p.message();
  for (const v1::TaskStatus& s : p.tasks()) {
    job.tasks.push_back(JobTask{s.workload(), s.trials(), s.best_gflops(), s.fallback_gflops(), s.weight(), s.flops(),
                                s.alternative_of()});
  }
  job.created_at = p.created_at();
  job.updated_at = p.updated_at();
  return job;
}

}  // namespace tunefarm::tuner
