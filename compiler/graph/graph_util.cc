#include "compiler/graph/graph_util.h"

#include <algorithm>
#include <cstddef>

namespace tunefarm::graph {

std::vector<int> CountUses(const Graph& g) {
  std::vector<int> uses(g.values.size(), 0);
  for (const Node& n : g.nodes) {
    for (int i : n.inputs) {
      if (i >= 0) ++uses[size_t(i)];
    }
  }
  return uses;
}

bool IsGraphOutput(const Graph& g, int value) {
  return std::find(g.outputs.begin(), g.outputs.end(), value) != g.outputs.end();
}

void ReplaceNode(Graph* g, size_t index, std::vector<Node> replacement) {
  g->nodes.erase(g->nodes.begin() + std::ptrdiff_t(index));
  g->nodes.insert(g->nodes.begin() + std::ptrdiff_t(index), std::make_move_iterator(replacement.begin()),
                  std::make_move_iterator(replacement.end()));
  for (size_t n = 0; n < g->nodes.size(); ++n) {
    for (int o : g->nodes[n].outputs) g->values[size_t(o)].producer = int(n);
  }
}

int RewriteNodes(Graph* g, const std::function<std::vector<Node>(Graph*, size_t)>& rewrite) {
  int rewritten = 0;
  for (size_t i = 0; i < g->nodes.size(); ++i) {
    std::vector<Node> nodes = rewrite(g, i);
    if (nodes.empty()) continue;
    for (Node& added : nodes) added.guards = g->nodes[i].guards;
    const size_t added = nodes.size();
    ReplaceNode(g, i, std::move(nodes));
    i += added - 1;
    ++rewritten;
  }
  return rewritten;
}

int AddFloatValue(Graph* g, const std::string& name, std::vector<int64_t> shape) {
  Value v;
  v.name = name;
  v.dtype = DataType::kFloat32;
  v.shape = std::move(shape);
  v.shape_known = true;
  return g->AddValue(std::move(v));
}

std::optional<bool> ConstantCondition(const Graph& g, int value) {
  const auto& c = g.values[size_t(value)].constant;
  if (!c) return std::nullopt;
  return c->dtype == DataType::kFloat32 ? !c->f32.empty() && c->f32[0] != 0 : !c->i64.empty() && c->i64[0] != 0;
}

bool NeverRuns(const Graph& g, const Node& n) {
  for (const NodeGuard& guard : n.guards) {
    const std::optional<bool> cond = ConstantCondition(g, guard.cond);
    if (cond && *cond != guard.when) return true;
  }
  return false;
}

std::optional<float> ScalarConstant(const Graph& g, int value, size_t max_rank) {
  if (value < 0) return std::nullopt;
  const Value& v = g.values[size_t(value)];
  if (!v.constant || v.constant->dtype != DataType::kFloat32 || v.constant->f32.size() != 1 ||
      v.shape.size() > max_rank) {
    return std::nullopt;
  }
  return v.constant->f32[0];
}

int OtherInput(const Node& n, int known) {
  if (n.inputs.size() != 2) return -1;
  if (n.inputs[0] == known && n.inputs[1] != known) return n.inputs[1];
  if (n.inputs[1] == known && n.inputs[0] != known) return n.inputs[0];
  return -1;
}

}  // namespace tunefarm::graph
