// LowerGraph: an optimized graph -> the kernels and tensors of a compiled model (before codegen).
//
// Every node becomes zero or more kernels: a tunable template for convolutions and dense layers
// (config from the ConfigSource, else the fallback and one warning per workload), a definition
// from compiler/compute for everything else, and nothing for reshapes (views of their input's
// storage) and folded constants (parameters). Layout planning happens here: each value has a
// home layout (its producer's: NCHW[x]c for convs), consumers that accept blocked layouts read it
// as is when planning is on (opt level 3), and a layout-change kernel is emitted once per
// (value, layout) that something needs. With records, the convolutions' blocks are chosen over the
// whole graph first (model/lowering/plan_layouts.h): a first pass records how layouts flow, the planner
// picks every convolution's config, and a second pass lowers with those picks.
#ifndef TUNEFARM_COMPILER_MODEL_LOWER_GRAPH_H_
#define TUNEFARM_COMPILER_MODEL_LOWER_GRAPH_H_

#include <functional>
#include <string>
#include <vector>

#include "compiler/graph/graph.h"
#include "compiler/operators/model_plan.h"

namespace tunefarm::compiler {

Result<ModelPlan> LowerGraph(const graph::Graph& g, const Target& target, const LowerGraphOptions& options);

}  // namespace tunefarm::compiler

#endif  // TUNEFARM_COMPILER_MODEL_LOWER_GRAPH_H_
