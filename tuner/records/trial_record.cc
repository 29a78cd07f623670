// TrialRecord's JSON-lines form (records export/import, records copy) and the trial outcomes.
#include <cmath>
#include <nlohmann/json.hpp>

#include "tunefarm/tuner/records.h"
#include "tuner/records/legacy_keys.h"

namespace tunefarm::tuner {

bool IsTrialStatus(const std::string& status) { return ParseTrialStatus(status).has_value(); }

std::string TrialStatusList() {
  std::string out;
  for (TrialStatus s : kAllTrialStatuses) out += (out.empty() ? "" : ", ") + std::string(TrialStatusName(s));
  return out;
}

bool IsOk(const std::string& status) { return status == TrialStatusName(TrialStatus::kOk); }

double Gflops(double flops, double ms) { return ms > 0 ? flops / (ms * 1e6) : 0.0; }

double TrialRecord::gflops() const { return ok() ? Gflops(flops, mean_ms) : 0.0; }

std::string TrialRecord::ToJson() const {
  nlohmann::ordered_json j;
  j["uid"] = uid;
  j["workload"] = workload_key;
  j["template"] = template_name;
  j["flops"] = flops;
  j["target"] = target;
  j["target_model"] = target_model;
  j["target_keys"] = target_keys;
  j["config_index"] = config_index;
  j["config"] = config_json;
  j["status"] = status;
  j["error_message"] = error_message;
  j["costs_ms"] = costs_ms;
  j["mean_ms"] = mean_ms;
  j["threads"] = threads;
  j["device_key"] = device_key;
  j["device_info"] = device_info;
  j["build_ms"] = build_ms;
  j["run_ms"] = run_ms;
  j["job_id"] = job_id;
  j["created_at"] = created_at;
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);  // stored text need not be UTF-8
}

Result<TrialRecord> TrialRecord::FromJson(const std::string& line) {
  nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return Status::InvalidArgument("not a JSON object");
  TrialRecord t;
  auto str = [&](const char* key, std::string* out, bool required) -> Status {
    if (!j.contains(key))
      return required ? Status::InvalidArgument(std::string("missing field '") + key + "'") : Status::OK();
    if (!j[key].is_string()) return Status::InvalidArgument(std::string("field '") + key + "' must be a string");
    *out = j[key].get<std::string>();
    return Status::OK();
  };
  auto num = [&](const char* key, double* out, bool required) -> Status {
    if (!j.contains(key))
      return required ? Status::InvalidArgument(std::string("missing field '") + key + "'") : Status::OK();
    if (!j[key].is_number()) return Status::InvalidArgument(std::string("field '") + key + "' must be a number");
    *out = j[key].get<double>();
    return Status::OK();
  };
  TUNEFARM_RETURN_IF_ERROR(str("workload", &t.workload_key, true));
  TUNEFARM_RETURN_IF_ERROR(str("target", &t.target, true));
  TUNEFARM_RETURN_IF_ERROR(str("status", &t.status, true));
  TUNEFARM_RETURN_IF_ERROR(str("uid", &t.uid, false));
  TUNEFARM_RETURN_IF_ERROR(str("template", &t.template_name, false));
  TUNEFARM_RETURN_IF_ERROR(str("target_model", &t.target_model, false));
  TUNEFARM_RETURN_IF_ERROR(str("target_keys", &t.target_keys, false));
  TUNEFARM_RETURN_IF_ERROR(str("config", &t.config_json, false));
  TUNEFARM_RETURN_IF_ERROR(str("error_message", &t.error_message, false));
  TUNEFARM_RETURN_IF_ERROR(str("device_key", &t.device_key, false));
  TUNEFARM_RETURN_IF_ERROR(str("device_info", &t.device_info, false));
  TUNEFARM_RETURN_IF_ERROR(str("created_at", &t.created_at, false));
  double index = -1, threads = 1, job = 0;
  TUNEFARM_RETURN_IF_ERROR(num("config_index", &index, true));
  TUNEFARM_RETURN_IF_ERROR(num("flops", &t.flops, false));
  TUNEFARM_RETURN_IF_ERROR(num("mean_ms", &t.mean_ms, false));
  TUNEFARM_RETURN_IF_ERROR(num("threads", &threads, false));
  TUNEFARM_RETURN_IF_ERROR(num("build_ms", &t.build_ms, false));
  TUNEFARM_RETURN_IF_ERROR(num("run_ms", &t.run_ms, false));
  TUNEFARM_RETURN_IF_ERROR(num("job_id", &job, false));
  // Integers arrive as JSON numbers (doubles): each is checked integral and within range before
  // the cast, which is undefined past int64 (libFuzzer: "config_index":1e32).
  auto integer = [](const char* name, double v, double min, double max) -> Status {
    if (!(v >= min && v <= max) || v != std::floor(v)) {
      return Status::InvalidArgument(std::string("field '") + name + "' must be an integer in [" +
                                     std::to_string(int64_t(min)) + ", " + std::to_string(int64_t(max)) + "]");
    }
    return Status::OK();
  };
  constexpr double kMaxExactInteger = 9007199254740992.0;  // 2^53: every integer below is a double
  TUNEFARM_RETURN_IF_ERROR(integer("config_index", index, 0, kMaxExactInteger));
  TUNEFARM_RETURN_IF_ERROR(integer("threads", threads, 0, 1 << 20));
  TUNEFARM_RETURN_IF_ERROR(integer("job_id", job, 0, kMaxExactInteger));
  t.config_index = int64_t(index);
  t.threads = int(threads);
  t.job_id = int64_t(job);
  // Times and FLOPs are never negative: a negative mean would become the fastest record.
  for (const auto& [name, value] : {std::pair<const char*, double>{"flops", t.flops},
                                    {"mean_ms", t.mean_ms},
                                    {"build_ms", t.build_ms},
                                    {"run_ms", t.run_ms}}) {
    if (value < 0) return Status::InvalidArgument(std::string("field '") + name + "' must not be negative");
  }
  if (j.contains("costs_ms")) {
    if (!j["costs_ms"].is_array()) return Status::InvalidArgument("field 'costs_ms' must be an array");
    for (const auto& c : j["costs_ms"]) {
      if (!c.is_number() || c.get<double>() < 0)
        return Status::InvalidArgument("field 'costs_ms' must hold non-negative numbers");
      t.costs_ms.push_back(c.get<double>());
    }
  }
  if (t.ok() && !(t.mean_ms > 0)) return Status::InvalidArgument("a trial with status 'ok' needs mean_ms > 0");
  if (!IsTrialStatus(t.status)) {
    return Status::InvalidArgument("field 'status' is '" + t.status.substr(0, 40) + "'; one of " + TrialStatusList());
  }
  for (const std::string* text : {&t.workload_key, &t.target, &t.uid, &t.template_name, &t.target_model, &t.target_keys,
                                  &t.config_json, &t.error_message, &t.device_key, &t.device_info, &t.created_at}) {
    if (text->find('\0') != std::string::npos) return Status::InvalidArgument("a text field holds a NUL byte");
  }
  if (t.workload_key.empty() || t.target.empty())
    return Status::InvalidArgument("fields 'workload' and 'target' must not be empty");
  // A trial is applied by its workload and implementation. A line without "template" is read as
  // written before schema version 3, whose key began with its implementation.
  if (t.template_name.empty()) {
    const std::string first = t.workload_key.substr(0, t.workload_key.find('|'));
    if (KeyOfSchema3(t.workload_key, first) == t.workload_key) {
      return Status::InvalidArgument("missing field 'template' (the implementation of workload '" +
                                     t.workload_key.substr(0, 200) + "', e.g. conv2d_nchwc)");
    }
    t.template_name = first;
  }
  t.workload_key = KeyOfSchema3(t.workload_key, t.template_name);
  return t;
}

}  // namespace tunefarm::tuner
