// ConfigSource: where the model compiler gets the config of each tunable kernel (apply history
// best). The records database (records.h) is the implementation users have; tests and tools may
// provide others. A workload the source does not know compiles with its template's fallback config.
//
// Thread safety: implementations must allow concurrent Best calls.
#ifndef TUNEFARM_COMPILER_CONFIG_SOURCE_H_
#define TUNEFARM_COMPILER_CONFIG_SOURCE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "tunefarm/compiler/target.h"
#include "tunefarm/compiler/workload.h"
#include "tunefarm/runtime/result.h"

namespace tunefarm::compiler {

struct BestConfig {
  int64_t config_index = -1;
  double cost_ms = 0;       // its measured mean time
  std::string config_json;  // the config as recorded; must equal the space's point at config_index
  std::string matched_on;   // "target", "model" (same device model) or "keys" (a shared target key)
};

class ConfigSource {
 public:
  virtual ~ConfigSource() = default;
  // The best measured config of w (its Key() and implementation) for target; NotFound when there
  // is none.
  virtual Result<BestConfig> Best(const Workload& w, const Target& target) const = 0;
  // The fastest measured configs, best first, at most `limit`: the compiler takes the first one
  // that is still a valid point of its space, so one stale or corrupt record never hides the valid
  // ones behind it. Empty when there is none. The default asks Best() alone.
  virtual Result<std::vector<BestConfig>> Ranked(const Workload& w, const Target& target, int limit) const;
  // How many successful trials of w on target the source holds but never offers,
  // because their time is not a finite positive number (a hand-edited or hostile record): the
  // compiler reports the count and applies none of them. The default source has none.
  virtual Result<int64_t> UnusableCount(const Workload& /*w*/, const Target& /*target*/) const { return int64_t(0); }
  // Why the source offers no record of w though it holds usable trials of it ("measured at 1
  // thread, none at 2": records are per thread count), for the compiler's warning; "" otherwise.
  virtual Result<std::string> WhyNoneApply(const Workload& /*w*/, const Target& /*target*/) const {
    return std::string();
  }
  // For messages: "records database ./tunefarm.db".
  virtual std::string Describe() const = 0;
};

inline Result<std::vector<BestConfig>> ConfigSource::Ranked(const Workload& w, const Target& target, int limit) const {
  auto best = Best(w, target);
  if (!best.ok()) {
    if (best.status().code() == StatusCode::kNotFound) return std::vector<BestConfig>();
    return best.status();
  }
  return std::vector<BestConfig>{*best};
}

}  // namespace tunefarm::compiler

#endif  // TUNEFARM_COMPILER_CONFIG_SOURCE_H_
