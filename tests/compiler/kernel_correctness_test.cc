// Random (workload, config, epilogue) triples of every template, JIT-compiled for the host and
// compared with the naive references (max relative error <= 1e-4; Winograd 3e-4).
#include <gtest/gtest.h>

#include "common/kernel_reference.h"
#include "tunefarm/testing/kernel_cases.h"

namespace tunefarm::compiler {
namespace {

constexpr int kCasesPerTemplate = 200;
constexpr int kCasesPerModule = 25;  // kernels JIT-compiled together, to keep the test fast

class KernelCorrectness : public ::testing::TestWithParam<std::string> {};

TEST_P(KernelCorrectness, RandomWorkloadsAndConfigsMatchReference) {
  const std::string tmpl = GetParam();
  Target host = HostTarget();
  std::mt19937_64 rng(std::hash<std::string>()(tmpl));
  // Winograd's F(4x4, 3x3) transforms amplify rounding by about ten; the error is measured against
  // the largest output, which a clip epilogue bounds below the accumulators' scale.
  const double tolerance = tmpl.find("winograd") != std::string::npos ? 3e-4 : 1e-4;
  int checked = 0;
  while (checked < kCasesPerTemplate) {
    std::vector<KernelSpec> specs;
    for (int i = 0; i < kCasesPerModule; ++i) {
      KernelSpec spec;
      spec.workload = testing::RandomWorkload(tmpl, rng);
      spec.epilogue = testing::RandomEpilogue(rng);
      spec.target = host;
      auto space = GetConfigSpace(spec.workload, host);
      ASSERT_TRUE(space.ok()) << space.status().ToString();
      if (i % 5 == 0) {
        spec.config_index = -1;  // the fallback config is part of the sample
      } else {
        auto cfg = space->RandomValid(rng);
        ASSERT_TRUE(cfg.ok()) << cfg.status().ToString();
        spec.config_index = cfg->index();
      }
      spec.symbol = "k" + std::to_string(checked + i);
      specs.push_back(spec);
    }
    std::vector<KernelInfo> infos;
    auto jit = BuildJit(specs, &infos);
    ASSERT_TRUE(jit.ok()) << jit.status().ToString();
    for (size_t i = 0; i < specs.size(); ++i) {
      auto fn = (*jit)->Lookup(specs[i].symbol);
      ASSERT_TRUE(fn.ok());
      testing::Buffers args = testing::RandomArguments(infos[i], rng);
      std::vector<float> expected = testing::ReferenceOutput(specs[i], infos[i], args);
      std::vector<void*> ptrs;
      for (auto& a : args) ptrs.push_back(a.data());
      ASSERT_EQ((*fn)(ptrs.data()), 0);
      double err = runtime::MaxRelativeError(args.back(), expected);
      EXPECT_LE(err, tolerance) << specs[i].workload.Key() << " epilogue " << specs[i].epilogue.ToString() << " config "
                                << infos[i].config_json;
    }
    checked += kCasesPerModule;
  }
}

INSTANTIATE_TEST_SUITE_P(AllTemplates, KernelCorrectness,
                         ::testing::Values("conv2d_nchwc", "depthwise_conv2d_nchwc", "dense_pack", "dense_nopack",
                                           "conv2d_nchwc_winograd", "batch_matmul"));

}  // namespace
}  // namespace tunefarm::compiler
