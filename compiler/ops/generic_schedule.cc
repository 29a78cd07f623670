// The one schedule every untuned operator gets: good enough that element-wise and pooling kernels
// run at memory speed, simple enough to be correct for any definition in ops.h.
#include "compiler/ops/ops.h"

namespace tunefarm::ops {
namespace {

// Below this many scalar operations a parallel launch costs more than it saves.
constexpr int64_t kMinParallelWork = 1 << 14;

int64_t VectorWidth(int64_t extent, int lanes) {
  for (int64_t v = lanes; v >= 4; v /= 2) {
    if (extent % v == 0) return v;
  }
  return 0;
}

void ScheduleStage(te::Stage& s, const compiler::Target& target) {
  if (s.axes.empty()) return;
  int64_t work = 1;
  for (const auto& a : s.axes) work *= a->extent;
  for (const auto& r : s.reduce_axes) work *= r->extent;

  std::vector<te::IterVar> outer(s.axes.begin(), s.axes.end() - 1);
  const te::IterVar last = s.axes.back();
  int64_t width = VectorWidth(last->extent, target.vector_lanes);
  // An extent no vector width divides (ViT's 197 tokens) still runs in full vectors: the split's
  // guard is peeled into a scalar tail (PartitionLoops), so only the last extent % lanes elements
  // are scalar; a scalar row would compute exp and divisions one lane at a time.
  if (width == 0 && last->extent > 2 * int64_t(target.vector_lanes)) width = target.vector_lanes;
  std::vector<te::IterVar> order = outer;
  te::IterVar vector_axis;
  if (width > 0) {
    auto [lo, li] = s.split(last, width);
    order.push_back(lo);
    order.insert(order.end(), s.reduce_axes.begin(), s.reduce_axes.end());
    order.push_back(li);
    vector_axis = li;
  } else {
    order.push_back(last);
    order.insert(order.end(), s.reduce_axes.begin(), s.reduce_axes.end());
  }
  s.reorder(order);
  if (vector_axis) s.vectorize(vector_axis);

  if (work < kMinParallelWork) return;
  // Fuse the outer data axes into one parallel loop (the last axis's outer part too when there
  // is nothing else to split the work by).
  te::IterVar fused = order[0];
  size_t fusable = outer.size();
  if (fusable == 0 && width > 0) fusable = 1;
  for (size_t k = 1; k < fusable; ++k) fused = s.fuse(fused, order[k]);
  if (fusable > 0 && fused->extent > 1) s.parallel(fused);
}

}  // namespace

std::unique_ptr<te::Schedule> ScheduleGeneric(const std::vector<Tensor>& outputs, const compiler::Target& target) {
  auto schedule = std::make_unique<te::Schedule>(outputs);
  for (const auto& stage : schedule->stages()) ScheduleStage(*stage, target);
  return schedule;
}

}  // namespace tunefarm::ops
