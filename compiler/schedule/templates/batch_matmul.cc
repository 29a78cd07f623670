// batch_matmul: a batched product of two activations (attention's Q K^T and A V, the heads and the
// batch folded into b), with fused epilogues:
//
//   a [B, M, K]   b [B, K, N]   bias [N]   residual, out [B, M, N]
//   out[b, m, n] = sum_k a[b, m, k] * b[b, k, n]
//
// A register tile of tile_m rows x tile_n columns (whole vectors) accumulates over k: each
// broadcast a[b, m, k] meets the tile_n / lanes vectors of b's row k, and each vector of b feeds
// tile_m FMAs, as dense_pack's row tiles do. b's columns are padded with zeros to a multiple of
// tile_n (a copy of K x N per batch, small beside the M x K x N product) so every tile loads whole
// vectors; rows past M read row M - 1 again and are not stored. Loops: (batch x row tiles)
// parallel, then the column chunks: a row tile of a stays in registers' reach while b's columns
// (K x N, tens of KB for attention) stream from L2.
#include "compiler/ir/ir_operators.h"
#include "compiler/schedule/op_template.h"
#include "compiler/schedule/templates/template_util.h"

namespace tunefarm::compiler {
namespace {

using ir::Expr;
using ir::Tensor;

int64_t RoundUp(int64_t n, int64_t tile) { return (n + tile - 1) / tile * tile; }

class BatchMatmul final : public OpTemplate {
 public:
  const char* name() const override { return "batch_matmul"; }
  Status Check(const Workload& w) const override { return CheckBatchMatmul(w, name(), /*int8_ok=*/true); }

  ConfigSpace Space(const Workload& w, const Target& t) const override {
    const BatchMatmulParams& p = w.batch_matmul;
    ConfigSpace space(w.Key() + " on " + t.ToString());
    space.DefineOther("tile_n", VectorColumnTiles(t));
    space.DefineOther("tile_m", RowTiles(p.m));
    space.DefineSplit("tile_k", p.k, 2, SplitPolicy::kFactors, 16);
    space.DefineAnnotate("parallel", {"outer", "none"});
    // The accumulators must fit in registers: a spilled tile is slower than a smaller one.
    const int64_t lanes = t.vector_lanes, max_acc = MaxAccumulators(t);
    space.AddFilter([lanes, max_acc](const Config& cfg) {
      return cfg.Int("tile_m") * ((cfg.Int("tile_n") + lanes - 1) / lanes) <= max_acc;
    });
    return space;
  }

  Result<Config> Fallback(const Workload& w, const Target& t, const ConfigSpace& space) const override {
    const BatchMatmulParams& p = w.batch_matmul;
    const int64_t lanes = t.vector_lanes;
    // Two vectors of columns unless padding to them wastes more than one (ViT's 197 columns: 208
    // with one vector, 224 with two); narrow products take what covers them.
    int64_t n_bn = RoundUp(p.n, 2 * lanes) - RoundUp(p.n, lanes) >= lanes ? lanes : 2 * lanes;
    if (p.n < lanes) n_bn = p.n <= 4 && lanes > 4 ? 4 : (p.n <= 8 && lanes > 8 ? 8 : lanes);
    int64_t m_bn = 1;
    for (int64_t v : RowTiles(p.m)) {
      if (v <= (lanes >= 16 ? 8 : 4)) m_bn = v;
    }
    const int64_t k_bn = LargestDivisorAtMost(p.k, m_bn > 4 ? 4 : 8);
    return space.FromValues(
        {{"tile_n", {n_bn}}, {"tile_m", {m_bn}}, {"tile_k", {p.k / k_bn, k_bn}}, {"parallel", {FallbackParallel(w)}}});
  }

  KernelDef Instantiate(const Workload& w, const Epilogue& ep, const Config& cfg, const Target& t) const override {
    const BatchMatmulParams& p = w.batch_matmul;
    const int64_t n_bn = cfg.Int("tile_n"), m_bn = cfg.Int("tile_m"), k_bn = cfg.Inner("tile_k");
    const int64_t cols = RoundUp(p.n, n_bn), rows = RoundUp(p.m, m_bn);
    KernelDef def;
    Tensor a = te::Placeholder("a", {p.batch, p.m, p.k}, DataTypeOf(w));
    Tensor b = te::Placeholder("b", {p.batch, p.k, p.n}, WeightTypeOf(w));
    def.args = {a, b};
    def.roles = {BufferRole::kInput, BufferRole::kInput};
    const EpilogueArgs epi = DeclareEpilogueArgs(ep, {p.n}, {p.batch, p.m, p.n}, &def, &w);
    Tensor b_padded = cols == p.n ? b : te::Compute("b_padded", {p.batch, p.k, cols}, [&](const std::vector<Expr>& i) {
      // The padded columns are computed and never stored: any value of b's type.
      const Expr zero = b->dtype.is_float() ? Expr(0.0f) : ir::cast(b->dtype, Expr(int64_t(0)));
      return ir::select(i[2] < Expr(p.n), ClampedRead(b, i), zero);
    });
    auto rk = te::MakeIterVar("k", p.k, true);
    Tensor product = te::ComputeReduce("batch_matmul", {p.batch, rows, cols}, te::ReduceKind::kSum, {rk},
                                       [&](const std::vector<Expr>& i) {
                                         const Expr row = rows == p.m ? i[1] : ir::min(i[1], Expr(p.m - 1));
                                         return MultiplyOperands(w, ep, epi, te::Read(a, {i[0], row, te::AxisExpr(rk)}),
                                                                 te::Read(b_padded, {i[0], te::AxisExpr(rk), i[2]}));
                                       });
    // The real rows and columns of the whole tiles, through the epilogue (a copy without one).
    Tensor out = FusedEpilogue(product, ep, epi, [](const std::vector<Expr>& i) { return std::vector<Expr>{i[2]}; },
                               {p.batch, p.m, p.n});
    def.args.push_back(out);
    def.roles.push_back(BufferRole::kOutput);

    def.schedule = std::make_unique<te::Schedule>(std::vector<Tensor>{out});
    te::Schedule& s = *def.schedule;
    te::Stage& o = s[out];
    const te::IterVar batch = o.axes[0];
    auto [mo, mi] = o.split(o.axes[1], m_bn);
    auto [no, ni] = o.split(o.axes[2], n_bn);
    // Row tiles outside column chunks: the column loop stays a plain loop, so the guard of a
    // partial last chunk (197 columns) is peeled off and the stores stay vectors; fused with the
    // batch it would be a modulus the peeling cannot see through.
    o.reorder({batch, mo, no, mi, ni});
    const te::IterVar outer = o.fuse(batch, mo);
    if (cfg.Annotation("parallel") == "outer") o.parallel(outer);
    VectorizeByLanes(o, ni, n_bn, t.vector_lanes);
    te::Stage& c = s[product];
    c.compute_at(o, no);
    auto [ko, ki] = c.split(c.reduce_axes[0], k_bn);
    c.reorder({c.axes[0], ko, ki, c.axes[1], c.axes[2]});
    c.unroll(ki);
    c.unroll(c.axes[1]);
    VectorizeByLanes(c, c.axes[2], n_bn, t.vector_lanes);
    if (b_padded != b) {
      te::Stage& pad = s[b_padded];
      pad.parallel(pad.fuse(pad.axes[0], pad.axes[1]));
      VectorizeByLanes(pad, pad.axes[2], cols, t.vector_lanes);
    }
    return def;
  }
};

}  // namespace

const OpTemplate* BatchMatmulTemplate() {
  static const BatchMatmul kTemplate;
  return &kTemplate;
}

}  // namespace tunefarm::compiler
