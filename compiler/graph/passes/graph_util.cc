#include "compiler/graph/passes/graph_util.h"

#include <algorithm>

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

}  // namespace tunefarm::graph
