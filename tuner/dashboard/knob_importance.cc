#include "tuner/dashboard/knob_importance.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>

namespace tunefarm::tuner::dashboard {

std::vector<KnobImportance> RankKnobs(const std::vector<std::pair<std::string, double>>& trials) {
  // knob -> value (as JSON text) -> (sum, count) of log latency.
  std::map<std::string, std::map<std::string, std::pair<double, int>>> groups;
  double sum = 0, sum_sq = 0;
  int n = 0;
  for (const auto& [config, ms] : trials) {
    if (!(ms > 0)) continue;
    const nlohmann::json parsed = nlohmann::json::parse(config, nullptr, false);
    if (!parsed.is_object()) continue;
    // A config as the compiler writes it: {"index": N, "knobs": {name: value}}.
    const nlohmann::json& knobs = parsed.contains("knobs") && parsed["knobs"].is_object() ? parsed["knobs"] : parsed;
    const double y = std::log(ms);
    sum += y;
    sum_sq += y * y;
    ++n;
    for (const auto& [name, value] : knobs.items()) {
      auto& g = groups[name][value.dump()];
      g.first += y;
      ++g.second;
    }
  }
  std::vector<KnobImportance> out;
  if (n == 0) return out;
  const double mean = sum / n;
  const double total = sum_sq - n * mean * mean;
  for (const auto& [name, values] : groups) {
    double between = 0;
    for (const auto& [value, g] : values) {
      const double group_mean = g.first / g.second;
      between += g.second * (group_mean - mean) * (group_mean - mean);
    }
    KnobImportance k;
    k.knob = name;
    k.distinct_values = int(values.size());
    k.importance = total > 1e-12 ? std::clamp(between / total, 0.0, 1.0) : 0.0;
    out.push_back(k);
  }
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.importance > b.importance; });
  return out;
}

}  // namespace tunefarm::tuner::dashboard
