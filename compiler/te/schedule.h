// Schedule: how the compute definitions of a kernel become loops.
//
// A Schedule holds one Stage per compute tensor reachable from the outputs (placeholders are
// arguments, not stages). A stage starts with one loop per axis (data axes, then reduce axes) and
// is reshaped by the primitives below; each primitive records a relation between iteration
// variables, and passes::ScheduleOps (passes/schedule_ops.h) replays the relations to build the loop nest.
//
// Primitives (TVM's te.Schedule vocabulary):
//   split(iv, factor)      iv -> (outer, inner); a non-divisible factor is legal (guarded)
//   fuse(outer, inner)     two adjacent loops -> one
//   reorder(ivs)           permutes the listed leaf loops among their own positions
//   vectorize/unroll/parallel(iv), bind(iv, gpu kind)   loop annotations; binding a stage's
//                          only reduce axis to threadIdx.x makes it a cross-thread reduction
//   compute_at(stage, iv)  computes this stage inside the consumer's loop iv, only the region the
//                          consumer reads there (used for padding and for register tiles)
//   cache_write(tensor)    computes the tensor into a new stage and makes the original stage a
//                          copy of it: with compute_at, the register-tile accumulation pattern
//   cache_read(tensor, scope, readers)  a new stage copying the tensor into `scope` memory, read
//                          by the readers instead of the tensor: with compute_at and threads bound
//                          to its loops, the GPU's cooperative fetch into shared memory
//   compute_inline(tensor) the tensor's definition is substituted into its readers (no stage)
//   set_scope(scope)       where the stage's tensor lives: a GPU shared tensor attached inside a
//                          block covers what every thread of the block reads there (the region is
//                          relaxed over the thread loops around the attach point) and is fenced by
//                          barriers; a local tensor covers one thread's part
// Misuse of a primitive (a leaf that is not a leaf, a foreign iter var) is a bug in the template
// that issued it and fails a TUNEFARM_CHECK; configurations are validated before they get here.
#ifndef TUNEFARM_COMPILER_TE_SCHEDULE_H_
#define TUNEFARM_COMPILER_TE_SCHEDULE_H_

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "compiler/te/tensor.h"

namespace tunefarm::te {

struct IterVarRelation {
  enum Kind { kSplit, kFuse } kind;
  // kSplit: parent -> outer * factor + inner. kFuse: (outer, inner) -> fused.
  IterVar parent, outer, inner, fused;
  int64_t factor = 0;
};

enum class AttachKind { kRoot, kAt };

// The least work (scalar operations: output elements times reduction steps) worth a parallel loop.
// Below it the pool's dispatch and the split of warm data over cores cost more than the second
// thread saves. Measured (bench_threads' crossover, an element-wise AVX-512 kernel run back to back
// on warm buffers, 2 threads, Zen 4): 0.42-0.55x at 2048 elements, 0.73-0.82x at 4096, 0.93-1.24x
// at 8192, 1.18-1.52x at 16384, 1.35-1.80x at 32768.
inline constexpr int64_t kMinParallelWork = 1 << 14;

struct Stage {
  Tensor tensor;  // the tensor this stage writes
  // The definition being scheduled; starts as the tensor's own and changes under cache_write.
  Expr body;
  std::vector<IterVar> axes;
  std::vector<IterVar> reduce_axes;
  ReduceKind reduce = ReduceKind::kNone;

  std::vector<IterVar> leaf_order;  // outermost first
  std::vector<IterVarRelation> relations;
  std::map<const IterVarNode*, ir::ForKind> annotations;

  AttachKind attach = AttachKind::kRoot;
  Stage* attach_stage = nullptr;
  IterVar attach_ivar;
  ir::MemoryScope scope = ir::MemoryScope::kGlobal;
  bool inlined = false;  // compute_inline: no nest of its own

  // Scheduling primitives; see the header comment.
  std::pair<IterVar, IterVar> split(const IterVar& iv, int64_t factor);
  IterVar fuse(const IterVar& outer, const IterVar& inner);
  void reorder(const std::vector<IterVar>& order);
  void vectorize(const IterVar& iv) { annotate(iv, ir::ForKind::kVectorized); }
  void unroll(const IterVar& iv) { annotate(iv, ir::ForKind::kUnrolled); }
  void parallel(const IterVar& iv) { annotate(iv, ir::ForKind::kParallel); }
  void bind(const IterVar& iv, ir::ForKind gpu_kind) { annotate(iv, gpu_kind); }
  void compute_at(Stage& consumer, const IterVar& iv);
  void set_scope(ir::MemoryScope s) { scope = s; }

  void annotate(const IterVar& iv, ir::ForKind kind);
  size_t LeafIndex(const IterVar& iv) const;  // checks that iv is a leaf
};

// A kernel over tensors whose dimension 0 follows a symbolic size (one artifact for a range of
// sizes, docs/dynamic_shapes.md): the size is read from `size` (a one-element int64 argument of the
// kernel), clamped to [min, max], and every root stage in `follows` computes its following axis only
// up to scale x the size (passes::ScheduleOps). Shapes, tiles and storage stay those of the maximum.
// Arguments follow through axis 0; a stage inside the kernel may follow through any axis (Winograd's
// transformed input keeps the batch third). te::InferLeadingExtent (leading_extent.h) finds the
// stages and proves them independent along that axis.
struct LeadingExtent {
  struct Follow {
    int axis = 0;
    int64_t scale = 1;
  };
  Tensor size;
  int64_t min = 0, max = 0;
  std::map<const ir::TensorNode*, Follow> follows;  // arguments and stages that follow the size
};

class Schedule {
 public:
  // Stages for every compute tensor reachable from outputs, producers first.
  explicit Schedule(std::vector<Tensor> outputs);
  Schedule(const Schedule&) = delete;
  Schedule& operator=(const Schedule&) = delete;

  Stage& operator[](const Tensor& t);
  const std::vector<std::unique_ptr<Stage>>& stages() const { return stages_; }
  const std::vector<Tensor>& outputs() const { return outputs_; }

  // Creates `<name>.local`, computing what t computed; t's stage becomes a copy from it. Returns
  // the new tensor (schedule it through (*this)[result]).
  Tensor cache_write(const Tensor& t, ir::MemoryScope scope = ir::MemoryScope::kGlobal);
  // Creates `<name>.<scope>` = t, and makes each reader read it instead of t. Returns the new tensor.
  Tensor cache_read(const Tensor& t, ir::MemoryScope scope, const std::vector<Tensor>& readers);
  // Substitutes t's definition (not a reduction) into every stage that reads it.
  void compute_inline(const Tensor& t);

  void set_leading_extent(LeadingExtent e) { leading_extent_ = std::move(e); }
  const std::optional<LeadingExtent>& leading_extent() const { return leading_extent_; }

 private:
  std::optional<LeadingExtent> leading_extent_;
  std::vector<Tensor> outputs_;
  std::vector<std::unique_ptr<Stage>> stages_;
};

// All tensors a body reads.
std::vector<Tensor> ReadTensors(const Expr& body);

// The tensors a stage's definition reads (after any compute_inline into it).
std::set<const ir::TensorNode*> TensorsRead(const Stage& s);

}  // namespace tunefarm::te

#endif  // TUNEFARM_COMPILER_TE_SCHEDULE_H_
