// The tunable workload a graph node runs (conv2d, depthwise conv2d, dense), shared by task
// extraction and the model compiler so both agree on every key.
#ifndef TUNEFARM_COMPILER_OPERATORS_NODE_WORKLOAD_H_
#define TUNEFARM_COMPILER_OPERATORS_NODE_WORKLOAD_H_

#include "compiler/graph/graph.h"
#include "tunefarm/compiler/workload.h"

namespace tunefarm::compiler {

// True and *w set when the node is a tunable operator (constant weights, supported shapes): the
// operator and its parameters, with no implementation (template_table.h's Implementations lists
// those of a target).
bool NodeWorkload(const graph::Graph& g, const graph::Node& n, Workload* w);

}  // namespace tunefarm::compiler

#endif  // TUNEFARM_COMPILER_OPERATORS_NODE_WORKLOAD_H_
