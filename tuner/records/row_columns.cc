#include "tuner/records/row_columns.h"

#include <nlohmann/json.hpp>

namespace tunefarm::tuner {

std::vector<double> ParseCostsColumn(const std::string& json) {
  std::vector<double> out;
  const nlohmann::json costs = nlohmann::json::parse(json, nullptr, false);
  if (!costs.is_array()) return out;
  for (const auto& c : costs) {
    if (c.is_number()) out.push_back(c.get<double>());
  }
  return out;
}

}  // namespace tunefarm::tuner
