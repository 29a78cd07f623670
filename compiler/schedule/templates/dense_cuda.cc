// dense_cuda: dense layers on NVIDIA GPUs with fused epilogues, tiled through shared memory.
//
//   data [N, K]   weight [O, K] (as stored)   bias [O]   residual, out [N, O]
//
// Batch rows and output features split into (block, thread, inner); each thread keeps its
// (inner rows x inner features) outputs in registers. k splits into (outer, inner): per outer step
// the block stages its rows of data and its rows of weights (tile_k wide, contiguous in memory, so
// consecutive threads load consecutive elements) in shared memory, synchronizes, and accumulates.
// At batch 1 this is a matrix-vector product whose cost is reading the weights once; the tile
// choice decides how well those reads coalesce.
#include "compiler/schedule/op_template.h"
#include "compiler/schedule/templates/gpu_template_util.h"
#include "compiler/schedule/templates/template_util.h"

namespace tunefarm::compiler {
namespace {

using ir::Expr;
using ir::Tensor;

class DenseCuda final : public OpTemplate {
 public:
  const char* name() const override { return "dense_cuda"; }
  Status Check(const Workload& w) const override { return CheckDense(w, name(), /*int8_ok=*/true); }

  ConfigSpace Space(const Workload& w, const Target& t) const override {
    const DenseParams& d = w.dense;
    ConfigSpace space(w.Key() + " on " + t.ToString());
    DefineMatmulTiles(&space, d.batch, d.out_features, d.in_features, t);
    return space;
  }

  Result<Config> Fallback(const Workload& w, const Target& t, const ConfigSpace& space) const override {
    const DenseParams& d = w.dense;
    std::vector<int64_t> y = FallbackTriple(d.batch, 8, 1);
    std::vector<int64_t> x = FallbackTriple(d.out_features, std::max<int64_t>(32, 256 / y[1]), 1);
    if (x[1] < 32 && d.out_features > 32) {  // awkward feature count: up to 64 threads, guarded tail block
      int64_t p = 1;
      while (p * 2 <= std::min<int64_t>(64, d.out_features)) p *= 2;
      x = {(d.out_features + p - 1) / p, p, 1};
    }
    int64_t k = LargestDivisorAtMost(d.in_features, 32);
    while (k > 1 && (y[1] * y[2] + x[1] * x[2]) * k * 4 > t.gpu.max_shared_memory_per_block) {
      k = LargestDivisorAtMost(d.in_features, k - 1);
    }
    return space.FromValues(
        {{"tile_y", y}, {"tile_x", x}, {"tile_k", {d.in_features / k, k}}, {"auto_unroll_max_step", {512}}});
  }

  KernelDef Instantiate(const Workload& w, const Epilogue& ep, const Config& cfg, const Target&) const override {
    const DenseParams& d = w.dense;
    KernelDef def;
    Tensor data = te::Placeholder("data", {d.batch, d.in_features}, DataTypeOf(w));
    Tensor weight = te::Placeholder("weight", {d.out_features, d.in_features}, WeightTypeOf(w));
    def.args = {data, weight};
    def.roles = {BufferRole::kInput, BufferRole::kWeight};
    EpilogueArgs epi = DeclareEpilogueArgs(ep, {d.out_features}, {d.batch, d.out_features}, &def, &w);
    auto rk = te::MakeIterVar("k", d.in_features, true);
    Tensor dense = te::ComputeReduce("dense", {d.batch, d.out_features}, te::ReduceKind::kSum, {rk},
                                     [&](const std::vector<Expr>& i) {
                                       return MultiplyOperands(w, ep, epi, te::Read(data, {i[0], te::AxisExpr(rk)}),
                                                               te::Read(weight, {i[1], te::AxisExpr(rk)}));
                                     });
    const bool has_epilogue = HasEpilogue(ep);
    Tensor out = AddGpuOutput(&def, dense, ep, epi, cfg);
    te::Schedule& s = *def.schedule;
    Tensor acc = LocalAccumulator(s, dense, has_epilogue);
    Tensor data_shared = s.cache_read(data, ir::MemoryScope::kShared, {acc});
    Tensor weight_shared = s.cache_read(weight, ir::MemoryScope::kShared, {acc});

    te::Stage& o = s[out];
    TiledAxis y = SplitBlockThreadInner(o, o.axes[0], cfg.Get("tile_y"));
    TiledAxis x = SplitBlockThreadInner(o, o.axes[1], cfg.Get("tile_x"));
    o.reorder({y.block, x.block, y.thread, x.thread, y.inner, x.inner});
    o.bind(y.block, ir::ForKind::kGpuBlockY);
    o.bind(x.block, ir::ForKind::kGpuBlockX);
    o.bind(y.thread, ir::ForKind::kGpuThreadY);
    o.bind(x.thread, ir::ForKind::kGpuThreadX);
    o.unroll(y.inner);
    o.unroll(x.inner);

    te::Stage& a = s[acc];
    a.compute_at(o, x.thread);
    auto [ko, ki] = a.split(a.reduce_axes[0], cfg.Inner("tile_k"));
    a.reorder({ko, ki, a.axes[0], a.axes[1]});
    a.unroll(a.axes[0]);
    a.unroll(a.axes[1]);
    FetchIntoSharedAt(s, {data_shared, weight_shared}, a, ko, {1, cfg.Get("tile_y")[1], cfg.Get("tile_x")[1]});
    return def;
  }
};

}  // namespace

const OpTemplate* DenseCudaTemplate() {
  static const DenseCuda kTemplate;
  return &kTemplate;
}

}  // namespace tunefarm::compiler
