// The one GPU schedule every untuned operator gets (TVM's injective and fallback CUDA schedules in
// one): simple enough to be correct for any definition in ops.h, parallel enough that element-wise
// kernels run at memory speed.
//
//   - every intermediate stage without a reduction is inlined into its readers;
//   - the output's data axes are fused and split into blocks of up to 256 threads
//     (blockIdx.x, threadIdx.x): one output element per thread, reduce loops serial inside;
//   - every intermediate reduction (a softmax's max and sum, a norm's mean) is computed by the
//     thread that needs it, in registers, attached at the thread loop: the region one output
//     element reads. Rows are recomputed per element; simple and sound, not fast for long rows.
//     A reduction read only by another intermediate one (the lanes of a lane-split reduction,
//     ops/reduce.cc) is computed inside that one's innermost data loop: the region one of its
//     elements reads.
#include "compiler/compute/ops.h"

namespace tunefarm::compute {

std::unique_ptr<te::Schedule> ScheduleGenericGpu(const Tensor& output, const compiler::Target& target) {
  constexpr int64_t kThreadsPerBlock = 256;
  auto schedule = std::make_unique<te::Schedule>(std::vector<Tensor>{output});
  te::Schedule& s = *schedule;
  for (const auto& stage : s.stages()) {
    if (stage->tensor != output && stage->reduce_axes.empty()) s.compute_inline(stage->tensor);
  }
  te::Stage& o = s[output];
  // A 0-d output has no loop to bind: the lowering refuses it (no thread loop), naming the kernel.
  te::IterVar fused = o.axes.empty() ? te::IterVar() : o.axes.front();
  for (size_t i = 1; i < o.axes.size(); ++i) fused = o.fuse(fused, o.leaf_order[1]);
  if (!fused) return schedule;
  const int64_t threads = std::min<int64_t>({kThreadsPerBlock, fused->extent, target.gpu.max_threads_per_block});
  auto [blocks, thread] = o.split(fused, threads);
  std::vector<te::IterVar> order = {blocks, thread};
  order.insert(order.end(), o.reduce_axes.begin(), o.reduce_axes.end());
  o.reorder(order);
  o.bind(blocks, ir::ForKind::kGpuBlockX);
  o.bind(thread, ir::ForKind::kGpuThreadX);
  for (const auto& stage : s.stages()) {
    if (stage->tensor == output || stage->inlined) continue;
    stage->set_scope(ir::MemoryScope::kLocal);
    // Its one reader when that is another intermediate stage (not inlined: inlined ones were
    // substituted into their readers); else the output's thread loop.
    te::Stage* reader = nullptr;
    int readers = 0;
    for (const auto& other : s.stages()) {
      if (other->inlined || other.get() == stage.get() || !te::TensorsRead(*other).count(stage->tensor.get())) continue;
      ++readers;
      reader = other.get();
    }
    if (readers == 1 && reader->tensor != output && !reader->axes.empty()) {
      stage->compute_at(*reader, reader->axes.back());
    } else {
      stage->compute_at(o, thread);
    }
  }
  return schedule;
}

}  // namespace tunefarm::compute
