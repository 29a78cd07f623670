// Winograd on CUDA against direct convolution: the weights transformed at compile time
// (WinogradWeightTransform) and the GPU-scheduled kernel emulated on the CPU must give the direct
// convolution of the original 3x3 weights, for both output tiles (m = 2 and 4), with padding and
// edge tiles; and Winograd applies only where it computes the same thing.
#include <gtest/gtest.h>

#include <random>

#include "common/kernel_reference.h"
#include "tunefarm/compiler/kernel.h"
#include "tunefarm/compiler/model.h"
#include "tunefarm/compiler/winograd.h"
#include "tunefarm/testing/kernel_cases.h"

namespace tunefarm::compiler {
namespace {

Target H100() { return *ParseTarget("h100"); }
Target H100Emulated() { return *ParseTarget("h100 -emulate=host"); }

TEST(CudaWinograd, TransformedWeightsAndTheEmulatedKernelGiveTheDirectConvolution) {
  std::mt19937_64 rng(3);
  struct Shape {
    int64_t c, h, w, k, pad;
    int expected_m;
  };
  // 8x8 and 16x12 outputs: m = 4; 7x7 and 13x9: m = 2 with partial edge tiles; no padding too.
  for (const Shape& sh : {Shape{8, 8, 8, 16, 1, 4}, Shape{5, 16, 12, 8, 1, 4}, Shape{16, 7, 7, 32, 1, 2},
                          Shape{3, 13, 9, 4, 1, 2}, Shape{4, 10, 10, 4, 0, 4}}) {
    Workload direct = Conv2dWorkload(1, sh.c, sh.h, sh.w, sh.k, 3, 3, 1, sh.pad);
    direct.implementation = "conv2d_nchw_cuda";
    Workload wino = direct;
    wino.implementation = "conv2d_nchw_winograd_cuda";
    EXPECT_EQ(WinogradTileSize(wino.conv), sh.expected_m) << wino.Key();
    const Epilogue ep{true, true, Activation::kRelu};
    KernelSpec direct_spec{direct, ep, H100(), -1, "direct"};
    auto direct_info = DescribeKernel(direct_spec);
    ASSERT_TRUE(direct_info.ok()) << direct_info.status().ToString();
    testing::Buffers args = testing::RandomArguments(*direct_info, rng);
    std::vector<float> expected = testing::ReferenceOutput(direct_spec, *direct_info, args);

    std::vector<KernelInfo> infos;
    auto jit = BuildJit({KernelSpec{wino, ep, H100Emulated(), -1, "wino"}}, &infos);
    ASSERT_TRUE(jit.ok()) << jit.status().ToString();
    const int alpha = sh.expected_m + 2;
    EXPECT_EQ(infos[0].buffers[1].shape, (std::vector<int64_t>{alpha, alpha, sh.k, sh.c}));
    testing::Buffers wino_args = args;
    wino_args[1] = WinogradWeightTransform(args[1], sh.k, sh.c, 1, **WinogradFor(sh.expected_m));
    std::vector<void*> ptrs;
    for (auto& a : wino_args) ptrs.push_back(a.data());
    ASSERT_EQ((*(*jit)->Lookup("wino"))(ptrs.data()), 0);
    EXPECT_LE(runtime::MaxRelativeError(wino_args.back(), expected), 1e-4) << wino.Key();
  }
}

TEST(CudaWinograd, AppliesOnlyTo3x3StrideOneUngroupedConvolutions) {
  for (auto [kernel, stride, groups, dilation] :
       {std::tuple{1, 1, 1, 1}, std::tuple{3, 2, 1, 1}, std::tuple{3, 1, 2, 1}, std::tuple{3, 1, 1, 2}}) {
    Workload w = Conv2dWorkload(1, 8, 14, 14, 8, kernel, kernel, stride, 1, dilation, groups);
    w.implementation = "conv2d_nchw_winograd_cuda";
    auto space = GetConfigSpace(w, H100());
    ASSERT_FALSE(space.ok()) << w.Key();
    EXPECT_NE(space.status().message().find("computes 3x3, stride-1, dilation-1, ungrouped convolutions"),
              std::string::npos)
        << space.status().ToString();
  }
  EXPECT_FALSE(WinogradFor(3).ok());
  EXPECT_NE(WinogradFor(3).status().message().find("Winograd output tile 3 is not built (2, 4 or 6)"),
            std::string::npos);
}

}  // namespace
}  // namespace tunefarm::compiler
