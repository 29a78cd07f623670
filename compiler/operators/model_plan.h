// What lowering a model produces before code generation: the kernels (each a schedule over its
// arguments, with the workload and config a tunable one was given) and the artifact's tensors.
// The operators' lowerings fill it through LowerApi (lower_api.h); model/lower_graph.h
// drives them and model/compile_model.cc emits the kernels.
#ifndef TUNEFARM_COMPILER_OPERATORS_MODEL_PLAN_H_
#define TUNEFARM_COMPILER_OPERATORS_MODEL_PLAN_H_

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "compiler/schedule/op_template.h"
#include "tunefarm/compiler/compile.h"
#include "tunefarm/runtime/artifact.h"

namespace tunefarm::compiler {

struct PlannedKernel {
  std::string op;
  KernelDef def;          // schedule and arguments
  std::vector<int> args;  // artifact tensor per def.args entry
  // Tunable kernels only: the workload and the implementation chosen (the artifact stores its task
  // name, Workload::ImplementationKey()).
  std::optional<Workload> workload;
  std::string node;  // the graph node it computes (or is part of)
  // Every implementation of the node's workload the compiler looked up (schedule/template_table.h),
  // the chosen one first: what task extraction lists.
  std::vector<Workload> candidate_workloads;
  int64_t config_index = -1;
  runtime::ConfigOrigin config_origin = runtime::ConfigOrigin::kNone;
  // Kernels of an If branch (CPU): run only when each (bool tensor, value) holds.
  std::vector<std::pair<int, bool>> run_if;
  // Runtime indices the executor checks before the kernel runs (LowerApi::EmitIndexed).
  std::vector<runtime::IndexCheck> index_checks;
  // Conditions under which a run that reaches the kernel fails (LowerApi::FailRunWhen).
  std::vector<runtime::ConditionCheck> condition_checks;
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

class Backend;  // compiler/backend/backend.h

struct LowerGraphOptions {
  // The target's code path, chosen once by the caller (BackendFor): every per-kind decision of the
  // lowering is asked of it. Required.
  const Backend* backend = nullptr;
  bool plan_layouts = true;
  const ConfigSource* configs = nullptr;
  std::function<void(const std::string&)> warn;
};

}  // namespace tunefarm::compiler

#endif  // TUNEFARM_COMPILER_OPERATORS_MODEL_PLAN_H_
