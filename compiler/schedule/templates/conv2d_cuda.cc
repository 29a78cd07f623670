// conv2d_nchw_cuda: direct convolution on NVIDIA GPUs (TVM's conv2d_nchw CUDA template, without
// virtual threads), with groups and fused epilogues.
//
//   data [N, C, H, W]   kernel [K, C/groups, KH, KW]   bias [K]   residual, out [N, K, OH, OW]
//
// Output channels, rows and columns split into (block, thread, inner): blockIdx.z runs over
// (batch, channel blocks), y and x over row and column blocks; threadIdx z/y/x over the thread
// parts; each thread accumulates its (inner f x inner y x inner x) tile in registers. The input
// channels and kernel window split into (outer, inner): per outer step the block stages the padded
// input window and the weights it needs into shared memory (every thread fetches a share,
// consecutive threads consecutive elements), synchronizes, and accumulates from shared memory.
#include "compiler/schedule/op_template.h"
#include "compiler/schedule/templates/gpu_template_util.h"
#include "compiler/schedule/templates/template_util.h"

namespace tunefarm::compiler {
namespace {

using ir::Expr;
using ir::Tensor;

class Conv2dNCHWCuda final : public OpTemplate {
 public:
  const char* name() const override { return "conv2d_nchw_cuda"; }
  Status Check(const Workload& w) const override { return CheckConv2d(w, name(), /*int8_ok=*/true); }

  ConfigSpace Space(const Workload& w, const Target& t) const override {
    const Conv2dParams& c = w.conv;
    ConfigSpace space(w.Key() + " on " + t.ToString());
    space.DefineSplit("tile_f", c.out_channels / c.groups, 4, SplitPolicy::kFactors);
    space.DefineSplit("tile_y", c.out_height(), 4, SplitPolicy::kVerbose, 64);
    space.DefineSplit("tile_x", c.out_width(), 4, SplitPolicy::kVerbose, 64);
    space.DefineSplit("tile_rc", c.in_channels / c.groups, 2, SplitPolicy::kFactors);
    space.DefineSplit("tile_ry", c.kernel_h, 2, SplitPolicy::kFactors);
    space.DefineSplit("tile_rx", c.kernel_w, 2, SplitPolicy::kFactors);
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
      const int64_t rc = cfg.Inner("tile_rc"), ry = cfg.Inner("tile_ry"), rx = cfg.Inner("tile_rx");
      int64_t elements =
          InputTileElements(c, rc, y[1] * y[2] * y[3], x[1] * x[2] * x[3], ry, rx) + f[1] * f[2] * f[3] * rc * ry * rx;
      return elements * 4 <= shared_limit;
    });
    return space;
  }

  Result<Config> Fallback(const Workload& w, const Target& t, const ConfigSpace& space) const override {
    const Conv2dParams& c = w.conv;
    const int64_t kg = c.out_channels / c.groups, cg = c.in_channels / c.groups;
    // About 128-256 threads: columns first (coalesced), then rows, then channels; a 2-4 element
    // register tile along the channels, which reuses each staged input value that many times.
    std::vector<int64_t> x = FallbackTriple(c.out_width(), 16, 1);
    std::vector<int64_t> y = FallbackTriple(c.out_height(), std::max<int64_t>(1, 64 / x[1]), 1);
    const int64_t max_tf = std::min<int64_t>(64, std::max<int64_t>(1, 256 / (x[1] * y[1])));
    std::vector<int64_t> f = FallbackTriple(kg, max_tf, 4);
    if (f[1] * x[1] * y[1] < 64 && f[2] > 1) f = FallbackTriple(kg, max_tf, 1);  // threads over registers
    // Per step: rc channels and ry rows of the window; fewer channels first, then (a large window:
    // ViT's 16x16 patches) fewer window rows, until the staged tiles fit in shared memory.
    int64_t rc = LargestDivisorAtMost(cg, 8), ry = c.kernel_h;
    auto fits = [&] {
      const int64_t elements =
          InputTileElements(c, rc, y[1] * y[2], x[1] * x[2], ry, c.kernel_w) + f[1] * f[2] * rc * ry * c.kernel_w;
      return elements * 4 <= t.gpu.max_shared_memory_per_block;
    };
    while (!fits() && rc > 1) rc = LargestDivisorAtMost(cg, rc - 1);
    while (!fits() && ry > 1) ry = LargestDivisorAtMost(c.kernel_h, ry - 1);
    return space.FromValues({{"tile_f", NoVthread(f)},
                             {"tile_y", NoVthread(y)},
                             {"tile_x", NoVthread(x)},
                             {"tile_rc", {cg / rc, rc}},
                             {"tile_ry", {c.kernel_h / ry, ry}},
                             {"tile_rx", {1, c.kernel_w}},
                             {"auto_unroll_max_step", {512}}});
  }

  KernelDef Instantiate(const Workload& w, const Epilogue& ep, const Config& cfg, const Target&) const override {
    const Conv2dParams& c = w.conv;
    const int64_t oh = c.out_height(), ow = c.out_width();
    const int64_t cg = c.in_channels / c.groups, kg = c.out_channels / c.groups;
    KernelDef def;
    Tensor data = te::Placeholder("data", {c.batch, c.in_channels, c.height, c.width}, DataTypeOf(w));
    Tensor kernel = te::Placeholder("kernel", {c.out_channels, cg, c.kernel_h, c.kernel_w}, WeightTypeOf(w));
    def.args = {data, kernel};
    def.roles = {BufferRole::kInput, BufferRole::kWeight};
    EpilogueArgs epi = DeclareEpilogueArgs(ep, {c.out_channels}, {c.batch, c.out_channels, oh, ow}, &def, &w);
    Tensor input = PadNCHW(data, c, PadValueOf(w, ep, epi));
    auto rc = te::MakeIterVar("rc", cg, true);
    auto ry = te::MakeIterVar("ry", c.kernel_h, true);
    auto rx = te::MakeIterVar("rx", c.kernel_w, true);
    Tensor conv = te::ComputeReduce(
        "conv", {c.batch, c.out_channels, oh, ow}, te::ReduceKind::kSum, {rc, ry, rx}, [&](const std::vector<Expr>& i) {
          Expr ic = te::AxisExpr(rc);
          if (c.groups > 1) ic = (i[1] / Expr(kg)) * Expr(cg) + ic;
          Expr ih = i[2] * Expr(c.stride_h) + te::AxisExpr(ry) * Expr(c.dilation_h);
          Expr iw = i[3] * Expr(c.stride_w) + te::AxisExpr(rx) * Expr(c.dilation_w);
          return MultiplyOperands(w, ep, epi, te::Read(input, {i[0], ic, ih, iw}),
                                  te::Read(kernel, {i[1], te::AxisExpr(rc), te::AxisExpr(ry), te::AxisExpr(rx)}));
        });
    const bool has_epilogue = HasEpilogue(ep);
    Tensor out = AddGpuOutput(&def, conv, ep, epi, cfg);
    te::Schedule& s = *def.schedule;
    GpuConvStages stages = StageConvThroughSharedMemory(s, conv, has_epilogue, input, data, kernel);
    te::Stage& o = s[out];
    // Groups: a thread block never straddles two groups (tile_f splits the per-group channels).
    auto [og, of] = o.split(o.axes[1], kg);
    GpuOutputTiles tiles = TileNchwOutput(o, {o.axes[0], og}, of, cfg);

    te::Stage& a = s[stages.acc];
    a.compute_at(o, tiles.attach);
    auto [rco, rci] = a.split(a.reduce_axes[0], cfg.Inner("tile_rc"));
    auto [ryo, ryi] = a.split(a.reduce_axes[1], cfg.Inner("tile_ry"));
    auto [rxo, rxi] = a.split(a.reduce_axes[2], cfg.Inner("tile_rx"));
    a.reorder({rco, ryo, rxo, rci, ryi, rxi, a.axes[0], a.axes[1], a.axes[2], a.axes[3]});
    for (size_t d = 0; d < 4; ++d) a.unroll(a.axes[d]);

    FetchIntoSharedAt(s, {stages.input_shared, stages.kernel_shared}, a, rxo, tiles.threads);
    return def;
  }
};

}  // namespace

const OpTemplate* Conv2dCudaTemplate() {
  static const Conv2dNCHWCuda kTemplate;
  return &kTemplate;
}

}  // namespace tunefarm::compiler
