// Task extraction: the implementations the compiled plan's tunable kernels chose from, grouped by
// workload. The graph goes through the same pipeline as `tunefarm compile` (Optimize + LowerGraph,
// without code generation), so the tasks are exactly the workloads compile looks up in the records.
#include "compiler/model/extract_tasks.h"

#include <sys/stat.h>

#include <map>

#include "compiler/backend/backend.h"
#include "compiler/frontend/onnx_importer.h"
#include "compiler/frontend/zoo.h"
#include "compiler/model/compile_graph.h"
#include "compiler/model/lower_graph.h"
#include "compiler/model/passes/pipeline.h"
#include "tunefarm/compiler/kernel.h"
#include "tunefarm/compiler/model.h"
#include "tunefarm/runtime/no_throw.h"

namespace tunefarm::compiler {

Result<std::vector<Task>> ExtractTasks(graph::Graph g, const std::string& model, const Target& target, int opt_level) {
  OptimizeOptions optimize;
  optimize.evaluate_constants = HostConstantEvaluator();
  TUNEFARM_RETURN_IF_ERROR(Optimize(&g, opt_level, target, optimize).WithContext(model));
  // As CompileGraph lowers it, for every target kind: the tasks are the lookups compile makes.
  LowerGraphOptions lower;
  const Backend& backend = BackendFor(target);
  lower.backend = &backend;
  lower.plan_layouts = backend.PlansLayouts(opt_level);
  lower.warn = [](const std::string&) {};  // no records: every tunable kernel is on its fallback
  auto plan = LowerGraph(g, target, lower);
  if (!plan.ok()) return plan.status().WithContext(model);
  std::vector<Task> tasks;
  std::map<std::string, size_t> by_key;
  for (const PlannedKernel& k : plan->kernels) {
    // Each implementation the compiler considered for the node is a task of its own.
    for (size_t c = 0; c < k.candidate_workloads.size(); ++c) {
      const Workload& w = k.candidate_workloads[c];
      const std::string key = w.ImplementationKey();  // one task per implementation and workload
      auto it = by_key.find(key);
      if (it == by_key.end()) {
        auto space = GetConfigSpace(w, target);
        if (!space.ok()) return space.status().WithContext(model + ": node '" + k.node + "'");
        Task t;
        t.workload = w;
        t.flops = w.Flops();
        t.config_space_size = space->size();
        t.alternative = c > 0;
        if (t.alternative) t.default_workload = k.candidate_workloads[0];
        it = by_key.emplace(key, tasks.size()).first;
        tasks.push_back(std::move(t));
      }
      Task& t = tasks[it->second];
      ++t.count;
      t.nodes.push_back(k.node);
    }
  }
  return tasks;
}

Result<std::vector<Task>> ExtractTasks(const std::string& model, const Target& target, int opt_level,
                                       const std::vector<InputShape>& input_shapes) {
  return NoThrow("extracting the tasks of " + model, [&]() -> Result<std::vector<Task>> {
    TUNEFARM_ASSIGN_OR_RETURN(graph::Graph g, frontend::LoadModel(model, input_shapes));
    return ExtractTasks(std::move(g), model, target, opt_level);
  });
}

Result<uint64_t> ModelExternalDataBytes(const std::string& model) {
  struct stat st {};
  if (stat(model.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return uint64_t(0);  // a zoo name
  return frontend::ExternalDataBytes(model);
}

}  // namespace tunefarm::compiler
