// LowerGraph: an optimized graph -> the kernels and tensors of a compiled model (before codegen).
//
// Every node becomes zero or more kernels: a tunable template for convolutions and dense layers
// (config from the ConfigSource, else the fallback and one warning per workload), a definition
// from compiler/ops for everything else, and nothing for reshapes (views of their input's
// storage) and folded constants (parameters). Layout planning happens here: each value has a
// home layout (its producer's: NCHW[x]c for convs), consumers that accept blocked layouts read it
// as is when planning is on (opt level 3), and a layout-change kernel is emitted once per
// (value, layout) that something needs. With records, the convolutions' blocks are chosen over the
// whole graph first (operators/plan_layouts.h): a first pass records how layouts flow, the planner
// picks every convolution's config, and a second pass lowers with those picks.
#ifndef TUNEFARM_COMPILER_MODEL_LOWER_GRAPH_H_
#define TUNEFARM_COMPILER_MODEL_LOWER_GRAPH_H_

#include <functional>
#include <string>
#include <vector>

#include "compiler/graph/graph.h"
#include "compiler/schedule/op_template.h"
#include "tunefarm/compiler/compile.h"
#include "tunefarm/runtime/artifact.h"

namespace tunefarm::compiler {

struct PlannedKernel {
  std::string op;
  KernelDef def;          // schedule and arguments
  std::vector<int> args;  // artifact tensor per def.args entry
  std::string workload;   // tunable kernels only: the implementation chosen
  std::string node;       // the graph node it computes (tunable kernels)
  // Every implementation's workload the compiler looked up for this node (schedule/strategy.h),
  // the chosen one included: what task extraction lists.
  std::vector<std::string> candidate_workloads;
  int64_t config_index = -1;
  std::string config_source;
  // Kernels of an If branch (CPU): run only when each (bool tensor, value) holds.
  std::vector<std::pair<int, bool>> run_if;
  // Untuned kernels: the compute definition over placeholders of args[0..n-2] (how the kernel can
  // be rebuilt with a producer inlined), and whether it is injective (no reduction).
  std::function<ir::Tensor(const std::vector<ir::Tensor>&)> definition;
  bool injective = false;
};

struct ModelPlan {
  runtime::Artifact artifact;  // tensors, inputs, outputs, params; kernels are filled at codegen
  std::vector<PlannedKernel> kernels;
  int tunable_kernels = 0, from_records = 0;
  CompileStats::LayoutPlanning layouts;
};

struct LowerGraphOptions {
  bool plan_layouts = true;
  const ConfigSource* configs = nullptr;
  std::function<void(const std::string&)> warn;
};

Result<ModelPlan> LowerGraph(const graph::Graph& g, const Target& target, const LowerGraphOptions& options);

}  // namespace tunefarm::compiler

#endif  // TUNEFARM_COMPILER_MODEL_LOWER_GRAPH_H_
