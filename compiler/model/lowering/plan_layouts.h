// Layout planning: the NCHW[x]c channel blocks of a model's convolutions chosen over the whole
// graph, from measured records (TVM's graph tuner does this for its x86 convolutions).
//
// Each convolution's records come in several (input block, output block) pairs, and the fastest
// record of one node may read or write another block than its neighbours'; every mismatch costs a
// layout-change kernel. Per node, apply-history-best ignores that cost. The planner instead
// minimizes  sum of kernel times (records) + sum of layout changes (estimated from bytes)  over
// every convolution's candidates at once.
//
// Inputs: the layout flow a first lowering pass recorded (each value's home block, each tunable
// node with its implementations and per-node choice). The convolutions are the variables; each
// reads its input from the convolution that last fixed that value's block (through element-wise
// ops, pooling and the like, which keep their input's block), and each residual add or binary op
// compares two such blocks. That is a chain with skip edges, solved by dynamic programming over
// the nodes in graph order with the still-needed neighbours as the state: exact while that state
// stays small (residual networks: a handful of nodes), a beam of the cheapest states beyond.
#ifndef TUNEFARM_COMPILER_MODEL_LOWERING_PLAN_LAYOUTS_H_
#define TUNEFARM_COMPILER_MODEL_LOWERING_PLAN_LAYOUTS_H_

#include <map>
#include <vector>

#include "compiler/model/lowering/lower_context.h"

namespace tunefarm::lowering {

// What the first lowering pass records.
struct LayoutFlow {
  struct Site {
    int node = -1;
    std::vector<compiler::Workload> implementations;
    LowerContext::Choice per_node;  // apply-history-best for the node alone
  };
  std::vector<Site> sites;          // tunable nodes, in graph order
  std::vector<int64_t> home_block;  // per graph value: the block it was computed in (0: plain)
};

struct LayoutPlan {
  std::map<int, LowerContext::Choice> choices;     // every site's node -> its choice
  compiler::CompileStats::LayoutPlanning summary;  // what `tunefarm compile` reports (compile.h)
};

// The estimated time of changing the layout of a tensor of `bytes` bytes (read and written once;
// calibrated on this project's layout-change kernels, bench/RESULTS.md).
double LayoutChangeMs(double bytes);

// Plans with the records of `configs`. Sites without valid records keep their per-node choice.
Result<LayoutPlan> PlanLayouts(const graph::Graph& g, const compiler::Target& target,
                               const compiler::ConfigSource& configs, const LayoutFlow& flow);

}  // namespace tunefarm::lowering

#endif  // TUNEFARM_COMPILER_MODEL_LOWERING_PLAN_LAYOUTS_H_
