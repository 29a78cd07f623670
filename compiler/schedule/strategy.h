// The strategy table: per (tunable operator, target kind), the implementations that compute it,
// each a template with its own workload key, task and config space (TVM's op strategy). A node's
// workload (from operators/node_workload) names its operator's default implementation; Implementations
// lists every one that applies, the default first. The model compiler looks up the records of all
// of them and runs the fastest recorded one (the default's fallback config when none is
// recorded); task extraction lists each as a task.
//
// Adding an implementation (Winograd for 3x3 convolutions, a CUDA template) is one row here plus
// its template (schedule/templates/).
#ifndef TUNEFARM_COMPILER_SCHEDULE_STRATEGY_H_
#define TUNEFARM_COMPILER_SCHEDULE_STRATEGY_H_

#include <vector>

#include "tunefarm/compiler/target.h"
#include "tunefarm/compiler/workload.h"

namespace tunefarm::compiler {

struct StrategyRow {
  const char* op;           // the operator: "conv2d", "dense"
  TargetKind target_kind;
  const char* template_name;
  bool (*applies)(const Workload& w);  // on the operator's parameters
};

const std::vector<StrategyRow>& StrategyTable();

// The implementations of w's operator on target whose rows apply and whose template accepts the
// workload, as workloads (template_name set), w's own template first when it runs on the target's
// kind. w may name a template of another kind (a CPU workload asked for a CUDA target): its
// operator and shapes are what count. Empty when w's template is in no row.
std::vector<Workload> Implementations(const Workload& w, const Target& target);

// OK when some row runs template_name on target's kind; else InvalidArgument naming the templates
// of that kind (a CPU template asked for a CUDA target, or the reverse).
Status CheckTemplateTarget(const std::string& template_name, const Target& target);

}  // namespace tunefarm::compiler

#endif  // TUNEFARM_COMPILER_SCHEDULE_STRATEGY_H_
