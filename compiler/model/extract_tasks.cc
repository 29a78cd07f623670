// Task extraction: convolutions and dense layers of an imported, optimized graph -> Tasks.
#include <map>

#include "compiler/frontend/zoo.h"
#include "compiler/graph/passes/fold_batch_norm.h"
#include "compiler/graph/passes/infer_shapes.h"
#include "compiler/graph/passes/remove_dead_nodes.h"
#include "compiler/model/node_workload.h"
#include "tunefarm/compiler/kernel.h"
#include "tunefarm/compiler/model.h"

namespace tunefarm::compiler {

Result<std::vector<Task>> ExtractTasks(const std::string& model, const Target& target) {
  TUNEFARM_ASSIGN_OR_RETURN(graph::Graph g, frontend::LoadModel(model));
  TUNEFARM_RETURN_IF_ERROR(graph::InferShapes(&g).WithContext(model));
  graph::FoldBatchNorm(&g);
  graph::RemoveDeadNodes(&g);
  std::vector<Task> tasks;
  std::map<std::string, size_t> by_key;
  for (const graph::Node& n : g.nodes) {
    Workload w;
    if (!NodeWorkload(g, n, &w)) continue;
    std::string key = w.Key();
    auto it = by_key.find(key);
    if (it == by_key.end()) {
      auto space = GetConfigSpace(w, target);
      if (!space.ok()) return space.status().WithContext(model + ": " + g.Describe(n));
      Task t;
      t.workload = w;
      t.flops = w.Flops();
      t.config_space_size = space->size();
      it = by_key.emplace(key, tasks.size()).first;
      tasks.push_back(std::move(t));
    }
    Task& t = tasks[it->second];
    ++t.count;
    t.nodes.push_back(n.name.empty() ? g.values[size_t(n.outputs[0])].name : n.name);
  }
  return tasks;
}

}  // namespace tunefarm::compiler
