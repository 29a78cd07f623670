#include "compiler/model/passes/remove_dead_nodes.h"

#include "compiler/graph/graph_util.h"

namespace tunefarm::graph {

int RemoveDeadNodes(Graph* g) {
  std::vector<bool> live_value(g->values.size(), false);
  for (int o : g->outputs) live_value[size_t(o)] = true;
  std::vector<bool> live_node(g->nodes.size(), false);
  // Walk backwards: a node is live when one of its outputs is.
  for (size_t i = g->nodes.size(); i-- > 0;) {
    const Node& n = g->nodes[i];
    for (int o : n.outputs) live_node[i] = live_node[i] || live_value[size_t(o)];
    if (!live_node[i]) continue;
    for (int o : n.outputs) live_value[size_t(o)] = true;  // unused optional outputs stay valid
    for (int in : n.inputs) {
      if (in >= 0) live_value[size_t(in)] = true;
    }
    for (const NodeGuard& guard : n.guards) live_value[size_t(guard.cond)] = true;  // an If branch's condition
  }
  for (int in : g->inputs) live_value[size_t(in)] = true;  // inputs stay part of the signature

  std::vector<int> remap(g->values.size(), -1);
  std::vector<Value> values;
  for (size_t v = 0; v < g->values.size(); ++v) {
    if (!live_value[v]) continue;
    remap[v] = int(values.size());
    values.push_back(std::move(g->values[v]));
  }
  std::vector<Node> nodes;
  int removed = 0;
  for (size_t i = 0; i < g->nodes.size(); ++i) {
    if (!live_node[i]) {
      ++removed;
      continue;
    }
    Node n = std::move(g->nodes[i]);
    for (int& in : n.inputs) in = in >= 0 ? remap[size_t(in)] : -1;
    for (int& o : n.outputs) o = remap[size_t(o)];
    for (NodeGuard& guard : n.guards) guard.cond = remap[size_t(guard.cond)];
    nodes.push_back(std::move(n));
  }
  // Producers are node indices: recompute them for the surviving nodes.
  for (Value& v : values) v.producer = -1;
  for (size_t i = 0; i < nodes.size(); ++i) {
    for (int o : nodes[i].outputs) values[size_t(o)].producer = int(i);
  }
  for (int& in : g->inputs) in = remap[size_t(in)];
  for (int& o : g->outputs) o = remap[size_t(o)];
  g->values = std::move(values);
  g->nodes = std::move(nodes);
  return removed;
}

}  // namespace tunefarm::graph
