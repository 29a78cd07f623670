// Winograd on CPUs against direct convolution: the Toom-Cook matrices compute the correlation
// exactly (in double) for every tile WinogradFor builds, and the conv2d_nchwc_winograd kernel with
// weights transformed at compile time (WinogradWeightTransform, NCHW[x]c blocks) gives the direct
// convolution of the original 3x3 weights for each tile size, with padding, partial edge tiles and
// a fused epilogue.
#include "tunefarm/compiler/winograd.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "common/kernel_reference.h"
#include "tunefarm/compiler/kernel.h"
#include "tunefarm/testing/kernel_cases.h"

namespace tunefarm::compiler {
namespace {

TEST(WinogradMatrices, EveryTileComputesTheCorrelationExactlyInDouble) {
  std::mt19937_64 rng(1);
  std::uniform_real_distribution<double> dist(-1, 1);
  for (int m : {2, 4, 6}) {
    auto wm = WinogradFor(m);
    ASSERT_TRUE(wm.ok()) << wm.status().ToString();
    const WinogradMatrices& w = **wm;
    ASSERT_EQ(w.alpha, m + 2);
    for (int trial = 0; trial < 20; ++trial) {
      std::vector<double> d(size_t(w.alpha)), g(3);
      for (double& x : d) x = dist(rng);
      for (double& x : g) x = dist(rng);
      std::vector<double> product(size_t(w.alpha));  // (G g) (.) (B^T d)
      for (int e = 0; e < w.alpha; ++e) {
        double gg = 0, bd = 0;
        for (int k = 0; k < 3; ++k) gg += w.g(e, k) * g[size_t(k)];
        for (int r = 0; r < w.alpha; ++r) bd += w.b(r, e) * d[size_t(r)];
        product[size_t(e)] = gg * bd;
      }
      for (int i = 0; i < m; ++i) {
        double y = 0, direct = 0;
        for (int e = 0; e < w.alpha; ++e) y += w.a(e, i) * product[size_t(e)];
        for (int k = 0; k < 3; ++k) direct += g[size_t(k)] * d[size_t(i + k)];
        EXPECT_NEAR(y, direct, 1e-12) << "F(" << m << ", 3) output " << i;
      }
    }
  }
  EXPECT_FALSE(WinogradFor(3).ok());
  EXPECT_NE(WinogradFor(8).status().message().find("Winograd output tile 8 is not built (2, 4 or 6)"),
            std::string::npos);
}

// out[n, k, h, w] of a 3x3 stride-1 convolution in NCHW[x]c, in double.
std::vector<float> DirectConvolution(const Conv2dParams& c, const std::vector<float>& data, int64_t ic_bn,
                                     const std::vector<float>& filters, int64_t oc_bn, const std::vector<float>& bias) {
  const int64_t oh = c.out_height(), ow = c.out_width();
  std::vector<float> out(size_t(c.batch * c.out_channels * oh * ow));
  for (int64_t n = 0; n < c.batch; ++n)
    for (int64_t k = 0; k < c.out_channels; ++k)
      for (int64_t y = 0; y < oh; ++y)
        for (int64_t x = 0; x < ow; ++x) {
          double acc = bias[size_t(k)];
          for (int64_t ch = 0; ch < c.in_channels; ++ch)
            for (int64_t r = 0; r < 3; ++r)
              for (int64_t s = 0; s < 3; ++s) {
                const int64_t h = y + r - c.pad_top, v = x + s - c.pad_left;
                if (h < 0 || h >= c.height || v < 0 || v >= c.width) continue;
                acc += double(data[size_t((((n * (c.in_channels / ic_bn) + ch / ic_bn) * c.height + h) * c.width + v) *
                                              ic_bn +
                                          ch % ic_bn)]) *
                       filters[size_t(((k * c.in_channels + ch) * 3 + r) * 3 + s)];
              }
          out[size_t((((n * (c.out_channels / oc_bn) + k / oc_bn) * oh + y) * ow + x) * oc_bn + k % oc_bn)] =
              float(std::max(acc, 0.0));
        }
  return out;
}

TEST(CpuWinograd, TransformedWeightsGiveTheDirectConvolutionForEveryTile) {
  const Target host = HostTarget();
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<float> dist(-1, 1);
  struct Shape {
    int64_t batch, c, h, w, k, pad_top, pad_left;
  };
  // Outputs that are multiples of both tiles, partial edge tiles (13x9, 7x7), no padding, and
  // asymmetric padding.
  for (const Shape& sh : {Shape{1, 16, 8, 8, 32, 1, 1}, Shape{2, 8, 13, 9, 16, 1, 1}, Shape{1, 32, 7, 7, 16, 1, 1},
                          Shape{1, 4, 10, 12, 8, 0, 0}, Shape{1, 8, 9, 11, 8, 2, 0}}) {
    Workload w = Conv2dWorkload(sh.batch, sh.c, sh.h, sh.w, sh.k, 3, 3, 1, 1);
    w.conv.pad_top = w.conv.pad_bottom = sh.pad_top;
    w.conv.pad_left = w.conv.pad_right = sh.pad_left;
    w.implementation = "conv2d_nchwc_winograd";
    auto space = GetConfigSpace(w, host);
    ASSERT_TRUE(space.ok()) << space.status().ToString();
    for (int m : kWinogradTiles) {
      const int64_t ic_bn = std::min<int64_t>(sh.c, 8), oc_bn = std::min<int64_t>(sh.k, 16);
      auto cfg = space->FromValues({{"tile_m", {m}},
                                    {"tile_ic", {sh.c / ic_bn, ic_bn}},
                                    {"tile_oc", {sh.k / oc_bn, oc_bn}},
                                    {"tile_th", {1}},
                                    {"tile_tw", {2}},
                                    {"parallel", {1}}});
      ASSERT_TRUE(cfg.ok()) << cfg.status().ToString();
      ASSERT_TRUE(space->IsValid(*cfg)) << cfg->ToJson();
      KernelSpec spec{w, Epilogue{true, false, Activation::kRelu}, host, cfg->index(), "winograd"};
      std::vector<KernelInfo> infos;
      auto jit = BuildJit({spec}, &infos);
      ASSERT_TRUE(jit.ok()) << jit.status().ToString();
      std::vector<float> data(size_t(infos[0].buffers[0].num_elements())), filters(size_t(sh.k * sh.c * 9)),
          bias(size_t(sh.k));
      for (float& x : data) x = dist(rng);
      for (float& x : filters) x = dist(rng);
      for (float& x : bias) x = dist(rng);
      std::vector<float> u = WinogradWeightTransform(filters, sh.k, sh.c, oc_bn, **WinogradFor(m));
      ASSERT_EQ(int64_t(u.size()), infos[0].buffers[1].num_elements());
      std::vector<float> out(size_t(infos[0].buffers.back().num_elements()), 0.0f);
      std::vector<void*> ptrs = {data.data(), u.data(), bias.data(), out.data()};
      auto fn = (*jit)->Lookup("winograd");
      ASSERT_TRUE(fn.ok());
      ASSERT_EQ((*fn)(ptrs.data()), 0);
      const double err = runtime::MaxRelativeError(out, DirectConvolution(w.conv, data, ic_bn, filters, oc_bn, bias));
      EXPECT_LE(err, 1e-5) << w.Key() << " m=" << m;
    }
  }
}

TEST(CpuWinograd, AppliesOnlyTo3x3StrideOneUngroupedConvolutions) {
  Workload strided = Conv2dWorkload(1, 8, 16, 16, 8, 3, 3, 2, 1);
  strided.implementation = "conv2d_nchwc_winograd";
  auto space = GetConfigSpace(strided, HostTarget());
  ASSERT_FALSE(space.ok());
  EXPECT_NE(
      space.status().message().find("conv2d_nchwc_winograd computes 3x3, stride-1, dilation-1, ungrouped convolutions; "
                                    "use conv2d_nchwc for conv2d|N1_C8_H16_W16|K8_R3x3_S2x2"),
      std::string::npos)
      << space.status().message();
}

}  // namespace
}  // namespace tunefarm::compiler
