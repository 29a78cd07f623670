#include "compiler/schedule/templates/gpu_template_util.h"

#include <algorithm>

#include "compiler/schedule/templates/template_util.h"

namespace tunefarm::compiler {

ir::Tensor PadNCHW(const ir::Tensor& data, const Conv2dParams& c, const ir::Expr& pad_value) {
  const int64_t hp = c.height + c.pad_top + c.pad_bottom, wp = c.width + c.pad_left + c.pad_right;
  if (hp == c.height && wp == c.width) return data;
  const auto& s = data->shape;
  return te::Compute("pad", {s[0], s[1], hp, wp}, [&](const std::vector<ir::Expr>& i) {
    ir::Expr h = i[2] - ir::Expr(c.pad_top), x = i[3] - ir::Expr(c.pad_left);
    ir::Expr inside = h >= ir::Expr(0) && h < ir::Expr(c.height) && x >= ir::Expr(0) && x < ir::Expr(c.width);
    return ir::select(inside, ClampedRead(data, {i[0], i[1], h, x}), pad_value);
  });
}

te::IterVar SplitAcrossThreads(te::Stage& stage, const te::IterVar& fused, const ThreadExtents& threads) {
  static const ir::ForKind kKinds[3] = {ir::ForKind::kGpuThreadZ, ir::ForKind::kGpuThreadY, ir::ForKind::kGpuThreadX};
  te::IterVar rest = fused, innermost;
  for (int d = 2; d >= 0; --d) {  // x first: the innermost piece
    if (threads[size_t(d)] == 1) continue;
    auto [outer, inner] = stage.split(rest, threads[size_t(d)]);
    stage.bind(inner, kKinds[d]);
    if (!innermost) innermost = inner;
    rest = outer;
  }
  return innermost ? innermost : rest;
}

void CooperativeFetch(te::Stage& stage, const ThreadExtents& threads) {
  te::IterVar fused = stage.leaf_order.front();
  for (size_t i = 1; i < stage.axes.size(); ++i) fused = stage.fuse(fused, stage.leaf_order[1]);
  SplitAcrossThreads(stage, fused, threads);
}

void FetchIntoSharedAt(te::Schedule& s, const std::vector<ir::Tensor>& shared, te::Stage& reader, const te::IterVar& at,
                       const ThreadExtents& threads) {
  for (const ir::Tensor& t : shared) {
    te::Stage& st = s[t];
    st.compute_at(reader, at);
    CooperativeFetch(st, threads);
  }
}

TiledAxis SplitBlockThreadInner(te::Stage& stage, const te::IterVar& axis, const std::vector<int64_t>& factors) {
  auto [outer, inner] = stage.split(axis, factors.back());
  auto [rest, thread] = stage.split(outer, ThreadFactor(factors));
  if (factors.size() == 3) return {rest, thread, inner, nullptr};
  auto [block, vthread] = stage.split(rest, factors[1]);
  return {block, thread, inner, vthread};
}

ir::Tensor AddGpuOutput(KernelDef* def, const ir::Tensor& result, const Epilogue& ep, const EpilogueArgs& epi,
                        const Config& cfg) {
  ir::Tensor out =
      HasEpilogue(ep)
          ? FusedEpilogue(result, ep, epi, [](const std::vector<ir::Expr>& i) { return std::vector<ir::Expr>{i[1]}; })
          : result;
  def->args.push_back(out);
  def->roles.push_back(BufferRole::kOutput);
  def->auto_unroll_max_step = cfg.Int("auto_unroll_max_step");
  def->schedule = std::make_unique<te::Schedule>(std::vector<ir::Tensor>{out});
  return out;
}

ir::Tensor LocalAccumulator(te::Schedule& s, const ir::Tensor& result, bool has_epilogue) {
  if (!has_epilogue) return s.cache_write(result, ir::MemoryScope::kLocal);
  s[result].set_scope(ir::MemoryScope::kLocal);
  return result;
}

GpuConvStages StageConvThroughSharedMemory(te::Schedule& s, const ir::Tensor& conv, bool has_epilogue,
                                           const ir::Tensor& input, const ir::Tensor& data, const ir::Tensor& kernel) {
  GpuConvStages st;
  st.acc = LocalAccumulator(s, conv, has_epilogue);
  st.input_shared = s.cache_read(input, ir::MemoryScope::kShared, {st.acc});
  st.kernel_shared = s.cache_read(kernel, ir::MemoryScope::kShared, {st.acc});
  if (input != data) s.compute_inline(input);  // padding happens in the fetch
  return st;
}

GpuOutputTiles TileNchwOutput(te::Stage& o, const std::vector<te::IterVar>& leading, const te::IterVar& channels,
                              const Config& cfg) {
  return TileNchwOutput(o, leading, channels, o.axes[2], o.axes[3], cfg, {});
}

GpuOutputTiles TileNchwOutput(te::Stage& o, const std::vector<te::IterVar>& leading, const te::IterVar& channels,
                              const te::IterVar& rows, const te::IterVar& cols, const Config& cfg,
                              const std::vector<te::IterVar>& innermost) {
  TiledAxis f = SplitBlockThreadInner(o, channels, cfg.Get("tile_f"));
  TiledAxis y = SplitBlockThreadInner(o, rows, cfg.Get("tile_y"));
  TiledAxis x = SplitBlockThreadInner(o, cols, cfg.Get("tile_x"));
  std::vector<te::IterVar> order = leading;
  for (const te::IterVar& iv : {f.block, y.block, x.block, f.thread, y.thread, x.thread, f.vthread, y.vthread,
                                x.vthread, f.inner, y.inner, x.inner}) {
    if (iv) order.push_back(iv);  // a 3-way split has no virtual-thread leaf
  }
  order.insert(order.end(), innermost.begin(), innermost.end());
  o.reorder(order);
  for (const te::IterVar& iv : innermost) o.unroll(iv);
  te::IterVar bz = leading[0];
  for (size_t i = 1; i < leading.size(); ++i) bz = o.fuse(bz, leading[i]);
  bz = o.fuse(bz, f.block);
  o.bind(bz, ir::ForKind::kGpuBlockZ);
  o.bind(y.block, ir::ForKind::kGpuBlockY);
  o.bind(x.block, ir::ForKind::kGpuBlockX);
  o.bind(f.thread, ir::ForKind::kGpuThreadZ);
  o.bind(y.thread, ir::ForKind::kGpuThreadY);
  o.bind(x.thread, ir::ForKind::kGpuThreadX);
  for (const TiledAxis* a : {&f, &y, &x}) {  // the register tile, virtual threads included
    if (a->vthread) o.unroll(a->vthread);
    o.unroll(a->inner);
  }
  return {x.thread,
          {ThreadFactor(cfg.Get("tile_f")), ThreadFactor(cfg.Get("tile_y")), ThreadFactor(cfg.Get("tile_x"))}};
}

int64_t InputTileElements(const Conv2dParams& c, int64_t channels, int64_t rows_out, int64_t cols_out,
                          int64_t kernel_rows, int64_t kernel_cols) {
  const int64_t hp = c.height + c.pad_top + c.pad_bottom, wp = c.width + c.pad_left + c.pad_right;
  int64_t rows = std::min(hp, (rows_out - 1) * c.stride_h + (kernel_rows - 1) * c.dilation_h + 1);
  int64_t cols = std::min(wp, (cols_out - 1) * c.stride_w + (kernel_cols - 1) * c.dilation_w + 1);
  return channels * rows * cols;
}

void DefineUnrollKnob(ConfigSpace* space) { space->DefineOther("auto_unroll_max_step", {0, 512, 1500}); }

void DefineMatmulTiles(ConfigSpace* space, int64_t rows, int64_t cols, int64_t k, const Target& t) {
  space->DefineSplit("tile_y", rows, 3, SplitPolicy::kVerbose, 64);
  space->DefineSplit("tile_x", cols, 3, SplitPolicy::kVerbose, 256);
  space->DefineSplit("tile_k", k, 2, SplitPolicy::kFactors, 64);
  DefineUnrollKnob(space);
  const int64_t shared_limit = t.gpu.max_shared_memory_per_block;
  space->AddFilter([t, shared_limit](const Config& cfg) {
    const auto& y = cfg.Get("tile_y");
    const auto& x = cfg.Get("tile_x");
    if (!WithinThreadLimits(t, 1, y[1], x[1], y[2] * x[2])) return false;
    return (y[1] * y[2] + x[1] * x[2]) * cfg.Inner("tile_k") * 4 <= shared_limit;
  });
}

bool WithinThreadLimits(const Target& t, int64_t tz, int64_t ty, int64_t tx, int64_t local_elements) {
  const int64_t threads = tz * ty * tx;
  return threads <= t.gpu.max_threads_per_block && tz <= 64 && local_elements <= 64 &&
         local_elements * threads <= t.gpu.max_registers_per_block / 2;
}

std::vector<int64_t> FallbackTriple(int64_t extent, int64_t max_thread, int64_t max_inner) {
  int64_t inner = LargestDivisorAtMost(extent, std::max<int64_t>(1, max_inner));
  int64_t thread = LargestDivisorAtMost(extent / inner, std::max<int64_t>(1, max_thread));
  return {extent / (inner * thread), thread, inner};
}

}  // namespace tunefarm::compiler
