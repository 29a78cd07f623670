// Backends (compiler/backend/backend.h): each target kind's code path is chosen once, and its
// answers are the ones the compiler used to branch on -- what kernels are lowered for, whether
// layouts are planned, what code is emitted and where it runs, what a tuning candidate is. A
// scan of compiler/ checks that nothing outside the backends, the target parser and the
// lowering's step list asks a target its kind.
#include "compiler/backend/backend.h"

#include <gtest/gtest.h>

#include <sstream>

#include "common/source_scan.h"
#include "compiler/codegen/codegen_nvptx.h"
#include "tunefarm/compiler/kernel.h"

namespace tunefarm::compiler {
namespace {

TEST(Backend, EachKindHasOneAndItsAnswers) {
  const Target cpu = HostTarget(), gpu = *ParseTarget("h100"), emulated = *ParseTarget("h100 -emulate=host");
  const Backend& b_cpu = BackendFor(cpu);
  const Backend& b_gpu = BackendFor(gpu);
  const Backend& b_emu = BackendFor(emulated);
  EXPECT_EQ(&b_cpu, &CpuBackend());
  EXPECT_EQ(&b_gpu, &CudaBackend());
  EXPECT_EQ(&b_emu, &EmulatedCudaBackend());
  EXPECT_EQ(&BackendFor(*ParseTarget("rasp4b")), &CpuBackend());
  EXPECT_STREQ(b_cpu.name(), "llvm");
  EXPECT_STREQ(b_gpu.name(), "cuda");
  EXPECT_STREQ(b_emu.name(), "cuda emulated on the host");
  EXPECT_FALSE(b_cpu.gpu_kernels());
  EXPECT_TRUE(b_gpu.gpu_kernels());
  EXPECT_TRUE(b_emu.gpu_kernels());  // lowered for a launch, run as host loops
  EXPECT_TRUE(b_cpu.PlansLayouts(3));
  EXPECT_FALSE(b_cpu.PlansLayouts(2));
  EXPECT_FALSE(b_gpu.PlansLayouts(3));
  EXPECT_FALSE(b_emu.PlansLayouts(3));
  EXPECT_STREQ(b_cpu.artifact_device(), "cpu");
  EXPECT_STREQ(b_gpu.artifact_device(), "cuda");
  EXPECT_STREQ(b_emu.artifact_device(), "cpu");
  EXPECT_EQ(b_gpu.CodeTarget(gpu).ToString(), gpu.ToString());
  EXPECT_EQ(b_emu.CodeTarget(emulated).ToString(), HostTarget().ToString());
}

// What a tuning candidate is, per kind: an ELF shared library on a CPU; PTX (and ptxas's cubin
// where ptxas is here) on CUDA; nothing a measurer could time for emulated CUDA, said so.
TEST(Backend, TuningCandidatesPerKind) {
  const std::string tmp = ::testing::TempDir();
  KernelSpec spec;
  spec.workload = Conv2dWorkload(1, 16, 14, 14, 16, 3, 3, 1, 1);
  spec.target = HostTarget();
  spec.symbol = "candidate";
  auto cpu = BuildCandidate(spec, tmp);
  ASSERT_TRUE(cpu.ok()) << cpu.status().ToString();
  EXPECT_EQ(cpu->library.substr(0, 4),
            "\x7f"
            "ELF");
  EXPECT_TRUE(cpu->cubin.empty());
  EXPECT_FALSE(cpu->info.gpu);

  spec.workload.implementation = "conv2d_nchw_cuda";
  spec.target = *ParseTarget("h100");
  auto gpu = BuildCandidate(spec, tmp);
  ASSERT_TRUE(gpu.ok()) << gpu.status().ToString();
  EXPECT_NE(gpu->library.find(".entry candidate"), std::string::npos);
  EXPECT_EQ(gpu->cubin.empty(), FindPtxas().empty());
  EXPECT_TRUE(gpu->info.gpu);

  spec.target = *ParseTarget("h100 -emulate=host");
  auto emulated = BuildCandidate(spec, tmp);
  ASSERT_FALSE(emulated.ok());
  EXPECT_EQ(emulated.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(emulated.status().message(),
            "target 'cuda -arch=sm_90 -model=h100 -emulate=host' emulates CUDA on the host to check results; a tuning "
            "candidate is timed on the GPU: tune for the GPU's target (drop -emulate=host)");
  auto ptx = BuildPtx({spec}, nullptr);
  ASSERT_FALSE(ptx.ok());
  EXPECT_EQ(ptx.status().message(),
            "PTX is for CUDA targets, not 'cuda -arch=sm_90 -model=h100 -emulate=host' (its backend: cuda emulated on "
            "the host)");

  spec.target = *ParseTarget("h100");
  auto jit = BuildJit({spec}, nullptr);
  ASSERT_FALSE(jit.ok());
  EXPECT_EQ(
      jit.status().message(),
      "CUDA kernels run on a GPU: build PTX (BuildPtx) and load it there, or emulate the target (-emulate=host) to "
      "run them on this CPU");
}

// Only the backends, the target parser, the lowering's step list (passes/lower.cc) and the NVPTX
// code generator's own precondition ask a target whether it is CUDA or emulated; everything else
// asks its backend.
TEST(Backend, NothingElseInTheCompilerAsksATargetItsKind) {
  const char* src = std::getenv("TUNEFARM_SOURCE_DIR");
  ASSERT_NE(src, nullptr) << "TUNEFARM_SOURCE_DIR is set by CTest";
  const std::vector<std::string> allowed = {"compiler/backend/", "compiler/target/",
                                            "compiler/include/tunefarm/compiler/target.h", "compiler/passes/lower.cc",
                                            "compiler/codegen/codegen_nvptx.cc"};
  const auto offenders = testing::LinesBreakingARule(src, {"compiler"}, allowed, [](const std::string& line) {
    return (line.find("is_cuda()") != std::string::npos && line.find("artifact.is_cuda()") == std::string::npos) ||
           line.find(".emulated") != std::string::npos;
  });
  std::ostringstream all;
  for (const auto& o : offenders) all << o << "\n";
  EXPECT_TRUE(offenders.empty()) << "ask BackendFor(target) (compiler/backend/backend.h):\n" << all.str();
}

}  // namespace
}  // namespace tunefarm::compiler
