// The one schedule every untuned operator gets: good enough that element-wise and pooling kernels
// run at memory speed, simple enough to be correct for any definition in ops.h.
//
// Each stage: the last axis vectorized (a scalar tail where no vector width divides it), the outer
// axes fused into one parallel loop when the work pays for it. Row-local kernels (Softmax and
// LayerNorm over the last axis: stages of the output's shape or its reduction over the last
// axis) compute those the output reads inside its row loop (RowStages), so a row's exponentials or
// deviations stay in cache instead of passing through memory whole.
#include <algorithm>
#include <set>

#include "compiler/compute/ops.h"

namespace tunefarm::compute {
namespace {

// A register holds target.vector_lanes 32-bit elements and more narrower ones: a uint8 stage
// (MaxPool, a layout change of int8 activations) runs 64 lanes at a time on AVX-512, not 16.
int StageLanes(const te::Stage& s, const compiler::Target& target) {
  const ir::Type t = s.tensor->dtype;
  return t.bits >= 8 && t.bits < 32 ? target.vector_lanes * (32 / t.bits) : target.vector_lanes;
}

int64_t VectorWidth(int64_t extent, int lanes) {
  for (int64_t v = lanes; v >= 4; v /= 2) {
    if (extent % v == 0) return v;
  }
  return 0;
}

// Schedules one stage. An attached stage runs inside another stage's loop: never parallel. With
// want_row, returns the stage's row loop (over every axis but the last), else null.
te::IterVar ScheduleStage(te::Stage& s, const compiler::Target& target, bool attached, bool want_row) {
  if (s.axes.empty()) return te::IterVar();
  int64_t work = 1;
  for (const auto& a : s.axes) work *= a->extent;
  for (const auto& r : s.reduce_axes) work *= r->extent;

  std::vector<te::IterVar> outer(s.axes.begin(), s.axes.end() - 1);
  const te::IterVar last = s.axes.back();
  const int lanes = StageLanes(s, target);
  int64_t width = VectorWidth(last->extent, lanes);
  // An extent no vector width divides (ViT's 197 tokens) still runs in full vectors: the split's
  // guard is peeled into a scalar tail (PartitionLoops), so only the last extent % lanes elements
  // are scalar; a scalar row would compute exp and divisions one lane at a time.
  if (width == 0 && last->extent > 2 * int64_t(lanes)) width = lanes;
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

  if (attached) return te::IterVar();
  if (work < te::kMinParallelWork) return want_row && !outer.empty() ? outer.back() : te::IterVar();
  // Fuse the outer data axes into one parallel loop (the last axis's outer part too when there
  // is nothing else to split the work by).
  te::IterVar fused = order[0];
  size_t fusable = outer.size();
  if (fusable == 0 && width > 0) fusable = 1;
  for (size_t k = 1; k < fusable; ++k) fused = s.fuse(fused, order[k]);
  if (fusable > 0 && fused->extent > 1) s.parallel(fused);
  return want_row && !outer.empty() ? fused : te::IterVar();
}

// The stages to compute inside the output's row loop: those an element-wise output reads that are
// row-local (the output's shape, or that shape with the last axis reduced to 1) and that no other
// stage outside the row reads (Softmax's exponentials, LayerNorm's deviations). A row's region is
// inferred from the output's reads, so only stages it reads directly attach; the others stay
// whole (Softmax's row maxima: one value per row).
std::vector<te::Stage*> RowStages(const te::Schedule& s, const te::Stage& out) {
  const std::vector<int64_t>& shape = out.tensor->shape;
  std::vector<te::Stage*> rows;
  // An output that reduces may read a whole producer for each of its rows: computing that inside
  // the row would repeat it per row.
  if (shape.size() < 2 || shape.back() < 2 || !out.reduce_axes.empty()) return rows;
  const std::set<const ir::TensorNode*> read_by_out = te::TensorsRead(out);
  for (const auto& st : s.stages()) {
    const std::vector<int64_t>& own = st->tensor->shape;
    if (st.get() == &out || !read_by_out.count(st->tensor.get()) || own.size() != shape.size()) continue;
    if (!std::equal(own.begin(), own.end() - 1, shape.begin()) || (own.back() != shape.back() && own.back() != 1))
      continue;
    rows.push_back(st.get());
  }
  // A stage computed outside the row must not read one computed inside it.
  for (bool changed = true; changed;) {
    changed = false;
    for (const auto& st : s.stages()) {
      if (st.get() == &out || std::find(rows.begin(), rows.end(), st.get()) != rows.end()) continue;
      const std::set<const ir::TensorNode*> reads = te::TensorsRead(*st);
      for (auto it = rows.begin(); it != rows.end();) {
        if (reads.count((*it)->tensor.get())) {
          it = rows.erase(it);
          changed = true;
        } else {
          ++it;
        }
      }
    }
  }
  return rows;
}

}  // namespace

std::unique_ptr<te::Schedule> ScheduleGeneric(const std::vector<Tensor>& outputs, const compiler::Target& target) {
  auto schedule = std::make_unique<te::Schedule>(outputs);
  te::Stage* out = outputs.size() == 1 ? &(*schedule)[outputs[0]] : nullptr;
  const std::vector<te::Stage*> rows = out ? RowStages(*schedule, *out) : std::vector<te::Stage*>{};
  auto in_row = [&](const te::Stage* st) { return std::find(rows.begin(), rows.end(), st) != rows.end(); };
  for (const auto& stage : schedule->stages()) {
    if (stage.get() != out) ScheduleStage(*stage, target, in_row(stage.get()), false);
  }
  if (!out) return schedule;
  const te::IterVar row = ScheduleStage(*out, target, false, !rows.empty());
  if (row) {
    for (te::Stage* stage : rows) stage->compute_at(*out, row);
  }
  return schedule;
}

}  // namespace tunefarm::compute
