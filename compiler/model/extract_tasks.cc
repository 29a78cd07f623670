// Task extraction: the tunable kernels of the compiled plan, grouped by workload. The graph goes
// through the same pipeline as `tunefarm compile` (Optimize + LowerGraph, without code
// generation), so every task is a kernel the compiler emits and every tunable kernel is a task.
#include "compiler/model/extract_tasks.h"

#include <map>

#include "compiler/frontend/zoo.h"
#include "compiler/model/lower_graph.h"
#include "compiler/model/optimize.h"
#include "tunefarm/compiler/kernel.h"
#include "tunefarm/compiler/model.h"

namespace tunefarm::compiler {

Result<std::vector<Task>> ExtractTasks(graph::Graph g, const std::string& model, const Target& target, int opt_level) {
  TUNEFARM_RETURN_IF_ERROR(Optimize(&g, opt_level, target).WithContext(model));
  LowerGraphOptions lower;
  lower.plan_layouts = opt_level >= 3;
  lower.warn = [](const std::string&) {};  // no records: every tunable kernel is on its fallback
  auto plan = LowerGraph(g, target, lower);
  if (!plan.ok()) return plan.status().WithContext(model);
  std::vector<Task> tasks;
  std::map<std::string, size_t> by_key;
  for (const PlannedKernel& k : plan->kernels) {
    if (k.workload.empty()) continue;
    auto it = by_key.find(k.workload);
    if (it == by_key.end()) {
      TUNEFARM_ASSIGN_OR_RETURN(Workload w, Workload::FromKey(k.workload));
      auto space = GetConfigSpace(w, target);
      if (!space.ok()) return space.status().WithContext(model + ": node '" + k.node + "'");
      Task t;
      t.workload = w;
      t.flops = w.Flops();
      t.config_space_size = space->size();
      it = by_key.emplace(k.workload, tasks.size()).first;
      tasks.push_back(std::move(t));
    }
    Task& t = tasks[it->second];
    ++t.count;
    t.nodes.push_back(k.node);
  }
  return tasks;
}

Result<std::vector<Task>> ExtractTasks(const std::string& model, const Target& target, int opt_level) {
  TUNEFARM_ASSIGN_OR_RETURN(graph::Graph g, frontend::LoadModel(model));
  return ExtractTasks(std::move(g), model, target, opt_level);
}

}  // namespace tunefarm::compiler
