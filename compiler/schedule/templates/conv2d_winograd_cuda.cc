// conv2d_nchw_winograd_cuda: 3x3 stride-1 convolutions on NVIDIA GPUs by Winograd F(m x m, 3x3)
// (tunefarm/compiler/winograd.h), in one kernel, with fused epilogues.
//
//   data [N, C, H, W]   kernel [alpha, alpha, K, C] (transformed at compile time: U = G g G^T)
//   bias [K]   residual, out [N, K, OH, OW]          m = WinogradTileSize, alpha = m + 2
//
// The output is tiled in m x m tiles (TH x TW per image). Each thread owns a register tile of
// (inner f) channels x (inner y x inner x) Winograd tiles and accumulates their alpha x alpha
// products M = sum_c U (.) V over the input channels; per step of tile_rc channels the block
//   - stages U for its channels in shared memory (a cooperative fetch), and
//   - transforms its input tiles into V = B^T d B straight into shared memory: every thread
//     takes (channel, tile) pairs, loads the alpha x alpha input window into registers (padding
//     and edge tiles read as zeros) and writes the alpha^2 transformed values;
// then every thread multiplies out of shared memory. At the end each thread applies the inverse
// transform Y = A^T M A to its tiles in registers and stores the m x m outputs (epilogue fused).
// The transforms are unrolled, so their constant coefficients fold and zero terms vanish.
//
// Unlike TVM's CUDA Winograd (three kernels with V and M in global memory) nothing round-trips
// through global memory; the price is that each block of output channels transforms its input
// tiles again.
#include <algorithm>

#include "compiler/schedule/op_template.h"
#include "compiler/schedule/templates/gpu_template_util.h"
#include "compiler/schedule/templates/template_util.h"
#include "tunefarm/compiler/winograd.h"

namespace tunefarm::compiler {
namespace {

using ir::Expr;
using ir::Tensor;

struct TileCounts {
  int m, alpha;
  int64_t th, tw;  // tiles per image: rows, columns
};
TileCounts Tiles(const Conv2dParams& c) {
  const int m = WinogradTileSize(c);
  return {m, m + 2, (c.out_height() + m - 1) / m, (c.out_width() + m - 1) / m};
}

// Shared bytes per block: V (alpha^2 x channels x row tiles x column tiles) and U (alpha^2 x
// output channels x channels).
int64_t SharedBytes(const TileCounts& t, int64_t rc, int64_t f_tile, int64_t y_tile, int64_t x_tile) {
  return int64_t(t.alpha) * t.alpha * rc * (y_tile * x_tile + f_tile) * 4;
}

class Conv2dWinogradCuda final : public OpTemplate {
 public:
  const char* name() const override { return "conv2d_nchw_winograd_cuda"; }
  Status Check(const Workload& w) const override {
    TUNEFARM_RETURN_IF_ERROR(CheckConv2d(w, name()));
    if (!IsWinogradConv(w.conv)) {
      return Status::InvalidArgument(
          std::string(name()) +
          " computes 3x3, stride-1, dilation-1, ungrouped convolutions; use conv2d_nchw_cuda "
          "for " +
          w.Key());
    }
    return Status::OK();
  }

  ConfigSpace Space(const Workload& w, const Target& t) const override {
    const Conv2dParams& c = w.conv;
    const TileCounts tiles = Tiles(c);
    ConfigSpace space(w.Key() + " on " + t.ToString());
    space.DefineSplit("tile_f", c.out_channels, 3, SplitPolicy::kFactors);
    space.DefineSplit("tile_y", tiles.th, 3, SplitPolicy::kVerbose, 32);
    space.DefineSplit("tile_x", tiles.tw, 3, SplitPolicy::kVerbose, 32);
    space.DefineSplit("tile_rc", c.in_channels, 2, SplitPolicy::kFactors);
    DefineUnrollKnob(&space);
    const int64_t shared_limit = t.gpu.max_shared_memory_per_block;
    space.AddFilter([t, tiles, shared_limit](const Config& cfg) {
      const auto& f = cfg.Get("tile_f");
      const auto& y = cfg.Get("tile_y");
      const auto& x = cfg.Get("tile_x");
      if (!WithinThreadLimits(t, f[1], y[1], x[1], int64_t(tiles.alpha) * tiles.alpha * f[2] * y[2] * x[2]))
        return false;
      return SharedBytes(tiles, cfg.Inner("tile_rc"), f[1] * f[2], y[1] * y[2], x[1] * x[2]) <= shared_limit;
    });
    return space;
  }

  // About 64-256 threads over tiles (columns, rows) and channels, one tile per thread, the largest
  // channel step (<= 8) whose U and V fit shared memory.
  Result<Config> Fallback(const Workload& w, const Target& t, const ConfigSpace& space) const override {
    const Conv2dParams& c = w.conv;
    const TileCounts tiles = Tiles(c);
    std::vector<int64_t> x = FallbackTriple(tiles.tw, 16, 1);
    std::vector<int64_t> y = FallbackTriple(tiles.th, std::max<int64_t>(1, 32 / x[1]), 1);
    std::vector<int64_t> f = FallbackTriple(c.out_channels, std::max<int64_t>(1, 128 / (x[1] * y[1])), 1);
    int64_t rc = LargestDivisorAtMost(c.in_channels, 8);
    while (rc > 1 && SharedBytes(tiles, rc, f[1], y[1], x[1]) > t.gpu.max_shared_memory_per_block) {
      rc = LargestDivisorAtMost(c.in_channels, rc - 1);
    }
    return space.FromValues({{"tile_f", f},
                             {"tile_y", y},
                             {"tile_x", x},
                             {"tile_rc", {c.in_channels / rc, rc}},
                             {"auto_unroll_max_step", {1500}}});
  }

  KernelDef Instantiate(const Workload& w, const Epilogue& ep, const Config& cfg, const Target&) const override {
    const Conv2dParams& c = w.conv;
    const TileCounts tiles = Tiles(c);
    const WinogradMatrices& wm = **WinogradFor(tiles.m);
    const int alpha = tiles.alpha;
    const int64_t m = tiles.m, oh = c.out_height(), ow = c.out_width();
    KernelDef def;
    Tensor data = te::Placeholder("data", {c.batch, c.in_channels, c.height, c.width});
    Tensor kernel = te::Placeholder("kernel_winograd", {alpha, alpha, c.out_channels, c.in_channels});
    def.args = {data, kernel};
    def.roles = {BufferRole::kInput, BufferRole::kWeight};
    def.winograd_tile = tiles.m;
    EpilogueArgs epi = DeclareEpilogueArgs(ep, {c.out_channels}, {c.batch, c.out_channels, oh, ow}, &def);

    // d[c, n, th, tw, r, s]: the input window of a tile, zero outside the image.
    Tensor window = te::Compute("input_tile", {c.in_channels, c.batch, tiles.th, tiles.tw, alpha, alpha},
                                [&](const std::vector<Expr>& i) {
                                  Expr h = i[2] * Expr(m) + i[4] - Expr(c.pad_top);
                                  Expr x = i[3] * Expr(m) + i[5] - Expr(c.pad_left);
                                  Expr inside = h >= Expr(0) && h < Expr(c.height) && x >= Expr(0) && x < Expr(c.width);
                                  return ir::select(inside, ClampedRead(data, {i[1], i[0], h, x}), Expr(0.0f));
                                });
    // V[e, u, c, n, th, tw] = (B^T d B)[e][u]
    Tensor transformed = te::Compute(
        "data_pack", {alpha, alpha, c.in_channels, c.batch, tiles.th, tiles.tw}, [&](const std::vector<Expr>& i) {
          Expr sum = Expr(0.0f);
          for (int r = 0; r < alpha; ++r) {
            if (WinogradRowIsZero(wm, &WinogradMatrices::b, r, alpha)) continue;
            for (int s = 0; s < alpha; ++s) {
              if (WinogradRowIsZero(wm, &WinogradMatrices::b, s, alpha)) continue;
              sum = sum + te::Read(window, {i[2], i[3], i[4], i[5], Expr(int64_t(r)), Expr(int64_t(s))}) *
                              WinogradEntry(wm, &WinogradMatrices::b, r, alpha, i[0]) *
                              WinogradEntry(wm, &WinogradMatrices::b, s, alpha, i[1]);
            }
          }
          return sum;
        });
    // M[e, u, k, n, th, tw] = sum_c U[e, u, k, c] V[e, u, c, n, th, tw]
    auto rc = te::MakeIterVar("rc", c.in_channels, true);
    Tensor product = te::ComputeReduce("bgemm", {alpha, alpha, c.out_channels, c.batch, tiles.th, tiles.tw},
                                       te::ReduceKind::kSum, {rc}, [&](const std::vector<Expr>& i) {
                                         return te::Read(kernel, {i[0], i[1], i[2], te::AxisExpr(rc)}) *
                                                te::Read(transformed, {i[0], i[1], te::AxisExpr(rc), i[3], i[4], i[5]});
                                       });
    // conv[n, k, h, w] = (A^T M A)[h % m][w % m] of tile (h / m, w / m)
    Tensor conv = te::Compute("conv", {c.batch, c.out_channels, oh, ow}, [&](const std::vector<Expr>& i) {
      Expr th = i[2] / Expr(m), vh = i[2] % Expr(m), tw = i[3] / Expr(m), vw = i[3] % Expr(m);
      Expr sum = Expr(0.0f);
      for (int r = 0; r < alpha; ++r) {
        if (WinogradRowIsZero(wm, &WinogradMatrices::a, r, int(m))) continue;
        for (int s = 0; s < alpha; ++s) {
          if (WinogradRowIsZero(wm, &WinogradMatrices::a, s, int(m))) continue;
          sum = sum + te::Read(product, {Expr(int64_t(r)), Expr(int64_t(s)), i[1], i[0], th, tw}) *
                          WinogradEntry(wm, &WinogradMatrices::a, r, int(m), vh) *
                          WinogradEntry(wm, &WinogradMatrices::a, s, int(m), vw);
        }
      }
      return sum;
    });
    const bool has_epilogue = HasEpilogue(ep);
    Tensor out = AddGpuOutput(&def, conv, ep, epi, cfg);
    te::Schedule& s = *def.schedule;
    if (has_epilogue) s.compute_inline(conv);  // the inverse transform feeds the epilogue directly
    s[product].set_scope(ir::MemoryScope::kLocal);
    s[transformed].set_scope(ir::MemoryScope::kShared);
    s[window].set_scope(ir::MemoryScope::kLocal);
    Tensor kernel_shared = s.cache_read(kernel, ir::MemoryScope::kShared, {product});

    // Output: rows and columns in m x m tiles; channels, tile rows and tile columns split into
    // (block, thread, inner); the m x m outputs of a tile innermost.
    te::Stage& o = s[out];
    auto [th, vh] = o.split(o.axes[2], m);
    auto [tw, vw] = o.split(o.axes[3], m);
    const GpuOutputTiles output = TileNchwOutput(o, {o.axes[0]}, o.axes[1], th, tw, cfg, {vh, vw});
    const ThreadExtents& threads = output.threads;

    // The products accumulate in registers, tile_rc input channels per shared-memory step.
    te::Stage& p = s[product];
    p.compute_at(o, output.attach);
    auto [rco, rci] = p.split(p.reduce_axes[0], cfg.Inner("tile_rc"));
    p.reorder({rco, rci, p.axes[0], p.axes[1], p.axes[2], p.axes[3], p.axes[4], p.axes[5]});
    for (size_t d = 0; d < 6; ++d) p.unroll(p.axes[d]);
    FetchIntoSharedAt(s, {kernel_shared}, p, rco, threads);

    // The input transform, into shared memory: (channel, batch, tile row, tile column) pairs
    // spread over the block's threads; the alpha x alpha outputs of a pair unrolled in registers.
    te::Stage& v = s[transformed];
    v.compute_at(p, rco);
    v.reorder({v.axes[2], v.axes[3], v.axes[4], v.axes[5], v.axes[0], v.axes[1]});
    te::IterVar pairs = v.fuse(v.fuse(v.fuse(v.axes[2], v.axes[3]), v.axes[4]), v.axes[5]);
    const te::IterVar innermost_thread = SplitAcrossThreads(v, pairs, threads);
    v.unroll(v.axes[0]);
    v.unroll(v.axes[1]);

    te::Stage& d = s[window];
    d.compute_at(v, innermost_thread);
    d.unroll(d.axes[4]);
    d.unroll(d.axes[5]);
    return def;
  }
};

}  // namespace

const OpTemplate* Conv2dWinogradCudaTemplate() {
  static const Conv2dWinogradCuda kTemplate;
  return &kTemplate;
}

}  // namespace tunefarm::compiler
