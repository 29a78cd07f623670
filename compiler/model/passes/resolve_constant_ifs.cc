#include "compiler/model/passes/resolve_constant_ifs.h"

#include <optional>

#include "compiler/graph/graph_util.h"

namespace tunefarm::graph {

int ResolveConstantIfs(Graph* g) {
  int resolved = 0;
  std::vector<Node> kept;
  for (Node& n : g->nodes) {
    if (NeverRuns(*g, n)) continue;
    std::vector<NodeGuard> guards;
    for (const NodeGuard& guard : n.guards) {
      if (!ConstantCondition(*g, guard.cond)) guards.push_back(guard);  // a constant one holds (NeverRuns)
    }
    n.guards = std::move(guards);
    const std::optional<bool> cond = n.op_type == "If" ? ConstantCondition(*g, n.inputs[0]) : std::nullopt;
    if (!cond) {
      kept.push_back(std::move(n));
      continue;
    }
    const size_t outputs = n.outputs.size();
    for (size_t k = 0; k < outputs; ++k) {
      Node identity;
      identity.name = n.name.empty() ? "" : n.name + "." + std::to_string(k);
      identity.op_type = "Identity";
      identity.inputs = {n.inputs[1 + (*cond ? 0 : outputs) + k]};
      identity.outputs = {n.outputs[k]};
      identity.guards = n.guards;
      kept.push_back(std::move(identity));
    }
    ++resolved;
  }
  g->nodes = std::move(kept);
  for (size_t i = 0; i < g->nodes.size(); ++i) {
    for (int o : g->nodes[i].outputs) g->values[size_t(o)].producer = int(i);
  }
  return resolved;
}

}  // namespace tunefarm::graph
