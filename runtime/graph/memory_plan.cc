#include "runtime/graph/memory_plan.h"

#include <algorithm>
#include <cstdint>

namespace tunefarm::runtime {

ArenaPlan PlanArena(const Artifact& a, size_t alignment) {
  const size_t nt = a.tensors.size(), nk = a.kernels.size();
  auto base = [&](size_t t) { return a.tensors[t].view_of >= 0 ? size_t(a.tensors[t].view_of) : t; };
  auto align_up = [&](size_t n) { return (n + alignment - 1) / alignment * alignment; };

  std::vector<int64_t> first(nt, -1), last(nt, -1);
  auto used_at = [&](int tensor, size_t k) {
    size_t b = base(size_t(tensor));
    if (first[b] < 0) first[b] = int64_t(k);
    last[b] = int64_t(k);
  };
  for (size_t k = 0; k < nk; ++k) {
    const ArtifactKernel& kernel = a.kernels[k];
    for (int arg : kernel.args) used_at(arg, k);
    // The executor reads these before the kernel runs: they must still hold their values.
    for (const auto& [t, value] : kernel.run_if) used_at(t, k);
    for (const auto& check : kernel.condition_checks) {
      for (const auto& [t, value] : check.fails_when) used_at(t, k);
    }
  }
  for (int out : a.outputs) last[base(size_t(out))] = int64_t(nk);

  struct Block {
    size_t tensor, offset, size;
  };
  std::vector<size_t> order;
  for (size_t t = 0; t < nt; ++t) {
    if (a.tensors[t].view_of < 0 && a.tensors[t].kind == ArtifactTensor::kIntermediate && first[t] >= 0)
      order.push_back(t);
  }
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t x, size_t y) { return a.tensors[x].bytes() > a.tensors[y].bytes(); });
  ArenaPlan plan;
  plan.offset.assign(nt, 0);
  std::vector<Block> placed;
  for (size_t t : order) {
    size_t size = align_up(size_t(a.tensors[t].bytes()));
    std::vector<const Block*> live;
    for (const Block& b : placed) {
      if (first[b.tensor] <= last[t] && first[t] <= last[b.tensor]) live.push_back(&b);
    }
    std::sort(live.begin(), live.end(), [](const Block* x, const Block* y) { return x->offset < y->offset; });
    size_t at = 0;
    for (const Block* b : live) {
      if (at + size <= b->offset) break;
      at = std::max(at, b->offset + b->size);
    }
    placed.push_back({t, at, size});
    plan.offset[t] = at;
    plan.size = std::max(plan.size, at + size);
  }
  return plan;
}

}  // namespace tunefarm::runtime
