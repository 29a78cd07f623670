// RemoveDeadNodes: drops nodes none of whose outputs is read by a live node or is a graph output,
// and the values only they used. Keeps node order (topological) and renumbers value indices.
#ifndef TUNEFARM_COMPILER_MODEL_PASSES_REMOVE_DEAD_NODES_H_
#define TUNEFARM_COMPILER_MODEL_PASSES_REMOVE_DEAD_NODES_H_

#include "compiler/graph/graph.h"

namespace tunefarm::graph {

// Returns the number of nodes removed.
int RemoveDeadNodes(Graph* g);

}  // namespace tunefarm::graph

#endif  // TUNEFARM_COMPILER_MODEL_PASSES_REMOVE_DEAD_NODES_H_
