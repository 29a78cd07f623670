// Small helpers shared by graph passes.
#ifndef TUNEFARM_COMPILER_GRAPH_GRAPH_UTIL_H_
#define TUNEFARM_COMPILER_GRAPH_GRAPH_UTIL_H_

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "compiler/graph/graph.h"

namespace tunefarm::graph {

// How many node inputs read each value (graph outputs not counted).
std::vector<int> CountUses(const Graph& g);
bool IsGraphOutput(const Graph& g, int value);
// Replaces node `index` with `replacement` (in order, where it stood, so the nodes stay in
// topological order) and renumbers every value's producer.
void ReplaceNode(Graph* g, size_t index, std::vector<Node> replacement);
// Applies `rewrite` to every node in order: where it returns nodes, they replace that node (and
// run under its guards: inside an If's branch too). Returns the number of nodes replaced.
int RewriteNodes(Graph* g, const std::function<std::vector<Node>(Graph*, size_t)>& rewrite);
// A new float32 value of a known shape, produced by a node the caller adds.
int AddFloatValue(Graph* g, const std::string& name, std::vector<int64_t> shape);
// Whether a node of an If branch never runs: one of its guards has a constant condition that is
// not the branch's.
bool NeverRuns(const Graph& g, const Node& n);
// A constant bool condition's value, or nullopt when the value is not a constant.
std::optional<bool> ConstantCondition(const Graph& g, int value);
// The value of a one-element float32 constant of rank <= max_rank (so broadcasting it changes no
// shape of that rank), or nullopt.
std::optional<float> ScalarConstant(const Graph& g, int value, size_t max_rank);
// The input of a two-input node that is not `known`; -1 when neither or both are.
int OtherInput(const Node& n, int known);

}  // namespace tunefarm::graph

#endif  // TUNEFARM_COMPILER_GRAPH_GRAPH_UTIL_H_
