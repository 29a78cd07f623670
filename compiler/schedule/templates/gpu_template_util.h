// Helpers shared by the CUDA templates: the 3-way output tiling bound to blocks and threads,
// cooperative fetches into shared memory, and the knob arithmetic the fallbacks use.
//
// Output tiling: each output dimension splits into (block, thread, inner): the block part goes to
// blockIdx, the thread part to threadIdx, the inner part is a register tile every thread keeps
// in local memory (unrolled, so it lives in registers).
#ifndef TUNEFARM_COMPILER_SCHEDULE_TEMPLATES_GPU_TEMPLATE_UTIL_H_
#define TUNEFARM_COMPILER_SCHEDULE_TEMPLATES_GPU_TEMPLATE_UTIL_H_

#include <array>
#include <cstdint>
#include <vector>

#include "compiler/schedule/op_template.h"
#include "compiler/schedule/templates/template_util.h"
#include "compiler/te/schedule.h"
#include "tunefarm/compiler/config_space.h"
#include "tunefarm/compiler/target.h"
#include "tunefarm/compiler/workload.h"

namespace tunefarm::compiler {

// The zero-padded NCHW input of a convolution (data itself when there is no padding).
ir::Tensor PadNCHW(const ir::Tensor& data, const Conv2dParams& c, const ir::Expr& pad_value);

// The thread extents of a stage's bound loops, z, y, x (1 where a dimension is not bound).
using ThreadExtents = std::array<int64_t, 3>;

// Splits every leaf of `stage` (all its data axes: the region a fetch covers) into one fused loop,
// then by the block's threads (x innermost, so consecutive threads read consecutive elements:
// coalesced global loads and conflict-free shared stores), binding the pieces to threadIdx.
void CooperativeFetch(te::Stage& stage, const ThreadExtents& threads);
// The same split of one (fused) leaf by the block's threads; returns the innermost thread-bound
// piece (the leaf itself when the block has one thread).
te::IterVar SplitAcrossThreads(te::Stage& stage, const te::IterVar& fused, const ThreadExtents& threads);

// Computes each of `shared` (cache_read copies) inside `reader` at loop `at`, fetched cooperatively
// by the block's threads: once per iteration of `at`, fenced by barriers (passes/schedule_ops.h).
void FetchIntoSharedAt(te::Schedule& s, const std::vector<ir::Tensor>& shared, te::Stage& reader, const te::IterVar& at,
                       const ThreadExtents& threads);

// Leaves of one output dimension after a (block, thread, inner) split, or a (block, virtual
// thread, thread, inner) one: index = ((block * V + vthread) * T + thread) * I + inner. A virtual
// thread is TVM's: each thread computes V strided pieces of I outputs (consecutive threads then
// touch consecutive pieces: coalesced stores, conflict-free shared reads); the templates run the
// vthread loop inside the thread loops, unrolled, and the register tile holds exactly V x I values
// (a folded region, ProducerRealize).
struct TiledAxis {
  te::IterVar block, thread, inner;
  te::IterVar vthread;  // null for a 3-way split
};
TiledAxis SplitBlockThreadInner(te::Stage& stage, const te::IterVar& axis, const std::vector<int64_t>& factors);
// The thread part of a 3- or 4-way split's factors, and the per-thread part (vthread x inner).
inline int64_t ThreadFactor(const std::vector<int64_t>& f) { return f[f.size() - 2]; }
inline int64_t PerThreadFactor(const std::vector<int64_t>& f) { return f.size() == 4 ? f[1] * f[3] : f[2]; }
inline int64_t VthreadFactor(const std::vector<int64_t>& f) { return f.size() == 4 ? f[1] : 1; }
// A (block, 1, thread, inner) 4-way tuple from a 3-way one.
inline std::vector<int64_t> NoVthread(const std::vector<int64_t>& t) { return {t[0], 1, t[1], t[2]}; }

// The output of a CUDA kernel computing `result` (NCHW or NC: channel i[1]): the fused epilogue
// stage (bias, residual, activation) after it, or result itself; appended to def's arguments with
// the output role, def's schedule created over it, the config's auto_unroll_max_step taken.
ir::Tensor AddGpuOutput(KernelDef* def, const ir::Tensor& result, const Epilogue& ep, const EpilogueArgs& epi,
                        const Config& cfg);

// The registers `result` accumulates in: result itself, in local scope, when an epilogue stage
// reads it; else a local cache of it that the output stage copies out.
ir::Tensor LocalAccumulator(te::Schedule& s, const ir::Tensor& result, bool has_epilogue);

// The stages of an NCHW convolution on a GPU: the register accumulator (the conv itself when an
// epilogue stage consumes it, else a local cache of it), and shared-memory copies of the (padded)
// input and the weights read by it; the padding is inlined into the input's fetch.
struct GpuConvStages {
  ir::Tensor acc, input_shared, kernel_shared;
};
GpuConvStages StageConvThroughSharedMemory(te::Schedule& s, const ir::Tensor& conv, bool has_epilogue,
                                           const ir::Tensor& input, const ir::Tensor& data, const ir::Tensor& kernel);

// Tiles the output stage of an NCHW convolution: channels, rows and columns by the config's
// tile_f/tile_y/tile_x ((block, vthread, thread, inner)), the leading leaves (batch[, group]) fused
// with the channel blocks on blockIdx.z, rows and columns on blockIdx.y/x, the thread parts on
// threadIdx.z/y/x, the register tile (vthreads and inner parts) unrolled. Returns the innermost
// thread leaf (where the accumulator is computed) and the block's thread extents.
struct GpuOutputTiles {
  te::IterVar attach;
  ThreadExtents threads;
};
GpuOutputTiles TileNchwOutput(te::Stage& out, const std::vector<te::IterVar>& leading, const te::IterVar& channels,
                              const Config& cfg);
// The same over given row and column leaves (Winograd's tile rows and columns), with `innermost`
// leaves (unrolled) inside the register tile.
GpuOutputTiles TileNchwOutput(te::Stage& out, const std::vector<te::IterVar>& leading, const te::IterVar& channels,
                              const te::IterVar& rows, const te::IterVar& cols, const Config& cfg,
                              const std::vector<te::IterVar>& innermost);

// Bytes of the padded-input tile a block stages per reduction step: channels x rows x columns
// of a window of `threads_y x inner_y` rows (stride, kernel rows per step, dilation) and likewise
// for columns; clipped to the padded input.
int64_t InputTileElements(const Conv2dParams& c, int64_t channels, int64_t rows_out, int64_t cols_out,
                          int64_t kernel_rows, int64_t kernel_cols);

// The knobs every CUDA template shares: TVM's auto_unroll_max_step.
void DefineUnrollKnob(ConfigSpace* space);
// The knobs of a tiled matrix product (dense_cuda, batch_matmul_cuda): tile_y over `rows` and
// tile_x over `cols` as (block, thread, inner), tile_k over `k` as (outer step staged in shared
// memory, inner), and the unroll knob; filtered to configs whose threads and register tile the
// target allows and whose staged rows and columns fit in shared memory.
void DefineMatmulTiles(ConfigSpace* space, int64_t rows, int64_t cols, int64_t k, const Target& t);

// Limits a config must meet on every card the target may be (threads, z threads, local tile),
// as a space filter; templates add their shared-memory estimate.
bool WithinThreadLimits(const Target& t, int64_t tz, int64_t ty, int64_t tx, int64_t local_elements);

// The (block, thread, inner) triple for `extent` the fallbacks start from: inner <= max_inner and
// thread <= max_thread, both divisors, preferring more threads.
std::vector<int64_t> FallbackTriple(int64_t extent, int64_t max_thread, int64_t max_inner);

}  // namespace tunefarm::compiler

#endif  // TUNEFARM_COMPILER_SCHEDULE_TEMPLATES_GPU_TEMPLATE_UTIL_H_
