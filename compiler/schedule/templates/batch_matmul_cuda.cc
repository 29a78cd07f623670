// batch_matmul_cuda: a batched product of two activations on NVIDIA GPUs, with fused epilogues.
//
//   a [B, M, K]   b [B, K, N]   bias [N]   residual, out [B, M, N]
//
// The batch is blockIdx.z; rows and columns split into (block, thread, inner) as dense_cuda's
// rows and features do, each thread keeping its (inner rows x inner columns) outputs in
// registers. k splits into (outer, inner): per outer step the block stages its rows of a and its
// columns of b (tile_k deep; consecutive threads load consecutive columns of b's rows) in shared
// memory, synchronizes, and accumulates.
#include "compiler/schedule/op_template.h"
#include "compiler/schedule/templates/gpu_template_util.h"
#include "compiler/schedule/templates/template_util.h"

namespace tunefarm::compiler {
namespace {

using ir::Expr;
using ir::Tensor;

class BatchMatmulCuda final : public OpTemplate {
 public:
  const char* name() const override { return "batch_matmul_cuda"; }
  Status Check(const Workload& w) const override { return CheckBatchMatmul(w, name(), /*int8_ok=*/true); }

  ConfigSpace Space(const Workload& w, const Target& t) const override {
    const BatchMatmulParams& p = w.batch_matmul;
    ConfigSpace space(w.Key() + " on " + t.ToString());
    DefineMatmulTiles(&space, p.m, p.n, p.k, t);
    return space;
  }

  Result<Config> Fallback(const Workload& w, const Target& t, const ConfigSpace& space) const override {
    const BatchMatmulParams& p = w.batch_matmul;
    // 8 x 32 threads, 2 x 2 outputs each where the extents allow.
    std::vector<int64_t> y = FallbackTriple(p.m, 8, 2);
    std::vector<int64_t> x = FallbackTriple(p.n, 32, 2);
    int64_t k = LargestDivisorAtMost(p.k, 16);
    while (k > 1 && (y[1] * y[2] + x[1] * x[2]) * k * 4 > t.gpu.max_shared_memory_per_block) {
      k = LargestDivisorAtMost(p.k, k - 1);
    }
    return space.FromValues({{"tile_y", y}, {"tile_x", x}, {"tile_k", {p.k / k, k}}, {"auto_unroll_max_step", {512}}});
  }

  KernelDef Instantiate(const Workload& w, const Epilogue& ep, const Config& cfg, const Target&) const override {
    const BatchMatmulParams& p = w.batch_matmul;
    KernelDef def;
    Tensor a = te::Placeholder("a", {p.batch, p.m, p.k}, DataTypeOf(w));
    Tensor b = te::Placeholder("b", {p.batch, p.k, p.n}, WeightTypeOf(w));
    def.args = {a, b};
    def.roles = {BufferRole::kInput, BufferRole::kInput};
    const EpilogueArgs epi = DeclareEpilogueArgs(ep, {p.n}, {p.batch, p.m, p.n}, &def, &w);
    auto rk = te::MakeIterVar("k", p.k, true);
    Tensor product = te::ComputeReduce(
        "batch_matmul", {p.batch, p.m, p.n}, te::ReduceKind::kSum, {rk}, [&](const std::vector<Expr>& i) {
          return MultiplyOperands(w, ep, epi, te::Read(a, {i[0], i[1], te::AxisExpr(rk)}),
                                  te::Read(b, {i[0], te::AxisExpr(rk), i[2]}));
        });
    const bool has_epilogue = HasEpilogue(ep);
    Tensor out = has_epilogue ? FusedEpilogue(product, ep, epi,
                                              [](const std::vector<Expr>& i) { return std::vector<Expr>{i[2]}; })
                              : product;
    def.args.push_back(out);
    def.roles.push_back(BufferRole::kOutput);
    def.auto_unroll_max_step = cfg.Int("auto_unroll_max_step");
    def.schedule = std::make_unique<te::Schedule>(std::vector<Tensor>{out});
    te::Schedule& s = *def.schedule;
    Tensor acc = LocalAccumulator(s, product, has_epilogue);
    Tensor a_shared = s.cache_read(a, ir::MemoryScope::kShared, {acc});
    Tensor b_shared = s.cache_read(b, ir::MemoryScope::kShared, {acc});

    te::Stage& o = s[out];
    const te::IterVar batch = o.axes[0];
    TiledAxis y = SplitBlockThreadInner(o, o.axes[1], cfg.Get("tile_y"));
    TiledAxis x = SplitBlockThreadInner(o, o.axes[2], cfg.Get("tile_x"));
    o.reorder({batch, y.block, x.block, y.thread, x.thread, y.inner, x.inner});
    o.bind(batch, ir::ForKind::kGpuBlockZ);
    o.bind(y.block, ir::ForKind::kGpuBlockY);
    o.bind(x.block, ir::ForKind::kGpuBlockX);
    o.bind(y.thread, ir::ForKind::kGpuThreadY);
    o.bind(x.thread, ir::ForKind::kGpuThreadX);
    o.unroll(y.inner);
    o.unroll(x.inner);

    te::Stage& c = s[acc];
    c.compute_at(o, x.thread);
    auto [ko, ki] = c.split(c.reduce_axes[0], cfg.Inner("tile_k"));
    c.reorder({ko, ki, c.axes[0], c.axes[1], c.axes[2]});
    c.unroll(c.axes[1]);
    c.unroll(c.axes[2]);
    FetchIntoSharedAt(s, {a_shared, b_shared}, c, ko, {1, cfg.Get("tile_y")[1], cfg.Get("tile_x")[1]});
    return def;
  }
};

}  // namespace

const OpTemplate* BatchMatmulCudaTemplate() {
  static const BatchMatmulCuda kTemplate;
  return &kTemplate;
}

}  // namespace tunefarm::compiler
