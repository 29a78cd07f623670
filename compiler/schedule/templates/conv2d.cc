// conv2d_nchwc: direct convolution in the blocked NCHW[x]c layout (TVM's x86 conv2d_NCHWc, with a
// 2-D register tile and a choice of parallel axis).
//
//   data   [N, C/ic_bn, H, W, ic_bn]          kernel [K/oc_bn, Cg/ic_bn, KH, KW, ic_bn, oc_bn]
//   bias   [K/oc_bn, oc_bn]                   residual, out [N, K/oc_bn, OH, OW, oc_bn]
//
// The inner kernel keeps a (tile_oh x tile_ow x oc_bn) tile of outputs in vector registers,
// broadcasts one input value and multiplies it by an oc_bn-wide vector of packed weights: the
// loads are cheap and every FMA is independent, which is what keeps the
// FMA units busy (bench/RESULTS.md measures 91-99% of the FMA peak). Groups are supported when the blocks divide the
// per-group channel counts.
//
// Int8, with ic_bn a multiple of n (4 or 2) and a constant input zero point: int8 dot products
// (template_util.h's Int8FormOf): the kernel is [K/oc_bn, Cg/ic_bn, KH, KW, ic_bn/n, oc_bn] int32
// words of n input channels' weights, each broadcast input word and weight vector one vpdpbusd per
// four input channels (AVX-512 VNNI, AVX-VNNI) or one vpmaddwd per two (AVX2, the weights int16). A
// channel block that is no multiple of n (an RGB image's 3 channels) takes the dot products over
// each chunk's (kh, kw, icb) taps flattened instead: [K/oc_bn, Cg/ic_bn, ceil(KH*KW*ic_bn/n), oc_bn]
// words of n taps, the last word's extra taps of weight 0 (their knobs reduce_order and unroll_kw
// unused).
#include "compiler/ir/ir_operators.h"
#include "compiler/schedule/op_template.h"
#include "compiler/schedule/templates/template_util.h"

namespace tunefarm::compiler {
namespace {

using ir::Expr;
using ir::Tensor;

class Conv2dNCHWc final : public OpTemplate {
 public:
  const char* name() const override { return "conv2d_nchwc"; }
  Status Check(const Workload& w) const override { return CheckConv2d(w, name(), /*int8_ok=*/true); }

  ConfigSpace Space(const Workload& w, const Target& t) const override {
    const Conv2dParams& c = w.conv;
    ConfigSpace space(w.Key() + " on " + t.ToString());
    int lanes = t.vector_lanes;
    DefineChannelBlocks(&space, c.in_channels / c.groups, c.out_channels / c.groups, lanes);
    space.DefineSplit("tile_ow", c.out_width(), 2, SplitPolicy::kVerbose, 32);
    space.DefineSplit("tile_oh", c.out_height(), 2, SplitPolicy::kVerbose, 4);
    space.DefineOther("unroll_kw", {0, 1});
    // Order of the reduction loops inside the ic-chunk loop, as positions of (kh, kw, icb).
    space.DefineReorder("reduce_order", {{0, 1, 2}, {0, 2, 1}, {2, 0, 1}});
    space.DefineAnnotate("parallel", {"oc_oh", "oc"});
    bool padded = c.pad_top + c.pad_left + c.pad_bottom + c.pad_right > 0;
    space.DefineAnnotate("pad_at", padded ? PadPlacements() : std::vector<std::string>{"none"});
    int64_t ow = c.out_width();
    int max_acc = MaxAccumulators(t);
    // The register tile must fit the register file, and hold enough independent accumulators to
    // cover the FMA latency (unless the whole output row is one tile).
    space.AddFilter([lanes, max_acc, ow](const Config& cfg) {
      int64_t vectors = (cfg.Inner("tile_oc") + lanes - 1) / lanes;
      int64_t acc = cfg.Inner("tile_oh") * cfg.Inner("tile_ow") * vectors;
      return acc <= max_acc && (acc >= 6 || cfg.Inner("tile_ow") == ow);
    });
    return space;
  }

  Result<Config> Fallback(const Workload& w, const Target& t, const ConfigSpace& space) const override {
    const Conv2dParams& c = w.conv;
    int64_t cg = c.in_channels / c.groups, kg = c.out_channels / c.groups;
    int64_t lanes = t.vector_lanes;
    // Up to two output-channel vectors per tile: each broadcast input then feeds two FMAs (one
    // vector: a load per FMA), and the tile can still be two rows high. Blocks follow the channel
    // counts alone (FallbackChannelBlock), so in a model one conv's output is the next one's input
    // layout.
    int64_t oc_bn = FallbackChannelBlock(w, t, kg);
    int64_t vectors = oc_bn % lanes == 0 ? oc_bn / lanes : 1;
    int64_t ic_bn = FallbackChannelBlock(w, t, cg);
    // Int8 over fewer than 4 channels (an RGB image): the tap words read whole pixels, four
    // consecutive bytes of NCHW[cg]c, where plain NCHW would assemble each word from four loads
    // (ResNet-18's first conv: 0.60 ms against 2.3 ms at one thread, AVX-512 VNNI).
    const bool dot_target = t.int8_products != Int8Products::kInt32Vectors;
    if (w.is_int8() && cg < 4 && dot_target) ic_bn = cg;
    int64_t ow = c.out_width(), oh = c.out_height();
    int64_t budget = std::min<int64_t>(MaxAccumulators(t) / vectors, 32);
    int64_t reg_n = LargestDivisorAtMost(ow, budget);
    if (reg_n * 2 < budget && ow > budget) {  // awkward width: a power-of-two tile, guarded tail
      reg_n = 1;
      while (reg_n * 2 <= budget) reg_n *= 2;
    }
    // Narrow maps (7x7, 14x14): the row tile is too short to hide the FMA latency; add a row.
    int64_t oh_tile = (reg_n * 2 <= budget && oh >= 2) ? 2 : 1;
    if (w.is_int8() && cg < 4 && dot_target && kg % (4 * lanes) == 0) {
      // Tap words (the 7x7 taps of an RGB image, 37 words unrolled): each word feeds four
      // output-channel vectors, over a row tile of 2 (ResNet-18's first conv: the best of 64
      // trials, 0.43 ms against 1.6 ms for the float-like 2 x 14 tile).
      oc_bn = 4 * lanes;
      reg_n = LargestDivisorAtMost(ow, 2);
      oh_tile = 1;
    }
    std::vector<std::pair<std::string, std::vector<int64_t>>> v = {
        {"tile_ic", {cg / ic_bn, ic_bn}},
        {"tile_oc", {kg / oc_bn, oc_bn}},
        {"tile_ow", {(ow + reg_n - 1) / reg_n, reg_n}},
        {"tile_oh", {(oh + oh_tile - 1) / oh_tile, oh_tile}},
        // Unrolling kw lets LLVM share input broadcasts across kw steps (same address at stride 1),
        // which keeps them all live and spills the register tile: a kw loop is the safe default.
        {"unroll_kw", {0}},
        {"reduce_order", {0, 1, 2}},
        {"parallel", {0}},
        {"pad_at", {FallbackPadPlacement(c)}},
    };
    return space.FromValues(v);
  }

  Blocks ActivationBlocks(const Workload&, const Config& c) const override {
    return {c.Inner("tile_ic"), c.Inner("tile_oc")};
  }

  bool FeedsEveryCore(const Workload& w, const Config& cfg) const override {
    if (cfg.Annotation("parallel") != "oc") return true;
    const int64_t oc_bn = cfg.Inner("tile_oc"), oh_tile = cfg.Inner("tile_oh"), oh = w.conv.out_height();
    return ChunksAloneSuffice(w.conv.batch * ((w.conv.out_channels + oc_bn - 1) / oc_bn), (oh + oh_tile - 1) / oh_tile);
  }

  KernelDef Instantiate(const Workload& w, const Epilogue& ep, const Config& cfg, const Target& t) const override {
    const Conv2dParams& c = w.conv;
    const int64_t ic_bn = cfg.Inner("tile_ic"), oc_bn = cfg.Inner("tile_oc");
    const int64_t reg_n = cfg.Inner("tile_ow"), oh_tile = cfg.Inner("tile_oh");
    const int64_t cg = c.in_channels / c.groups, kg = c.out_channels / c.groups;
    const int64_t oh = c.out_height(), ow = c.out_width();
    const int64_t ic_chunks = c.in_channels / ic_bn, oc_chunks = c.out_channels / oc_bn;
    const int64_t icc_per_group = cg / ic_bn, occ_per_group = kg / oc_bn;

    // Words of `per_word` channels (dot), of as many taps (tap_words), or single channels.
    const Int8Products form = Int8FormOf(w, ep, ic_bn, t);
    const bool dot = form != Int8Products::kInt32Vectors;
    const Int8Products tap_form = dot ? form : Int8FormOf(w, ep, ElementsPerWord(t.int8_products), t);
    const bool tap_words = !dot && tap_form != Int8Products::kInt32Vectors;
    const int64_t per_word = ElementsPerWord(dot ? form : tap_form);
    const int64_t icb_steps = ic_bn / per_word;
    const int64_t taps = c.kernel_h * c.kernel_w * ic_bn, tap_steps = (taps + per_word - 1) / per_word;

    KernelDef def;
    Tensor data = te::Placeholder("data", {c.batch, ic_chunks, c.height, c.width, ic_bn}, DataTypeOf(w));
    Tensor kernel =
        tap_words ? te::Placeholder("kernel", {oc_chunks, icc_per_group, tap_steps, oc_bn}, ir::Type::Int(32))
                  : te::Placeholder("kernel", {oc_chunks, icc_per_group, c.kernel_h, c.kernel_w, icb_steps, oc_bn},
                                    dot ? ir::Type::Int(32) : WeightTypeOf(w));
    def.args = {data, kernel};
    def.roles = {BufferRole::kInput, BufferRole::kWeight};
    if (dot || tap_words) def.weight_word = int(per_word);
    EpilogueArgs epi = DeclareEpilogueArgs(ep, {oc_chunks, oc_bn}, {c.batch, oc_chunks, oh, ow, oc_bn}, &def, &w);
    if (dot || tap_words) epi.compensation = DeclareCompensation({oc_chunks, oc_bn}, &def);
    Tensor input = PadNCHWc(data, c, PadValueOf(w, ep, epi));
    const bool padded = input != data;
    auto ric = te::MakeIterVar("ic", icc_per_group, true);
    auto rkh = te::MakeIterVar("kh", c.kernel_h, true);
    auto rkw = te::MakeIterVar("kw", c.kernel_w, true);
    auto ricb = te::MakeIterVar("icb", icb_steps, true);
    auto rtap = te::MakeIterVar("tap", tap_steps, true);
    const std::vector<te::IterVar> reduction =
        tap_words ? std::vector<te::IterVar>{ric, rtap} : std::vector<te::IterVar>{ric, rkh, rkw, ricb};
    Tensor conv = te::ComputeReduce(
        "conv", {c.batch, oc_chunks, oh, ow, oc_bn}, te::ReduceKind::kSum, reduction, [&](const std::vector<Expr>& i) {
          Expr ic_chunk = te::AxisExpr(ric);
          if (c.groups > 1) ic_chunk = (i[1] / Expr(occ_per_group)) * Expr(icc_per_group) + ic_chunk;
          if (tap_words) {
            auto tap = [&](int64_t j) {
              const Expr flat = ir::min(te::AxisExpr(rtap) * Expr(per_word) + Expr(j), Expr(taps - 1));
              const Expr kh = flat / Expr(c.kernel_w * ic_bn), kw = flat / Expr(ic_bn) % Expr(c.kernel_w);
              return std::vector<Expr>{i[0], ic_chunk, i[2] * Expr(c.stride_h) + kh * Expr(c.dilation_h),
                                       i[3] * Expr(c.stride_w) + kw * Expr(c.dilation_w), flat % Expr(ic_bn)};
            };
            return DotProduct(tap_form, InputWordOf(input, tap, w, tap_form),
                              te::Read(kernel, {i[1], te::AxisExpr(ric), te::AxisExpr(rtap), i[4]}));
          }
          Expr ih = i[2] * Expr(c.stride_h) + te::AxisExpr(rkh) * Expr(c.dilation_h);
          Expr iw = i[3] * Expr(c.stride_w) + te::AxisExpr(rkw) * Expr(c.dilation_w);
          if (dot) {
            return DotProduct(form, InputWord(input, {i[0], ic_chunk, ih, iw}, te::AxisExpr(ricb), w, form),
                              te::Read(kernel, {i[1], te::AxisExpr(ric), te::AxisExpr(rkh), te::AxisExpr(rkw),
                                                te::AxisExpr(ricb), i[4]}));
          }
          return MultiplyOperands(w, ep, epi, te::Read(input, {i[0], ic_chunk, ih, iw, te::AxisExpr(ricb)}),
                                  te::Read(kernel, {i[1], te::AxisExpr(ric), te::AxisExpr(rkh), te::AxisExpr(rkw),
                                                    te::AxisExpr(ricb), i[4]}));
        });
    const bool has_epilogue = HasEpilogue(ep) || dot || tap_words;  // the compensation is an epilogue
    Tensor out = has_epilogue ? FusedEpilogue(conv, ep, epi,
                                              [](const std::vector<Expr>& i) {
                                                return std::vector<Expr>{i[1], i[4]};
                                              })
                              : conv;
    def.args.push_back(out);
    def.roles.push_back(BufferRole::kOutput);

    def.schedule = std::make_unique<te::Schedule>(std::vector<Tensor>{out});
    te::Schedule& s = *def.schedule;
    // The accumulator tile: the conv itself when an epilogue stage consumes it, else a cache.
    Tensor acc = has_epilogue ? conv : s.cache_write(conv);
    te::Stage& o = s[out];
    auto owo = ScheduleConvOutputTiles(o, oh_tile, reg_n, cfg.Annotation("parallel") == "oc_oh", oc_bn, t.vector_lanes,
                                       w.Flops());

    te::Stage& a = s[acc];
    a.compute_at(o, owo);
    auto an = a.axes[0], aocc = a.axes[1], aoh = a.axes[2], aow = a.axes[3], aocb = a.axes[4];
    if (tap_words) {
      // Every tap word's indices constant once unrolled (a first conv has 37 of them).
      auto aic = a.reduce_axes[0], atap = a.reduce_axes[1];
      a.reorder({an, aocc, aic, atap, aoh, aow, aocb});
      if (taps <= 256) a.unroll(atap);  // a 7x7 RGB conv's 147 taps: 37 words of four, 74 pairs
      a.unroll(aoh);
      a.unroll(aow);
      VectorizeByLanes(a, aocb, oc_bn, t.vector_lanes);
      if (padded) SchedulePadding(s, input, cfg.Annotation("pad_at"), a, aic, ic_bn);
      return def;
    }
    auto aic = a.reduce_axes[0], akh = a.reduce_axes[1], akw = a.reduce_axes[2], aicb = a.reduce_axes[3];
    std::vector<te::IterVar> inner = {akh, akw, aicb};
    const auto& order = cfg.Get("reduce_order");
    a.reorder(
        {an, aocc, aic, inner[size_t(order[0])], inner[size_t(order[1])], inner[size_t(order[2])], aoh, aow, aocb});
    if (cfg.Int("unroll_kw")) a.unroll(akw);
    a.unroll(aoh);
    a.unroll(aow);
    VectorizeByLanes(a, aocb, oc_bn, t.vector_lanes);

    // "tile": inside the input-channel-chunk loop, each step pads only the rows and columns of one
    // chunk that the tile reads, which then stay in L1 for the kh/kw/icb loops.
    if (padded) SchedulePadding(s, input, cfg.Annotation("pad_at"), a, aic, ic_bn);
    return def;
  }
};

}  // namespace

const OpTemplate* Conv2dTemplate() {
  static const Conv2dNCHWc kTemplate;
  return &kTemplate;
}

}  // namespace tunefarm::compiler
