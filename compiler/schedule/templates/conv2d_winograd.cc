// conv2d_nchwc_winograd: 3x3 stride-1 convolutions on CPUs by Winograd F(m x m, 3 x 3)
// (tunefarm/compiler/winograd.h) in the blocked NCHW[x]c layout of conv2d_nchwc, so the two are
// interchangeable node by node:
//
//   data   [N, C/ic_bn, H, W, ic_bn]
//   kernel [alpha, alpha, K/oc_bn, C/ic_bn, ic_bn, oc_bn]   U = G g G^T, transformed at compile time
//   bias   [K/oc_bn, oc_bn]   residual, out [N, K/oc_bn, OH, OW, oc_bn]     alpha = m + 2
//
// The output is cut into m x m tiles (TH x TW per image); m is a knob (2 or 4: 2.25x or 4x fewer
// multiplications than direct convolution, for larger transforms and edge waste; winograd.h says
// why not 6).
//   1. data_pack  V[e, u, n, th, tw, c] = (B^T d B)[e][u] of each tile's alpha x alpha input
//      window d, once for the whole input, in parallel over tile rows. Per (tile, channel block)
//      the window is copied out with the padding as zeros (padding fused: no padded copy of the
//      input), then transformed in two passes -- columns, then rows --, each an unrolled sum of
//      constant multiples vectorized over the channel block: 2 alpha nnz(B) terms per tile
//      instead of nnz(B)^2 done in one pass.
//   2. bgemm  M[n, kc, th, tw, e, u, :] = sum_c U[e, u, kc, c, :] V[e, u, n, th, tw, c]: for a
//      block of tile_th x tile_tw tiles and one output-channel block, alpha^2 small GEMMs, each
//      with a register tile of (tiles x oc_bn / lanes) vector accumulators that broadcast one V
//      value per tile and multiply it by a vector of U -- the inner kernel of conv2d_nchwc.
//   3. inverse  S = M A (rows), then out = A^T S + epilogue, per tile, vectorized over oc_bn:
//      the output is written once, with bias, residual and activation applied (epilogue fused).
// bgemm and the inverse run per block inside the parallel loop over (image, channel block[,
// tile rows]), so M stays in L1/L2; only V round-trips through memory.
#include <algorithm>

#include "compiler/schedule/op_template.h"
#include "compiler/schedule/templates/template_util.h"
#include "tunefarm/compiler/winograd.h"

namespace tunefarm::compiler {
namespace {

using ir::Expr;
using ir::Tensor;

// Tiles per GEMM block along a tile row and across tile rows (non-divisible: a guarded tail).
const std::vector<int64_t> kBlockColumns = {1, 2, 3, 4, 6, 8, 12};
const std::vector<int64_t> kBlockRows = {1, 2, 3, 4};
// The per-block buffers (M, S) stay on the stack: codegen moves larger ones to the heap.
constexpr int64_t kBlockBufferFloats = 16 * 1024;

struct Tiling {
  int64_t m, alpha, th, tw;  // tile size, window size, tiles per image: rows, columns
};
Tiling TilingFor(const Conv2dParams& c, int64_t m) {
  return {m, m + 2, (c.out_height() + m - 1) / m, (c.out_width() + m - 1) / m};
}

class Conv2dWinogradNCHWc final : public OpTemplate {
 public:
  const char* name() const override { return "conv2d_nchwc_winograd"; }
  Status Check(const Workload& w) const override {
    TUNEFARM_RETURN_IF_ERROR(CheckConv2d(w, name()));
    if (!IsWinogradConv(w.conv)) {
      return Status::InvalidArgument(
          std::string(name()) + " computes 3x3, stride-1, dilation-1, ungrouped convolutions; use conv2d_nchwc for " +
          w.Key());
    }
    return Status::OK();
  }

  ConfigSpace Space(const Workload& w, const Target& t) const override {
    const Conv2dParams& c = w.conv;
    ConfigSpace space(w.Key() + " on " + t.ToString());
    std::vector<int64_t> tiles;
    for (int m : kWinogradTiles) {
      if (WinogradTileFits(c, m)) tiles.push_back(m);
    }
    space.DefineOther("tile_m", tiles);
    const int lanes = t.vector_lanes;
    DefineChannelBlocks(&space, c.in_channels, c.out_channels, lanes);
    space.DefineOther("tile_th", kBlockRows);
    space.DefineOther("tile_tw", kBlockColumns);
    space.DefineAnnotate("parallel", {"oc", "oc_th"});
    const int max_acc = MaxAccumulators(t);
    space.AddFilter([c, lanes, max_acc](const Config& cfg) {
      const Tiling tiling = TilingFor(c, cfg.Int("tile_m"));
      const int64_t rows = cfg.Int("tile_th"), cols = cfg.Int("tile_tw"), oc_bn = cfg.Inner("tile_oc");
      if (rows > tiling.th || cols > tiling.tw) return false;  // no block larger than the image
      const int64_t vectors = (oc_bn + lanes - 1) / lanes;
      if (rows * cols * vectors > max_acc) return false;
      return rows * cols * tiling.alpha * tiling.alpha * oc_bn <= kBlockBufferFloats;
    });
    return space;
  }

  // The channel blocks of conv2d_nchwc's fallback (so the layout between neighbours matches),
  // the tile size that does the least work for the output (fewer multiplications, against the
  // tiles wasted at the edges), and a register tile of about 12-16 accumulators along a tile row.
  Result<Config> Fallback(const Workload& w, const Target& t, const ConfigSpace& space) const override {
    const Conv2dParams& c = w.conv;
    const int64_t lanes = t.vector_lanes;
    const int64_t oc_bn = FallbackChannelBlock(c.out_channels, int(lanes));
    const int64_t ic_bn = FallbackChannelBlock(c.in_channels, int(lanes));
    const int64_t vectors = (oc_bn + lanes - 1) / lanes;
    const int64_t m = WinogradFallbackTile(c);  // what ChooseImplementation estimates too
    const Tiling tiling = TilingFor(c, m);
    const int64_t budget = std::min<int64_t>(MaxAccumulators(t) / vectors, 16);
    auto largest_at_most = [](const std::vector<int64_t>& options, int64_t limit) {
      int64_t best = options.front();
      for (int64_t o : options) {
        if (o <= limit) best = o;
      }
      return best;
    };
    auto fits = [&](int64_t rows, int64_t cols) {
      return rows * cols * (m + 2) * (m + 2) * oc_bn <= kBlockBufferFloats;
    };
    int64_t cols = largest_at_most(kBlockColumns, std::min(tiling.tw, budget));
    while (cols > 1 && !fits(1, cols)) cols = largest_at_most(kBlockColumns, cols - 1);
    int64_t rows = largest_at_most(kBlockRows, std::min(tiling.th, budget / cols));
    while (rows > 1 && !fits(rows, cols)) rows = largest_at_most(kBlockRows, rows - 1);
    return space.FromValues({{"tile_m", {m}},
                             {"tile_ic", {c.in_channels / ic_bn, ic_bn}},
                             {"tile_oc", {c.out_channels / oc_bn, oc_bn}},
                             {"tile_th", {rows}},
                             {"tile_tw", {cols}},
                             {"parallel", {0}}});
  }

  // Measured (bench/RESULTS.md, "Winograd on CPUs"): the fallback runs the ResNet-18 3x3 layers
  // with 16 or more tiles per image 1.9-2.4x faster than direct convolution's fallback; with 4
  // tiles (7x7 outputs) the GEMMs are too small to reuse the transformed weights, which are 4x
  // the 3x3 ones, and it runs at half direct convolution's speed.
  double UntunedSpeedup(const Workload& w, const Target&) const override {
    // Few input channels (an RGB image) leave the transformed product too short to amortize the
    // input transform: the first 3x3 of a U-Net, 3 -> 16 at 128x128, took 0.98 ms by Winograd's
    // fallback and 0.21 ms by the direct one.
    if (w.conv.in_channels < 8) return 0.5;
    const Tiling tiling = TilingFor(w.conv, WinogradFallbackTile(w.conv));
    return w.conv.batch * tiling.th * tiling.tw >= 16 ? 2.0 : 0.5;
  }

  Blocks ActivationBlocks(const Workload&, const Config& c) const override {
    return {c.Inner("tile_ic"), c.Inner("tile_oc")};
  }

  KernelDef Instantiate(const Workload& w, const Epilogue& ep, const Config& cfg, const Target& t) const override {
    const Conv2dParams& c = w.conv;
    const Tiling tiling = TilingFor(c, cfg.Int("tile_m"));
    const WinogradMatrices& wm = **WinogradFor(int(tiling.m));
    const int alpha = int(tiling.alpha);
    const int64_t m = tiling.m, oh = c.out_height(), ow = c.out_width();
    const int64_t ic_bn = cfg.Inner("tile_ic"), oc_bn = cfg.Inner("tile_oc");
    const int64_t ic_chunks = c.in_channels / ic_bn, oc_chunks = c.out_channels / oc_bn;
    const int64_t block_rows = cfg.Int("tile_th"), block_cols = cfg.Int("tile_tw");
    const int lanes = t.vector_lanes;

    KernelDef def;
    Tensor data = te::Placeholder("data", {c.batch, ic_chunks, c.height, c.width, ic_bn});
    Tensor kernel = te::Placeholder("kernel_winograd", {alpha, alpha, oc_chunks, ic_chunks, ic_bn, oc_bn});
    def.args = {data, kernel};
    def.roles = {BufferRole::kInput, BufferRole::kWeight};
    def.winograd_tile = int(m);
    EpilogueArgs epi = DeclareEpilogueArgs(ep, {oc_chunks, oc_bn}, {c.batch, oc_chunks, oh, ow, oc_bn}, &def);

    // d[n, th, tw, cc, r, s, cb]: the input window of a tile, zero outside the image.
    const std::vector<int64_t> window_shape = {c.batch, tiling.th, tiling.tw, ic_chunks, alpha, alpha, ic_bn};
    Tensor window = te::Compute("input_tile", window_shape, [&](const std::vector<Expr>& i) {
      Expr h = i[1] * Expr(m) + i[4] - Expr(c.pad_top);
      Expr x = i[2] * Expr(m) + i[5] - Expr(c.pad_left);
      Expr inside = h >= Expr(0) && h < Expr(c.height) && x >= Expr(0) && x < Expr(c.width);
      return ir::select(inside, ClampedRead(data, {i[0], i[3], h, x, i[6]}), Expr(0.0f));
    });
    // (B^T d)[e][s] = sum_r B[r][e] d[r][s]
    Tensor columns = te::Compute("input_tile_bt", window_shape, [&](const std::vector<Expr>& i) {
      Expr sum = Expr(0.0f);
      for (int r = 0; r < alpha; ++r) {
        sum = sum + te::Read(window, {i[0], i[1], i[2], i[3], Expr(int64_t(r)), i[5], i[6]}) *
                        WinogradEntry(wm, &WinogradMatrices::b, r, alpha, i[4]);
      }
      return sum;
    });
    // V[e, u, n, th, tw, cc, cb] = sum_s (B^T d)[e][s] B[s][u]
    Tensor packed = te::Compute(
        "data_pack", {alpha, alpha, c.batch, tiling.th, tiling.tw, ic_chunks, ic_bn}, [&](const std::vector<Expr>& i) {
          Expr sum = Expr(0.0f);
          for (int s = 0; s < alpha; ++s) {
            sum = sum + te::Read(columns, {i[2], i[3], i[4], i[5], i[0], Expr(int64_t(s)), i[6]}) *
                            WinogradEntry(wm, &WinogradMatrices::b, s, alpha, i[1]);
          }
          return sum;
        });
    // M[n, kc, th, tw, e, u, kb] = sum_c U[e, u, kc, c, kb] V[e, u, n, th, tw, c]
    auto rcc = te::MakeIterVar("icc", ic_chunks, true);
    auto rcb = te::MakeIterVar("icb", ic_bn, true);
    Tensor product = te::ComputeReduce(
        "bgemm", {c.batch, oc_chunks, tiling.th, tiling.tw, alpha, alpha, oc_bn}, te::ReduceKind::kSum, {rcc, rcb},
        [&](const std::vector<Expr>& i) {
          return te::Read(packed, {i[4], i[5], i[0], i[2], i[3], te::AxisExpr(rcc), te::AxisExpr(rcb)}) *
                 te::Read(kernel, {i[4], i[5], i[1], te::AxisExpr(rcc), te::AxisExpr(rcb), i[6]});
        });
    // (M A)[r][vw] = sum_s M[r][s] A[s][vw]
    Tensor rows = te::Compute(
        "inverse_rows", {c.batch, oc_chunks, tiling.th, tiling.tw, alpha, m, oc_bn}, [&](const std::vector<Expr>& i) {
          Expr sum = Expr(0.0f);
          for (int s = 0; s < alpha; ++s) {
            if (WinogradRowIsZero(wm, &WinogradMatrices::a, s, int(m))) continue;
            sum = sum + te::Read(product, {i[0], i[1], i[2], i[3], i[4], Expr(int64_t(s)), i[6]}) *
                            WinogradEntry(wm, &WinogradMatrices::a, s, int(m), i[5]);
          }
          return sum;
        });
    // conv[n, k, h, w] = (A^T M A)[h % m][w % m] of tile (h / m, w / m)
    Tensor conv = te::Compute("conv", {c.batch, oc_chunks, oh, ow, oc_bn}, [&](const std::vector<Expr>& i) {
      Expr th = i[2] / Expr(m), vh = i[2] % Expr(m), tw = i[3] / Expr(m), vw = i[3] % Expr(m);
      Expr sum = Expr(0.0f);
      for (int r = 0; r < alpha; ++r) {
        if (WinogradRowIsZero(wm, &WinogradMatrices::a, r, int(m))) continue;
        sum = sum + te::Read(rows, {i[0], i[1], th, tw, Expr(int64_t(r)), vw, i[4]}) *
                        WinogradEntry(wm, &WinogradMatrices::a, r, int(m), vh);
      }
      return sum;
    });
    const bool has_epilogue = HasEpilogue(ep);
    Tensor out = has_epilogue ? FusedEpilogue(conv, ep, epi,
                                              [](const std::vector<Expr>& i) {
                                                return std::vector<Expr>{i[1], i[4]};
                                              })
                              : conv;
    def.args.push_back(out);
    def.roles.push_back(BufferRole::kOutput);
    def.schedule = std::make_unique<te::Schedule>(std::vector<Tensor>{out});
    te::Schedule& s = *def.schedule;
    if (has_epilogue) s.compute_inline(conv);  // the inverse transform feeds the epilogue directly

    // 1. The input transform: parallel over (image, tile row); per (tile, channel block) the
    // window, its column pass and its row pass, unrolled over the window, vectorized over cb.
    te::Stage& v = s[packed];
    v.reorder({v.axes[2], v.axes[3], v.axes[4], v.axes[5], v.axes[0], v.axes[1], v.axes[6]});
    v.parallel(v.fuse(v.axes[2], v.axes[3]));
    v.unroll(v.axes[0]);
    v.unroll(v.axes[1]);
    VectorizeByLanes(v, v.axes[6], ic_bn, lanes);
    te::Stage& bt = s[columns];
    bt.compute_at(v, v.axes[5]);
    bt.unroll(bt.axes[4]);
    bt.unroll(bt.axes[5]);
    VectorizeByLanes(bt, bt.axes[6], ic_bn, lanes);
    te::Stage& d = s[window];
    d.compute_at(bt, bt.axes[0]);
    d.unroll(d.axes[4]);
    d.unroll(d.axes[5]);
    VectorizeByLanes(d, d.axes[6], ic_bn, lanes);

    // 3. The output: m x m tiles in blocks of block_rows x block_cols tiles, parallel over
    // (image, channel block[, block row]); each tile's outputs unrolled, vectorized over kb.
    te::Stage& o = s[out];
    auto [th, vh] = o.split(o.axes[2], m);
    auto [tw, vw] = o.split(o.axes[3], m);
    auto [tho, thi] = o.split(th, block_rows);
    auto [two, twi] = o.split(tw, block_cols);
    o.reorder({o.axes[0], o.axes[1], tho, two, thi, twi, vh, vw, o.axes[4]});
    te::IterVar outer = o.fuse(o.axes[0], o.axes[1]);
    if (cfg.Annotation("parallel") == "oc_th") outer = o.fuse(outer, tho);
    o.parallel(outer);
    o.unroll(vh);
    o.unroll(vw);
    VectorizeByLanes(o, o.axes[4], oc_bn, lanes);

    // The row pass of the inverse for the whole block, then the column pass per output tile.
    te::Stage& ir_rows = s[rows];
    ir_rows.compute_at(o, two);
    ir_rows.unroll(ir_rows.axes[4]);
    ir_rows.unroll(ir_rows.axes[5]);
    VectorizeByLanes(ir_rows, ir_rows.axes[6], oc_bn, lanes);

    // 2. The GEMMs of the block: per (e, u) a register tile of the block's tiles x kb vectors
    // (the accumulator stage, at constant indices once unrolled, so LLVM keeps it in registers
    // whatever the loops around it), accumulated over the input channels, then stored to M.
    Tensor acc = s.cache_write(product);
    te::Stage& p = s[product];
    p.compute_at(ir_rows, ir_rows.axes[0]);
    p.reorder({p.axes[0], p.axes[1], p.axes[4], p.axes[5], p.axes[2], p.axes[3], p.axes[6]});
    p.unroll(p.axes[2]);
    p.unroll(p.axes[3]);
    VectorizeByLanes(p, p.axes[6], oc_bn, lanes);
    te::Stage& a = s[acc];
    a.compute_at(p, p.axes[5]);
    a.reorder({a.axes[0], a.axes[1], a.axes[4], a.axes[5], a.reduce_axes[0], a.reduce_axes[1], a.axes[2], a.axes[3],
               a.axes[6]});
    a.unroll(a.axes[2]);
    a.unroll(a.axes[3]);
    VectorizeByLanes(a, a.axes[6], oc_bn, lanes);
    return def;
  }
};

}  // namespace

const OpTemplate* Conv2dWinogradTemplate() {
  static const Conv2dWinogradNCHWc kTemplate;
  return &kTemplate;
}

}  // namespace tunefarm::compiler
