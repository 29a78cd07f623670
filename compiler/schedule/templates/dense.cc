// Dense (fully connected) layers: out[n, o] = sum_k data[n, k] * W(o, k), with fused epilogues.
//
// dense_pack: weights packed as [ceil(O/o_bn), K, o_bn] (zero-padded), so the inner loop
//   multiplies one broadcast input by an o_bn-wide weight vector into register accumulators;
//   the layout TVM's dense_pack uses. A non-divisible O is legal: the tail tile is guarded. With
//   more than one row (transformers' and sequence models' projections: the rows are tokens), a
//   tile of n_bn rows (tile_n) shares each weight vector loaded: n_bn x o_bn accumulators, each
//   weight vector read once per n_bn rows instead of once per row. A row count n_bn does not
//   divide (ViT's 197 tokens) is computed over whole tiles, the rows past the end reading the last
//   row again, and only the real rows are stored: no guard inside the k loop. Int8 with K a multiple
//   of n (4 or 2) and a constant input zero point: int8 dot products (template_util.h), the weights
//   [ceil(O/o_bn), K/n, o_bn] int32 words of n k steps (int8 bytes or int16 halves), the k unroll
//   counting words.
// dense_nopack: weights as stored, [O, K]; vectorizes along k into a k_bn-wide partial sum per
//   output (an rfactor written in the compute) and reduces the lanes at the end.
//   data [N, K]   bias [O]   residual, out [N, O]
#include <algorithm>

#include "compiler/ir/ir_operators.h"
#include "compiler/schedule/op_template.h"
#include "compiler/schedule/templates/template_util.h"

namespace tunefarm::compiler {
namespace {

using ir::Expr;
using ir::Tensor;

// data [N, K], then the weight, then the epilogue's bias [O] and residual [N, O].
std::pair<Tensor, EpilogueArgs> DeclareArgs(const Workload& w, const Epilogue& ep, KernelDef* def,
                                            const Tensor& weight) {
  const DenseParams& d = w.dense;
  Tensor data = te::Placeholder("data", {d.batch, d.in_features}, DataTypeOf(w));
  def->args = {data, weight};
  def->roles = {BufferRole::kInput, BufferRole::kWeight};
  return {data, DeclareEpilogueArgs(ep, {d.out_features}, {d.batch, d.out_features}, def, &w)};
}

// The epilogue over dense's first `rows` rows (all of them by default).
Tensor EpilogueStage(const Tensor& dense, const Epilogue& ep, const EpilogueArgs& a, int64_t rows = -1) {
  return FusedEpilogue(
      dense, ep, a, [](const std::vector<Expr>& i) { return std::vector<Expr>{i[1]}; },
      rows < 0 ? std::vector<int64_t>{} : std::vector<int64_t>{rows, dense->shape[1]});
}

class DensePack final : public OpTemplate {
 public:
  const char* name() const override { return "dense_pack"; }
  Status Check(const Workload& w) const override { return CheckDense(w, name(), /*int8_ok=*/true); }

  ConfigSpace Space(const Workload& w, const Target& t) const override {
    const DenseParams& d = w.dense;
    ConfigSpace space(w.Key() + " on " + t.ToString());
    space.DefineOther("tile_o", VectorColumnTiles(t));
    space.DefineSplit("tile_k", d.in_features, 2, SplitPolicy::kFactors, 16);
    space.DefineAnnotate("parallel", {"o", "none"});
    // Row tiles only where there are rows to tile: a one-row layer's space (classifier heads) is
    // the same as before this knob, so its records keep their indices.
    if (d.batch > 1) space.DefineOther("tile_n", RowTiles(d.batch));
    return space;
  }

  Result<Config> Fallback(const Workload& w, const Target& t, const ConfigSpace& space) const override {
    const int64_t k = w.dense.in_features;
    // Up to 8 rows x 2 vectors where the ISA has 32 vector registers (AVX-512: 16 accumulators,
    // each weight vector feeding 8 FMAs), else up to 4 rows (AVX2's 16 registers hold 8
    // accumulators, the weights and the broadcast). The k unroll shrinks as the row tile grows
    // (rows x k steps x vectors FMAs per iteration): 8 rows with 8 k steps ran at a quarter of
    // the speed of 8 rows with 4 on BERT-base's shapes (bench_kernels --filter bert).
    int64_t n_bn = 1;
    for (int64_t v : RowTiles(w.dense.batch)) {
      if (v <= (t.vector_lanes >= 16 ? 8 : 4)) n_bn = v;
    }
    const int64_t k_bn = LargestDivisorAtMost(k, n_bn > 4 ? 4 : 8);
    std::vector<std::pair<std::string, std::vector<int64_t>>> values = {
        {"tile_o", {int64_t(2 * t.vector_lanes)}}, {"tile_k", {k / k_bn, k_bn}}, {"parallel", {FallbackParallel(w)}}};
    if (w.dense.batch > 1) values.push_back({"tile_n", {n_bn}});
    return space.FromValues(values);
  }

  KernelDef Instantiate(const Workload& w, const Epilogue& ep, const Config& cfg, const Target& t) const override {
    const DenseParams& d = w.dense;
    const int64_t o_bn = cfg.Int("tile_o"), k_bn = cfg.Inner("tile_k");
    const int64_t n_bn = d.batch > 1 ? cfg.Int("tile_n") : 1;
    const int64_t rows = (d.batch + n_bn - 1) / n_bn * n_bn;  // whole row tiles
    const bool padded = rows != d.batch;
    const int64_t o_chunks = (d.out_features + o_bn - 1) / o_bn;
    const Int8Products form = Int8FormOf(w, ep, d.in_features, t);
    const bool dot = form != Int8Products::kInt32Vectors;
    const int64_t per_word = ElementsPerWord(form);
    const int64_t k_steps = d.in_features / per_word;  // words of per_word k steps
    const int64_t k_unroll = std::max<int64_t>(1, k_bn / per_word);
    KernelDef def;
    Tensor weight = te::Placeholder("weight", {o_chunks, k_steps, o_bn}, dot ? ir::Type::Int(32) : WeightTypeOf(w));
    auto declared = DeclareArgs(w, ep, &def, weight);
    const Tensor data = declared.first;
    EpilogueArgs epi = declared.second;
    if (dot) {
      epi.compensation = DeclareCompensation({d.out_features}, &def);
      def.weight_word = int(per_word);
    }
    auto rk = te::MakeIterVar("k", k_steps, true);
    Tensor dense =
        te::ComputeReduce("dense", {rows, d.out_features}, te::ReduceKind::kSum, {rk}, [&](const std::vector<Expr>& i) {
          const Expr row = padded ? ir::min(i[0], Expr(d.batch - 1)) : i[0];
          const Expr w_at = te::Read(weight, {i[1] / Expr(o_bn), te::AxisExpr(rk), i[1] % Expr(o_bn)});
          if (dot) {
            return DotProduct(form, InputWord(data, {row}, te::AxisExpr(rk), w, form), w_at);
          }
          return MultiplyOperands(w, ep, epi, te::Read(data, {row, te::AxisExpr(rk)}), w_at);
        });
    // Padded: the real rows of the whole tiles are stored by the epilogue stage (an identity one
    // when the layer has no epilogue); the dot products' compensation is an epilogue too.
    const bool has_epilogue = HasEpilogue(ep) || dot;
    Tensor out = padded ? EpilogueStage(dense, ep, epi, d.batch) : has_epilogue ? EpilogueStage(dense, ep, epi) : dense;
    def.args.push_back(out);
    def.roles.push_back(BufferRole::kOutput);

    def.schedule = std::make_unique<te::Schedule>(std::vector<Tensor>{out});
    te::Schedule& s = *def.schedule;
    Tensor acc = has_epilogue || padded ? dense : s.cache_write(dense);
    te::Stage& o = s[out];
    auto [oo, oi] = o.split(o.axes[1], o_bn);
    if (cfg.Annotation("parallel") == "o") o.parallel(oo);
    te::Stage& c = s[acc];
    if (n_bn > 1) {
      // out: o chunk, row tile, rows, lanes (a weight block stays in cache across the row tiles);
      // the accumulator tile [n_bn, o_bn] is computed per (o chunk, row tile), rows unrolled.
      auto [no, ni] = o.split(o.axes[0], n_bn);
      o.reorder({oo, no, ni, oi});
      VectorizeByLanes(o, oi, o_bn, t.vector_lanes);
      c.compute_at(o, no);
      auto [ko, ki] = c.split(c.reduce_axes[0], k_unroll);
      c.reorder({ko, ki, c.axes[0], c.axes[1]});
      c.unroll(ki);
      c.unroll(c.axes[0]);
      VectorizeByLanes(c, c.axes[1], o_bn, t.vector_lanes);
      return def;
    }
    VectorizeByLanes(o, oi, o_bn, t.vector_lanes);
    c.compute_at(o, oo);
    auto [ko, ki] = c.split(c.reduce_axes[0], k_unroll);
    c.reorder({c.axes[0], ko, ki, c.axes[1]});
    c.unroll(ki);
    VectorizeByLanes(c, c.axes[1], o_bn, t.vector_lanes);
    return def;
  }
};

class DenseNoPack final : public OpTemplate {
 public:
  const char* name() const override { return "dense_nopack"; }
  Status Check(const Workload& w) const override { return CheckDense(w, name()); }

  ConfigSpace Space(const Workload& w, const Target& t) const override {
    const DenseParams& d = w.dense;
    ConfigSpace space(w.Key() + " on " + t.ToString());
    space.DefineSplit("tile_k", d.in_features, 2, SplitPolicy::kFactors, 64);
    space.DefineSplit("tile_o", d.out_features, 2, SplitPolicy::kFactors, 16);
    space.DefineAnnotate("parallel", {"o", "none"});
    return space;
  }

  Result<Config> Fallback(const Workload& w, const Target& t, const ConfigSpace& space) const override {
    int64_t k = w.dense.in_features, o = w.dense.out_features;
    int64_t k_bn = LargestDivisorAtMost(k, 2 * t.vector_lanes);
    int64_t o_bn = LargestDivisorAtMost(o, 4);
    return space.FromValues(
        {{"tile_k", {k / k_bn, k_bn}}, {"tile_o", {o / o_bn, o_bn}}, {"parallel", {FallbackParallel(w)}}});
  }

  KernelDef Instantiate(const Workload& w, const Epilogue& ep, const Config& cfg, const Target& t) const override {
    const DenseParams& d = w.dense;
    const int64_t k_bn = cfg.Inner("tile_k"), o_bn = cfg.Inner("tile_o");
    const int64_t k_chunks = d.in_features / k_bn;
    KernelDef def;
    Tensor weight = te::Placeholder("weight", {d.out_features, d.in_features});
    auto declared = DeclareArgs(w, ep, &def, weight);
    const Tensor data = declared.first;
    const EpilogueArgs epi = declared.second;
    // partial[n, o, kv] = sum over ko of data[n, ko*k_bn + kv] * W[o, ko*k_bn + kv]: k_bn lanes of
    // independent partial sums; the final reduction adds the lanes.
    auto rko = te::MakeIterVar("ko", k_chunks, true);
    Tensor partial = te::ComputeReduce("partial", {d.batch, d.out_features, k_bn}, te::ReduceKind::kSum, {rko},
                                       [&](const std::vector<Expr>& i) {
                                         Expr k = te::AxisExpr(rko) * Expr(k_bn) + i[2];
                                         return te::Read(data, {i[0], k}) * te::Read(weight, {i[1], k});
                                       });
    auto rkv = te::MakeIterVar("kv", k_bn, true);
    Tensor dense = te::ComputeReduce("dense", {d.batch, d.out_features}, te::ReduceKind::kSum, {rkv},
                                     [&](const std::vector<Expr>& i) {
                                       return te::Read(partial, {i[0], i[1], te::AxisExpr(rkv)});
                                     });
    Tensor out = HasEpilogue(ep) ? EpilogueStage(dense, ep, epi) : dense;
    def.args.push_back(out);
    def.roles.push_back(BufferRole::kOutput);

    def.schedule = std::make_unique<te::Schedule>(std::vector<Tensor>{out});
    te::Schedule& s = *def.schedule;
    te::Stage& o = s[out];
    auto [oo, oi] = o.split(o.axes[1], o_bn);
    if (cfg.Annotation("parallel") == "o") o.parallel(oo);
    te::Stage& dstage = s[dense];
    if (HasEpilogue(ep)) dstage.compute_at(o, oi);
    te::Stage& p = s[partial];
    p.compute_at(dstage, HasEpilogue(ep) ? dstage.axes[1] : oi);
    p.reorder({p.axes[0], p.axes[1], rko, p.axes[2]});
    p.vectorize(p.axes[2]);
    return def;
  }
};

}  // namespace

const OpTemplate* DensePackTemplate() {
  static const DensePack kTemplate;
  return &kTemplate;
}
const OpTemplate* DenseNoPackTemplate() {
  static const DenseNoPack kTemplate;
  return &kTemplate;
}

}  // namespace tunefarm::compiler
