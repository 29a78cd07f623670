// Knob importance for the Task view: for each knob of a task's config space, the share of the
// variance of log(latency) over the successful trials that the knob's value explains on its own
// (the first-order effect: eta squared = between-group / total sum of squares, grouping trials by
// that knob's value). 0: the knob does not matter on its own; 1: it decides the latency. Knobs
// interact, so the shares need not sum to 1. Private to tuner/dashboard/.
#ifndef TUNEFARM_TUNER_DASHBOARD_KNOB_IMPORTANCE_H_
#define TUNEFARM_TUNER_DASHBOARD_KNOB_IMPORTANCE_H_

#include <string>
#include <utility>
#include <vector>

namespace tunefarm::tuner::dashboard {

struct KnobImportance {
  std::string knob;
  double importance = 0;  // 0..1
  int distinct_values = 0;
};

// trials: (config JSON, mean latency in ms > 0); a config is {"index": N, "knobs": {name: value}}
// as the compiler writes it, or a bare {name: value}. Configs that are not JSON objects are
// skipped. Most important first.
std::vector<KnobImportance> RankKnobs(const std::vector<std::pair<std::string, double>>& trials);

}  // namespace tunefarm::tuner::dashboard

#endif  // TUNEFARM_TUNER_DASHBOARD_KNOB_IMPORTANCE_H_
