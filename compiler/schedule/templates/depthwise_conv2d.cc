// depthwise_conv2d_nchwc: one filter per channel (groups == channels, multiplier 1), in the
// blocked layout. Channels are the vector lanes: every load (input and weight) is a dense vector
// and each output vector is an independent chain of KH*KW FMAs, tiled over ow in registers.
//
//   data [N, C/c_bn, H, W, c_bn]   kernel [C/c_bn, KH, KW, c_bn]   bias [C/c_bn, c_bn]
//   residual, out [N, C/c_bn, OH, OW, c_bn]
#include <algorithm>

#include "compiler/schedule/op_template.h"
#include "compiler/schedule/templates/template_util.h"

namespace tunefarm::compiler {
namespace {

using ir::Expr;
using ir::Tensor;

class DepthwiseConv2dNCHWc final : public OpTemplate {
 public:
  const char* name() const override { return "depthwise_conv2d_nchwc"; }

  Status Check(const Workload& w) const override {
    TUNEFARM_RETURN_IF_ERROR(CheckConv2d(w, name(), /*int8_ok=*/true));
    const Conv2dParams& c = w.conv;
    if (c.groups != c.in_channels || c.out_channels != c.in_channels) {
      return Status::InvalidArgument(
          "unsupported shape for depthwise_conv2d_nchwc: needs groups == in_channels == out_channels (multiplier 1), "
          "got " +
          w.Key());
    }
    return Status::OK();
  }

  ConfigSpace Space(const Workload& w, const Target& t) const override {
    const Conv2dParams& c = w.conv;
    ConfigSpace space(w.Key() + " on " + t.ToString());
    space.DefineSplit("tile_c", c.in_channels, 2, SplitPolicy::kFactors);
    space.DefineSplit("tile_ow", c.out_width(), 2, SplitPolicy::kVerbose, 32);
    space.DefineOther("unroll_kw", {0, 1});
    space.DefineAnnotate("parallel", {"c_oh", "c"});
    bool padded = c.pad_top + c.pad_left + c.pad_bottom + c.pad_right > 0;
    space.DefineAnnotate("pad_at", padded ? PadPlacements() : std::vector<std::string>{"none"});
    int64_t channels = c.in_channels;
    space.FilterKnob("tile_c", [&t, channels](const std::vector<int64_t>& f) {
      return f.back() <= 64 && (channels % t.vector_lanes != 0 || f.back() % t.vector_lanes == 0);
    });
    int lanes = t.vector_lanes;
    int max_acc = MaxAccumulators(t);
    space.AddFilter([lanes, max_acc](const Config& cfg) {
      return cfg.Inner("tile_ow") * ((cfg.Inner("tile_c") + lanes - 1) / lanes) <= max_acc;
    });
    return space;
  }

  Result<Config> Fallback(const Workload& w, const Target& t, const ConfigSpace& space) const override {
    const Conv2dParams& c = w.conv;
    int64_t lanes = t.vector_lanes;
    int64_t c_bn = FallbackChannelBlock(w, t, c.in_channels);
    int64_t ow = c.out_width();
    // Up to 8 output columns per tile, as many as the register file holds at this block width.
    const int64_t vectors = (c_bn + lanes - 1) / lanes;
    const int64_t cap = std::max<int64_t>(1, std::min<int64_t>(8, MaxAccumulators(t) / vectors));
    int64_t reg_n = LargestDivisorAtMost(ow, cap);
    if (reg_n < 4 && ow > cap) {  // awkward width: a power-of-two tile (a candidate of the split), guarded tail
      reg_n = 1;
      while (reg_n * 2 <= cap) reg_n *= 2;
    }
    return space.FromValues({{"tile_c", {c.in_channels / c_bn, c_bn}},
                             {"tile_ow", {(ow + reg_n - 1) / reg_n, reg_n}},
                             {"unroll_kw", {1}},
                             {"parallel", {0}},
                             {"pad_at", {FallbackPadPlacement(c)}}});
  }

  Blocks ActivationBlocks(const Workload&, const Config& c) const override {
    return {c.Inner("tile_c"), c.Inner("tile_c")};
  }

  bool FeedsEveryCore(const Workload& w, const Config& cfg) const override {
    const int64_t c_bn = cfg.Inner("tile_c");
    return cfg.Annotation("parallel") != "c" ||
           ChunksAloneSuffice(w.conv.batch * ((w.conv.in_channels + c_bn - 1) / c_bn), w.conv.out_height());
  }

  KernelDef Instantiate(const Workload& w, const Epilogue& ep, const Config& cfg, const Target& t) const override {
    const Conv2dParams& c = w.conv;
    const int64_t c_bn = cfg.Inner("tile_c"), reg_n = cfg.Inner("tile_ow");
    const int64_t chunks = c.in_channels / c_bn, oh = c.out_height(), ow = c.out_width();

    KernelDef def;
    Tensor data = te::Placeholder("data", {c.batch, chunks, c.height, c.width, c_bn}, DataTypeOf(w));
    Tensor kernel = te::Placeholder("kernel", {chunks, c.kernel_h, c.kernel_w, c_bn}, WeightTypeOf(w));
    def.args = {data, kernel};
    def.roles = {BufferRole::kInput, BufferRole::kWeight};
    EpilogueArgs epi = DeclareEpilogueArgs(ep, {chunks, c_bn}, {c.batch, chunks, oh, ow, c_bn}, &def, &w);
    Tensor input = PadNCHWc(data, c, PadValueOf(w, ep, epi));
    const bool padded = input != data;
    auto rkh = te::MakeIterVar("kh", c.kernel_h, true);
    auto rkw = te::MakeIterVar("kw", c.kernel_w, true);
    Tensor conv = te::ComputeReduce(
        "dwconv", {c.batch, chunks, oh, ow, c_bn}, te::ReduceKind::kSum, {rkh, rkw}, [&](const std::vector<Expr>& i) {
          Expr ih = i[2] * Expr(c.stride_h) + te::AxisExpr(rkh) * Expr(c.dilation_h);
          Expr iw = i[3] * Expr(c.stride_w) + te::AxisExpr(rkw) * Expr(c.dilation_w);
          return MultiplyOperands(w, ep, epi, te::Read(input, {i[0], i[1], ih, iw, i[4]}),
                                  te::Read(kernel, {i[1], te::AxisExpr(rkh), te::AxisExpr(rkw), i[4]}));
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
    Tensor acc = has_epilogue ? conv : s.cache_write(conv);
    te::Stage& o = s[out];
    auto owo =
        ScheduleConvOutputTiles(o, 1, reg_n, cfg.Annotation("parallel") == "c_oh", c_bn, t.vector_lanes, w.Flops());

    te::Stage& a = s[acc];
    a.compute_at(o, owo);
    auto an = a.axes[0], acc_c = a.axes[1], aoh = a.axes[2], aow = a.axes[3], acb = a.axes[4];
    auto akh = a.reduce_axes[0], akw = a.reduce_axes[1];
    a.reorder({an, acc_c, aoh, akh, akw, aow, acb});
    if (cfg.Int("unroll_kw")) a.unroll(akw);
    a.unroll(aow);
    VectorizeByLanes(a, acb, c_bn, t.vector_lanes);

    if (padded) SchedulePadding(s, input, cfg.Annotation("pad_at"), a, an, c_bn);
    return def;
  }
};

}  // namespace

const OpTemplate* DepthwiseConv2dTemplate() {
  static const DepthwiseConv2dNCHWc kTemplate;
  return &kTemplate;
}

}  // namespace tunefarm::compiler
