// The CUDA templates without a GPU: every kernel is lowered for the GPU (threads bound, launch
// verified), then executed on the CPU with the GPU's semantics (passes/emulate_gpu_on_host.h) and
// compared with the naive references; when ptxas is present their PTX must assemble within the
// register file; the fallback config of every conv/depthwise/dense workload of resnet-18,
// resnet-50 and mobilenet-v2 must be valid on every listed card.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <set>

#include "common/kernel_reference.h"
#include "compiler/codegen/codegen_nvptx.h"
#include "compiler/ir/ir_operators.h"
#include "compiler/passes/lower.h"
#include "compiler/schedule/op_template.h"
#include "compiler/schedule/template_table.h"
#include "compiler/te/schedule.h"
#include "tunefarm/compiler/kernel.h"
#include "tunefarm/compiler/model.h"
#include "tunefarm/compiler/winograd.h"
#include "tunefarm/testing/kernel_cases.h"

namespace tunefarm::compiler {
namespace {

constexpr int kCasesPerTemplate = 200;
constexpr int kCasesPerModule = 25;
const char* const kCards[] = {"h100", "h200", "a100", "a10", "l4", "t4", "rtx3090", "rtx4090"};

Target Gpu(const std::string& text) {
  auto t = ParseTarget(text);
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  return *t;
}

// `count` random (workload, config, epilogue) specs of a template for target, every fifth the fallback.
std::vector<KernelSpec> RandomSpecs(const std::string& tmpl, const Target& target, int count, int first,
                                    std::mt19937_64& rng) {
  std::vector<KernelSpec> specs;
  for (int i = 0; i < count; ++i) {
    KernelSpec spec;
    spec.workload = testing::RandomWorkload(tmpl, rng);
    spec.epilogue = testing::RandomEpilogue(rng);
    spec.target = target;
    auto space = GetConfigSpace(spec.workload, target);
    EXPECT_TRUE(space.ok()) << space.status().ToString();
    if (!space.ok()) return {};
    if (i % 5 == 0) {
      spec.config_index = -1;
    } else {
      auto cfg = space->RandomValid(rng);
      EXPECT_TRUE(cfg.ok()) << cfg.status().ToString();
      if (!cfg.ok()) return {};
      spec.config_index = cfg->index();
    }
    spec.symbol = "k" + std::to_string(first + i);
    specs.push_back(spec);
  }
  return specs;
}

class CudaTemplates : public ::testing::TestWithParam<std::string> {};

TEST_P(CudaTemplates, RandomCasesMatchReferenceWhenEmulatedOnTheCpu) {
  const std::string tmpl = GetParam();
  const Target target = Gpu("h100 -emulate=host");  // lowered for the H100, run on this CPU
  std::mt19937_64 rng(std::hash<std::string>()(tmpl));
  int checked = 0, invalid = 0, with_vthreads = 0;
  double max_err = 0;
  while (checked < kCasesPerTemplate) {
    std::vector<KernelSpec> specs;
    // A config the space's filters admit may still fail the launch verifier (its estimates are
    // conservative only in one direction); such a config is an instantiation error, reported
    // before any build, and is not a case.
    for (const KernelSpec& spec : RandomSpecs(tmpl, target, kCasesPerModule, checked, rng)) {
      auto info = DescribeKernel(spec);
      if (info.ok()) {
        specs.push_back(spec);
      } else {
        ++invalid;
        EXPECT_EQ(info.status().code(), StatusCode::kInvalidArgument) << info.status().ToString();
        EXPECT_NE(spec.config_index, -1) << "fallback rejected: " << info.status().ToString();
      }
    }
    if (specs.empty()) continue;
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
      max_err = std::max(max_err, err);
      if (infos[i].config_json.find("\"tile_f\":[") != std::string::npos) {
        auto space = GetConfigSpace(specs[i].workload, target);  // a Config borrows its space
        auto cfg = space->Get(infos[i].config_index);
        if (cfg.ok() && cfg->Get("tile_f").size() == 4 &&
            cfg->Get("tile_f")[1] * cfg->Get("tile_y")[1] * cfg->Get("tile_x")[1] > 1) {
          ++with_vthreads;
        }
      }
      EXPECT_LE(err, 1e-4) << specs[i].workload.Key() << " epilogue " << specs[i].epilogue.ToString() << " config "
                           << infos[i].config_json;
    }
    checked += int(specs.size());
  }
  std::printf(
      "%s: %d cases emulated, max relative error %.3g, %d with virtual threads, %d configs refused by "
      "the launch verifier\n",
      tmpl.c_str(), checked, max_err, with_vthreads, invalid);
  // The filters should rarely let an invalid config through.
  EXPECT_LE(invalid, kCasesPerTemplate / 10) << invalid << " configs failed launch verification";
}

TEST_P(CudaTemplates, PtxAssemblesWithinTheRegisterFileForSm75Sm80Sm90) {
  const std::string ptxas = FindPtxas();
  if (ptxas.empty()) GTEST_SKIP() << "no ptxas on this machine (no CUDA toolkit at /usr/local/cuda or on PATH)";
  const std::string tmpl = GetParam();
  std::mt19937_64 rng(std::hash<std::string>()(tmpl) + 1);
  // 20 per architecture in CI; TUNEFARM_PTX_CASES=200 checks as many as the emulation test.
  const char* env = std::getenv("TUNEFARM_PTX_CASES");
  const int cases = env ? std::max(1, std::atoi(env)) : 20;
  for (const char* arch : {"sm_75", "sm_80", "sm_90"}) {
    const Target target = Gpu(std::string("cuda -arch=") + arch);
    std::vector<KernelSpec> specs;
    for (const KernelSpec& spec : RandomSpecs(tmpl, target, cases, 0, rng)) {
      if (DescribeKernel(spec).ok()) specs.push_back(spec);
    }
    std::vector<KernelInfo> infos;
    auto ptx = BuildPtx(specs, &infos);  // runs ptxas -v and checks registers x threads
    ASSERT_TRUE(ptx.ok()) << arch << ": " << ptx.status().ToString();
    EXPECT_NE(ptx->find(".entry k0"), std::string::npos);
    for (const auto& info : infos) {
      EXPECT_GT(info.registers, 0) << info.symbol;
      EXPECT_LE(info.registers * info.block[0] * info.block[1] * info.block[2], target.gpu.max_registers_per_block);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(All, CudaTemplates,
                         ::testing::Values("conv2d_nchw_cuda", "depthwise_conv2d_nchw_cuda", "dense_cuda",
                                           "dense_small_batch_cuda", "conv2d_nchw_winograd_cuda", "batch_matmul_cuda"));

TEST(CudaFallbacks, EveryModelWorkloadIsValidOnEveryListedCard) {
  std::set<std::string> keys;
  std::vector<Workload> workloads;
  for (const char* model : {"resnet-18", "resnet-50", "mobilenet-v2"}) {
    auto tasks = ExtractTasks(model, HostTarget());
    ASSERT_TRUE(tasks.ok()) << tasks.status().ToString();
    // Every CUDA implementation of each CPU task's operator (the strategy table's: the
    // cross-thread reduction for dense, Winograd for 3x3 stride 1).
    for (const Task& t : *tasks) {
      for (const Workload& w : Implementations(t.workload, Gpu("h100"))) {
        if (keys.insert(w.ImplementationKey()).second) workloads.push_back(w);
      }
    }
  }
  // ViT-B/16's patch embedding: a 16x16 window whose whole-window staging overflowed shared memory.
  for (const Workload& w : Implementations(Conv2dWorkload(1, 3, 224, 224, 768, 16, 16, 16, 0), Gpu("h100"))) {
    if (keys.insert(w.ImplementationKey()).second) workloads.push_back(w);
  }
  ASSERT_GE(workloads.size(), 40u);
  const std::string ptxas = FindPtxas();
  for (const char* card : kCards) {
    const Target target = Gpu(card);
    std::vector<KernelSpec> specs;
    for (const Workload& w : workloads) {
      KernelSpec spec{w, Epilogue{true, false, Activation::kRelu}, target, -1, ""};
      spec.symbol = "f" + std::to_string(specs.size());
      auto info = DescribeKernel(spec);  // lowering + launch verification
      ASSERT_TRUE(info.ok()) << card << " " << w.Key() << ": " << info.status().ToString();
      // Never "one thread per block": the fallback uses the GPU.
      EXPECT_GE(info->block[0] * info->block[1] * info->block[2], 32)
          << card << " " << w.Key() << " " << info->config_json;
      specs.push_back(spec);
    }
    if (!ptxas.empty()) {
      std::vector<KernelInfo> infos;
      auto ptx = BuildPtx(specs, &infos);
      ASSERT_TRUE(ptx.ok()) << card << ": " << ptx.status().ToString();
    }
  }
  if (ptxas.empty()) std::cout << "[ note ] no ptxas here: register counts of the fallbacks not checked\n";
}

TEST(CudaLowering, AnInvalidConfigIsAnInstantiationErrorNamingTheLimit) {
  Workload w = Conv2dWorkload(1, 64, 56, 56, 64, 3, 3, 1, 1);
  w.implementation = "conv2d_nchw_cuda";
  const Target t4 = Gpu("t4");
  auto space = GetConfigSpace(w, t4);
  ASSERT_TRUE(space.ok());
  // 64 x 8 x 8 threads: the space's filters reject it, and building it anyway says why.
  auto cfg = space->FromValues({{"tile_f", {1, 1, 64, 1}},
                                {"tile_y", {7, 1, 8, 1}},
                                {"tile_x", {7, 1, 8, 1}},
                                {"tile_rc", {8, 8}},
                                {"tile_ry", {1, 3}},
                                {"tile_rx", {1, 3}},
                                {"auto_unroll_max_step", {0}}});
  ASSERT_TRUE(cfg.ok()) << cfg.status().ToString();
  EXPECT_FALSE(space->IsValid(*cfg));
  KernelSpec spec{w, {}, t4, cfg->index(), ""};
  auto info = DescribeKernel(spec);
  ASSERT_FALSE(info.ok());
  EXPECT_NE(info.status().message().find("4096 threads per block exceed the target's 1024"), std::string::npos)
      << info.status().ToString();
}

// Two virtual threads per dimension spread a thread's outputs 2 pieces apart; its register tile
// still holds exactly its own 2x2 (f) x 2 (y) x 1 (x) outputs, folded, not the span between them.
TEST(CudaLowering, VirtualThreadsKeepTheRegisterTileExact) {
  Workload w = Conv2dWorkload(1, 64, 56, 56, 64, 3, 3, 1, 1);
  w.implementation = "conv2d_nchw_cuda";
  const Target h100 = Gpu("h100");
  auto space = GetConfigSpace(w, h100);
  ASSERT_TRUE(space.ok());
  auto cfg = space->FromValues({{"tile_f", {2, 2, 8, 2}},
                                {"tile_y", {7, 2, 4, 1}},
                                {"tile_x", {7, 1, 8, 1}},
                                {"tile_rc", {8, 8}},
                                {"tile_ry", {1, 3}},
                                {"tile_rx", {1, 3}},
                                {"auto_unroll_max_step", {512}}});
  ASSERT_TRUE(cfg.ok()) << cfg.status().ToString();
  auto tmpl = FindTemplate(w.implementation);
  ASSERT_TRUE(tmpl.ok());
  KernelDef def = (*tmpl)->Instantiate(w, {}, *cfg, h100);
  auto func = passes::Lower(*def.schedule, def.args, "vt", h100, passes::StepList::kGpu);
  ASSERT_TRUE(func.ok()) << func.status().ToString();
  EXPECT_EQ(func->launch.local_bytes, 8 * 4) << func->launch.ToString();
  EXPECT_EQ(func->launch.threads_per_block(), 8 * 4 * 8);
  // And the kernel computes the convolution (emulated).
  std::mt19937_64 rng(5);
  Target emulated = h100;
  emulated.emulated = true;
  KernelSpec spec{w, Epilogue{true, true, Activation::kRelu}, emulated, cfg->index(), "vt"};
  std::vector<KernelInfo> infos;
  auto jit = BuildJit({spec}, &infos);
  ASSERT_TRUE(jit.ok()) << jit.status().ToString();
  testing::Buffers args = testing::RandomArguments(infos[0], rng);
  std::vector<float> expected = testing::ReferenceOutput(spec, infos[0], args);
  std::vector<void*> ptrs;
  for (auto& a : args) ptrs.push_back(a.data());
  ASSERT_EQ((*(*jit)->Lookup("vt"))(ptrs.data()), 0);
  EXPECT_LE(runtime::MaxRelativeError(args.back(), expected), 1e-4);
}

TEST(CudaLowering, KernelInfoCarriesTheLaunchThroughJson) {
  Workload w = DenseWorkload(1, 512, 1000);
  w.implementation = "dense_cuda";
  KernelSpec spec{w, {}, Gpu("h200"), -1, ""};
  auto info = DescribeKernel(spec);
  ASSERT_TRUE(info.ok()) << info.status().ToString();
  EXPECT_TRUE(info->gpu);
  auto back = KernelInfo::FromJson(info->ToJson());
  ASSERT_TRUE(back.ok());
  EXPECT_TRUE(back->gpu);
  for (int d = 0; d < 3; ++d) {
    EXPECT_EQ(back->grid[d], info->grid[d]);
    EXPECT_EQ(back->block[d], info->block[d]);
  }
  EXPECT_EQ(back->shared_bytes, info->shared_bytes);
  EXPECT_GT(info->shared_bytes, 0);
}

TEST(CudaLowering, CpuJitOfACudaSpecSaysHowToRunIt) {
  Workload w = DenseWorkload(1, 64, 32);
  w.implementation = "dense_cuda";
  auto jit = BuildJit({KernelSpec{w, {}, Gpu("h100"), -1, "d"}}, nullptr);
  ASSERT_FALSE(jit.ok());
  EXPECT_NE(jit.status().message().find("CUDA kernels run on a GPU"), std::string::npos) << jit.status().ToString();
}

}  // namespace
}  // namespace tunefarm::compiler
