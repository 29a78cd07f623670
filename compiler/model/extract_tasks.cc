// Task extraction: convolutions and dense layers of an imported, optimized graph -> Tasks.
#include <map>

#include "compiler/frontend/zoo.h"
#include "compiler/graph/passes/fold_batch_norm.h"
#include "compiler/graph/passes/infer_shapes.h"
#include "compiler/graph/passes/remove_dead_nodes.h"
#include "tunefarm/compiler/kernel.h"
#include "tunefarm/compiler/model.h"

namespace tunefarm::compiler {
namespace {

// The tunable workload a node runs, if any (false for element-wise and other untuned ops).
Result<bool> NodeWorkload(const graph::Graph& g, const graph::Node& n, Workload* w) {
  auto shape = [&](size_t i) { return g.values[size_t(n.inputs[i])].shape; };
  if (n.op_type == "Conv") {
    auto x = shape(0), k = shape(1);
    auto pads = n.GetInts("pads"), strides = n.GetInts("strides"), dil = n.GetInts("dilations");
    int64_t groups = n.GetInt("group", 1);
    *w = Conv2dWorkload(x[0], x[1], x[2], x[3], k[0], k[2], k[3], strides[0], pads[0], dil[0], groups);
    w->conv.stride_w = strides[1];
    w->conv.pad_left = pads[1];
    w->conv.pad_bottom = pads[2];
    w->conv.pad_right = pads[3];
    w->conv.dilation_w = dil[1];
    return true;
  }
  bool gemm = n.op_type == "Gemm", matmul = n.op_type == "MatMul";
  if ((gemm || matmul) && g.values[size_t(n.inputs[1])].constant && shape(0).size() == 2 && shape(1).size() == 2) {
    auto a = shape(0), b = shape(1);
    if (gemm && n.GetInt("transA", 0)) return false;  // a transposed activation: not a dense layer
    bool trans_b = gemm && n.GetInt("transB", 0);
    int64_t in = trans_b ? b[1] : b[0], out = trans_b ? b[0] : b[1];
    *w = DenseWorkload(a[0], in, out);
    return true;
  }
  return false;
}

}  // namespace

Result<std::vector<Task>> ExtractTasks(const std::string& model, const Target& target) {
  TUNEFARM_ASSIGN_OR_RETURN(graph::Graph g, frontend::LoadModel(model));
  TUNEFARM_RETURN_IF_ERROR(graph::InferShapes(&g).WithContext(model));
  graph::FoldBatchNorm(&g);
  graph::RemoveDeadNodes(&g);
  std::vector<Task> tasks;
  std::map<std::string, size_t> by_key;
  for (const graph::Node& n : g.nodes) {
    Workload w;
    TUNEFARM_ASSIGN_OR_RETURN(bool tunable, NodeWorkload(g, n, &w));
    if (!tunable) continue;
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
