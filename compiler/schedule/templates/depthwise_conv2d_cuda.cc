// depthwise_conv2d_nchw_cuda: depthwise convolution (groups == channels, multiplier 1) on NVIDIA
// GPUs, with fused epilogues (TVM's depthwise_conv2d_nchw CUDA template without virtual threads).
//
//   data [N, C, H, W]   kernel [C, 1, KH, KW]   bias [C]   residual, out [N, C, OH, OW]
//
// Channels, rows and columns split into (block, thread, inner) as in conv2d_nchw_cuda; per block
// the padded input window of its channels and their filters are staged once in shared memory
// (a depthwise conv reads each input value up to KH x KW times), then every thread accumulates
// its register tile from shared memory.
#include "compiler/schedule/op_template.h"
#include "compiler/schedule/templates/gpu_template_util.h"
#include "compiler/schedule/templates/template_util.h"

namespace tunefarm::compiler {
namespace {

using ir::Expr;
using ir::Tensor;

class DepthwiseConv2dNCHWCuda final : public OpTemplate {
 public:
  const char* name() const override { return "depthwise_conv2d_nchw_cuda"; }
  Status Check(const Workload& w) const override {
    TUNEFARM_RETURN_IF_ERROR(CheckConv2d(w, name(), /*int8_ok=*/true));
    const Conv2dParams& c = w.conv;
    if (c.groups != c.in_channels || c.out_channels != c.in_channels) {
      return Status::InvalidArgument(std::string("unsupported shape for ") + name() +
                                     ": needs groups == in_channels == out_channels (multiplier 1), got " + w.Key());
    }
    return Status::OK();
  }

  ConfigSpace Space(const Workload& w, const Target& t) const override {
    const Conv2dParams& c = w.conv;
    ConfigSpace space(w.Key() + " on " + t.ToString());
    space.DefineSplit("tile_f", c.out_channels, 4, SplitPolicy::kFactors);
    space.DefineSplit("tile_y", c.out_height(), 4, SplitPolicy::kVerbose, 64);
    space.DefineSplit("tile_x", c.out_width(), 4, SplitPolicy::kVerbose, 64);
    DefineUnrollKnob(&space);
    const int64_t shared_limit = t.gpu.max_shared_memory_per_block;
    space.AddFilter([c, t, shared_limit](const Config& cfg) {
      const auto& f = cfg.Get("tile_f");
      const auto& y = cfg.Get("tile_y");
      const auto& x = cfg.Get("tile_x");
      // TVM's limit on virtual threads: more only multiplies registers and unrolled code.
      if (VthreadFactor(f) * VthreadFactor(y) * VthreadFactor(x) > 8) return false;
      if (!WithinThreadLimits(t, ThreadFactor(f), ThreadFactor(y), ThreadFactor(x),
                              PerThreadFactor(f) * PerThreadFactor(y) * PerThreadFactor(x))) {
        return false;
      }
      const int64_t channels = f[1] * f[2] * f[3];
      int64_t elements =
          InputTileElements(c, channels, y[1] * y[2] * y[3], x[1] * x[2] * x[3], c.kernel_h, c.kernel_w) +
          channels * c.kernel_h * c.kernel_w;
      return elements * 4 <= shared_limit;
    });
    return space;
  }

  Result<Config> Fallback(const Workload& w, const Target& t, const ConfigSpace& space) const override {
    const Conv2dParams& c = w.conv;
    std::vector<int64_t> x = FallbackTriple(c.out_width(), 16, 1);
    std::vector<int64_t> y = FallbackTriple(c.out_height(), std::max<int64_t>(1, 128 / x[1]), 1);
    int64_t max_tf = std::min<int64_t>(64, std::max<int64_t>(1, 256 / (x[1] * y[1])));
    std::vector<int64_t> f;
    for (;; max_tf = std::max<int64_t>(1, max_tf / 2)) {
      f = FallbackTriple(c.out_channels, max_tf, 1);
      const int64_t channels = f[1] * f[2];
      int64_t elements = InputTileElements(c, channels, y[1] * y[2], x[1] * x[2], c.kernel_h, c.kernel_w) +
                         channels * c.kernel_h * c.kernel_w;
      if (elements * 4 <= t.gpu.max_shared_memory_per_block || max_tf == 1) break;
    }
    return space.FromValues({{"tile_f", NoVthread(f)},
                             {"tile_y", NoVthread(y)},
                             {"tile_x", NoVthread(x)},
                             {"auto_unroll_max_step", {512}}});
  }

  KernelDef Instantiate(const Workload& w, const Epilogue& ep, const Config& cfg, const Target&) const override {
    const Conv2dParams& c = w.conv;
    const int64_t oh = c.out_height(), ow = c.out_width();
    KernelDef def;
    Tensor data = te::Placeholder("data", {c.batch, c.in_channels, c.height, c.width}, DataTypeOf(w));
    Tensor kernel = te::Placeholder("kernel", {c.out_channels, 1, c.kernel_h, c.kernel_w}, WeightTypeOf(w));
    def.args = {data, kernel};
    def.roles = {BufferRole::kInput, BufferRole::kWeight};
    EpilogueArgs epi = DeclareEpilogueArgs(ep, {c.out_channels}, {c.batch, c.out_channels, oh, ow}, &def, &w);
    Tensor input = PadNCHW(data, c, PadValueOf(w, ep, epi));
    auto ry = te::MakeIterVar("ry", c.kernel_h, true);
    auto rx = te::MakeIterVar("rx", c.kernel_w, true);
    Tensor conv = te::ComputeReduce("depthwise", {c.batch, c.out_channels, oh, ow}, te::ReduceKind::kSum, {ry, rx},
                                    [&](const std::vector<Expr>& i) {
                                      Expr ih = i[2] * Expr(c.stride_h) + te::AxisExpr(ry) * Expr(c.dilation_h);
                                      Expr iw = i[3] * Expr(c.stride_w) + te::AxisExpr(rx) * Expr(c.dilation_w);
                                      return MultiplyOperands(
                                          w, ep, epi, te::Read(input, {i[0], i[1], ih, iw}),
                                          te::Read(kernel, {i[1], Expr(0), te::AxisExpr(ry), te::AxisExpr(rx)}));
                                    });
    const bool has_epilogue = HasEpilogue(ep);
    Tensor out = AddGpuOutput(&def, conv, ep, epi, cfg);
    te::Schedule& s = *def.schedule;
    GpuConvStages stages = StageConvThroughSharedMemory(s, conv, has_epilogue, input, data, kernel);
    te::Stage& o = s[out];
    GpuOutputTiles tiles = TileNchwOutput(o, {o.axes[0]}, o.axes[1], cfg);
    te::Stage& a = s[stages.acc];
    a.compute_at(o, tiles.attach);
    // A window loop of one iteration around the whole reduction: where the block fills its shared
    // tiles, once (regions are inferred from the stage that reads them, the accumulator).
    auto [whole, ry_in] = a.split(a.reduce_axes[0], c.kernel_h);
    a.reorder({whole, ry_in, a.reduce_axes[1], a.axes[0], a.axes[1], a.axes[2], a.axes[3]});
    for (size_t d = 0; d < 4; ++d) a.unroll(a.axes[d]);
    FetchIntoSharedAt(s, {stages.input_shared, stages.kernel_shared}, a, whole, tiles.threads);
    return def;
  }
};

}  // namespace

const OpTemplate* DepthwiseConv2dCudaTemplate() {
  static const DepthwiseConv2dNCHWCuda kTemplate;
  return &kTemplate;
}

}  // namespace tunefarm::compiler
