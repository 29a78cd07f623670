#include "compiler/model/passes/fold_batch_norm.h"

#include <cmath>

#include "compiler/graph/graph_util.h"

namespace tunefarm::graph {

int FoldBatchNorm(Graph* g) {
  std::vector<int> uses = CountUses(*g);
  int folded = 0;
  for (Node& bn : g->nodes) {
    if (bn.op_type != "BatchNormalization" || bn.inputs.size() < 5 || bn.GetInt("training_mode", 0) != 0) continue;
    // An index, not a reference: AddConstant below grows g->values.
    const int conv_index = g->values[size_t(bn.inputs[0])].producer;
    if (conv_index < 0 || uses[size_t(bn.inputs[0])] != 1 || IsGraphOutput(*g, bn.inputs[0])) continue;
    Node& conv = g->nodes[size_t(conv_index)];
    if (conv.op_type != "Conv" || conv.inputs.size() < 2) continue;
    auto constant = [&](int idx) { return idx >= 0 ? g->values[size_t(idx)].constant : nullptr; };
    auto w = constant(conv.inputs[1]);
    auto gamma = constant(bn.inputs[1]), beta = constant(bn.inputs[2]);
    auto mean = constant(bn.inputs[3]), var = constant(bn.inputs[4]);
    if (!w || !gamma || !beta || !mean || !var || w->dtype != DataType::kFloat32) continue;
    const int64_t k = w->shape[0];
    if (int64_t(gamma->f32.size()) != k || int64_t(beta->f32.size()) != k || int64_t(mean->f32.size()) != k ||
        int64_t(var->f32.size()) != k) {
      continue;
    }
    std::shared_ptr<const ConstantData> bias = conv.inputs.size() > 2 ? constant(conv.inputs[2]) : nullptr;
    if (conv.inputs.size() > 2 && conv.inputs[2] >= 0 && !bias) continue;  // a runtime bias: leave it
    const float eps = bn.GetFloat("epsilon", 1e-5f);
    ConstantData new_w = *w;
    ConstantData new_b{DataType::kFloat32, {k}, std::vector<float>(size_t(k)), {}};
    const int64_t per_k = new_w.num_elements() / k;
    for (int64_t c = 0; c < k; ++c) {
      // Accumulate in double: the folded model must match the unfolded one to ~1e-6.
      double s = double(gamma->f32[size_t(c)]) / std::sqrt(double(var->f32[size_t(c)]) + double(eps));
      for (int64_t i = 0; i < per_k; ++i)
        new_w.f32[size_t(c * per_k + i)] = float(double(w->f32[size_t(c * per_k + i)]) * s);
      double b0 = bias ? bias->f32[size_t(c)] : 0.0;
      new_b.f32[size_t(c)] = float((b0 - double(mean->f32[size_t(c)])) * s + double(beta->f32[size_t(c)]));
    }
    conv.inputs[1] = g->AddConstant(g->values[size_t(conv.inputs[1])].name + ".bnfold", std::move(new_w));
    int b_idx = g->AddConstant(g->values[size_t(bn.outputs[0])].name + ".bias", std::move(new_b));
    if (conv.inputs.size() > 2) {
      conv.inputs[2] = b_idx;
    } else {
      conv.inputs.push_back(b_idx);
    }
    // The conv now writes the batch norm's output value; the batch norm becomes dead.
    int out = bn.outputs[0];
    g->values[size_t(out)].producer = conv_index;
    conv.outputs[0] = out;
    bn.op_type = "Identity";  // removed by RemoveDeadNodes: nothing reads its (old) input anymore
    bn.inputs = {bn.inputs[0]};
    bn.outputs.clear();
    ++folded;
  }
  return folded;
}

}  // namespace tunefarm::graph
