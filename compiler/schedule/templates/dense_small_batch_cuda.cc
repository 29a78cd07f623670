// dense_small_batch_cuda: dense layers at small batch (a matrix-vector product at batch 1) with a
// cross-thread reduction, and fused epilogues.
//
//   data [N, K]   weight [O, K] (as stored)   bias [O]   residual, out [N, O]
//
// At batch 1 each output is one dot product of length K, and there are often fewer outputs than a
// GPU has threads to spare (resnet's 1000, mobilenet's 1000): splitting outputs alone leaves most
// of the GPU idle or each thread a long serial loop. Here threads_k threads (threadIdx.x) share
// each dot product: thread t sums k = t, t + threads_k, ... (consecutive threads read consecutive
// weights: coalesced), for every batch row at once, then the block adds the threads' partial sums
// with warp shuffles (lower_thread_allreduce.h). Output features split over blocks and threadIdx.y.
//
//   partial[n, o, t] = sum_ko data[n, ko*T + t] * weight[o, ko*T + t]     (registers, per thread)
//   dense[n, o]      = sum_t partial[n, o, t]                             (reduce axis on threadIdx.x)
#include <algorithm>

#include "compiler/schedule/op_template.h"
#include "compiler/schedule/templates/gpu_template_util.h"
#include "compiler/schedule/templates/template_util.h"

namespace tunefarm::compiler {
namespace {

using ir::Expr;
using ir::Tensor;

// Batch rows each thread keeps partial sums for (registers): beyond this dense_cuda's tiles pay.
constexpr int64_t kMaxBatch = 16;

std::vector<int64_t> ThreadsAlongK(int64_t in_features) {
  std::vector<int64_t> options;
  for (int64_t t = 8; t <= 1024; t *= 2) {
    if (t == 8 || t / 2 < in_features) options.push_back(t);
  }
  return options;
}

class DenseSmallBatchCuda final : public OpTemplate {
 public:
  const char* name() const override { return "dense_small_batch_cuda"; }
  Status Check(const Workload& w) const override {
    TUNEFARM_RETURN_IF_ERROR(CheckDense(w, name()));
    if (w.dense.batch > kMaxBatch) {
      return Status::InvalidArgument(std::string(name()) + " keeps every batch row in registers: batch " +
                                     std::to_string(w.dense.batch) + " exceeds " + std::to_string(kMaxBatch) +
                                     " (dense_cuda tiles larger batches)");
    }
    return Status::OK();
  }

  ConfigSpace Space(const Workload& w, const Target& t) const override {
    const DenseParams& d = w.dense;
    ConfigSpace space(w.Key() + " on " + t.ToString());
    space.DefineOther("threads_k", ThreadsAlongK(d.in_features));
    space.DefineSplit("tile_x", d.out_features, 2, SplitPolicy::kPower2, 32);
    DefineUnrollKnob(&space);
    space.AddFilter(
        [t](const Config& cfg) { return WithinThreadLimits(t, 1, cfg.Inner("tile_x"), cfg.Int("threads_k"), 1); });
    return space;
  }

  // Enough threads per dot product that each sums about 8 products (at most 256), and enough
  // outputs per block for 256 threads.
  Result<Config> Fallback(const Workload& w, const Target&, const ConfigSpace& space) const override {
    const DenseParams& d = w.dense;
    const std::vector<int64_t> options = ThreadsAlongK(d.in_features);
    int64_t threads_k = options.front();
    for (int64_t t : options) {
      if (t <= std::max<int64_t>(32, d.in_features / 8) && t <= 256) threads_k = t;
    }
    int64_t per_block = 1;
    while (per_block * 2 * threads_k <= 256 && per_block * 2 <= std::min<int64_t>(32, d.out_features)) per_block *= 2;
    return space.FromValues({{"threads_k", {threads_k}},
                             {"tile_x", {(d.out_features + per_block - 1) / per_block, per_block}},
                             {"auto_unroll_max_step", {512}}});
  }

  KernelDef Instantiate(const Workload& w, const Epilogue& ep, const Config& cfg, const Target&) const override {
    const DenseParams& d = w.dense;
    const int64_t threads_k = cfg.Int("threads_k");
    const int64_t steps = (d.in_features + threads_k - 1) / threads_k;
    KernelDef def;
    Tensor data = te::Placeholder("data", {d.batch, d.in_features});
    Tensor weight = te::Placeholder("weight", {d.out_features, d.in_features});
    def.args = {data, weight};
    def.roles = {BufferRole::kInput, BufferRole::kWeight};
    EpilogueArgs epi = DeclareEpilogueArgs(ep, {d.out_features}, {d.batch, d.out_features}, &def);

    auto ko = te::MakeIterVar("ko", steps, true);
    Tensor partial = te::ComputeReduce(
        "partial", {d.batch, d.out_features, threads_k}, te::ReduceKind::kSum, {ko}, [&](const std::vector<Expr>& i) {
          Expr k = te::AxisExpr(ko) * Expr(threads_k) + i[2];
          if (d.in_features % threads_k == 0) {
            return te::Read(data, {i[0], k}) * te::Read(weight, {i[1], k});
          }
          // The last step's tail: read a valid element, add zero.
          Expr kc = ir::min(k, Expr(d.in_features - 1));
          return ir::Select::Make(k < Expr(d.in_features), te::Read(data, {i[0], kc}) * te::Read(weight, {i[1], kc}),
                                  Expr(0.0f));
        });
    auto rt = te::MakeIterVar("t", threads_k, true);
    Tensor dense = te::ComputeReduce("dense", {d.batch, d.out_features}, te::ReduceKind::kSum, {rt},
                                     [&](const std::vector<Expr>& i) {
                                       return te::Read(partial, {i[0], i[1], te::AxisExpr(rt)});
                                     });
    const bool has_epilogue = HasEpilogue(ep);
    Tensor out = AddGpuOutput(&def, dense, ep, epi, cfg);
    te::Schedule& s = *def.schedule;
    Tensor acc = LocalAccumulator(s, dense, has_epilogue);
    s[partial].set_scope(ir::MemoryScope::kLocal);

    te::Stage& o = s[out];
    auto [xb, xt] = o.split(o.axes[1], cfg.Inner("tile_x"));
    o.reorder({xb, xt, o.axes[0]});
    o.bind(xb, ir::ForKind::kGpuBlockX);
    o.bind(xt, ir::ForKind::kGpuThreadY);
    o.unroll(o.axes[0]);

    // Every thread of a row of the block ends with the same totals for its batch rows.
    te::Stage& a = s[acc];
    a.compute_at(o, xt);
    a.reorder({a.reduce_axes[0], a.axes[0], a.axes[1]});
    a.bind(a.reduce_axes[0], ir::ForKind::kGpuThreadX);
    a.unroll(a.axes[0]);

    te::Stage& p = s[partial];
    p.compute_at(a, a.reduce_axes[0]);
    p.reorder({p.reduce_axes[0], p.axes[0], p.axes[1], p.axes[2]});
    p.unroll(p.axes[0]);
    return def;
  }
};

}  // namespace

const OpTemplate* DenseSmallBatchCudaTemplate() {
  static const DenseSmallBatchCuda kTemplate;
  return &kTemplate;
}

}  // namespace tunefarm::compiler
