// CUDA measurements (rpc_server --device cuda): the checks every machine can make (PTX and launch
// validation, a clear error without a driver), and on a GPU host a real dense_cuda kernel built
// by the compiler, timed and checked, plus the hostile kernels -- an out-of-bounds write, an
// endless loop, a launch the kernel's resources forbid -- each costing exactly one failed trial.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "common/gpu_test.h"
#include "common/kernel_reference.h"
#include "common/test_files.h"
#include "compiler/codegen/codegen_nvptx.h"
#include "compiler/codegen/object_emitter.h"
#include "rpc_server/measure/arguments.h"
#include "tunefarm/compiler/kernel.h"
#include "tunefarm/rpc_server/measurement.h"
#include "tunefarm/runtime/cuda_driver.h"

namespace tunefarm::rpc_server {
namespace {

// Hand-written PTX: `body` between the parameter loads and ret. %rd3/%rd4: in/out global pointers,
// %r1: threadIdx.x, %rd5: its byte offset.
std::string Ptx(const std::string& name, const std::string& body, const std::string& directives = "") {
  return ".version 7.8\n.target sm_75\n.address_size 64\n.visible .entry " + name +
         "(.param .u64 in, .param .u64 out)" + directives +
         "\n{\n.reg .b32 %r<4>;\n.reg .b64 %rd<10>;\n.reg .f32 %f<3>;\n.reg .pred %p<2>;\n"
         "ld.param.u64 %rd1, [in];\nld.param.u64 %rd2, [out];\ncvta.to.global.u64 %rd3, %rd1;\n"
         "cvta.to.global.u64 %rd4, %rd2;\nmov.u32 %r1, %tid.x;\nmul.wide.u32 %rd5, %r1, 4;\n" +
         body + "ret;\n}\n";
}
const char* kDouble =
    "add.s64 %rd6, %rd3, %rd5;\nld.global.f32 %f1, [%rd6];\nadd.f32 %f2, %f1, %f1;\n"
    "add.s64 %rd7, %rd4, %rd5;\nst.global.f32 [%rd7], %f2;\n";

class CudaMeasurement : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "tunefarm_cuda_measure_" + std::to_string(getpid());
    ASSERT_EQ(system(("rm -rf " + dir_ + " && mkdir -p " + dir_).c_str()), 0);
  }
  void TearDown() override { ASSERT_EQ(system(("rm -rf " + dir_).c_str()), 0); }
  MeasureSpec Spec(const std::string& symbol, int threads = 64) {
    MeasureSpec s;
    s.symbol = symbol;
    s.args = {ArgSpec{{threads}, "float32", "input"}, ArgSpec{{threads}, "float32", "output"}};
    s.gpu.enabled = true;
    s.gpu.block[0] = threads;
    s.timing.number = 10;
    s.timing.repeat = 3;
    s.timing.timeout_ms = 5000;
    return s;
  }
  MeasureOutcome Run(const std::string& ptx, const MeasureSpec& spec) {
    return MeasureIsolated({testing::ProgramPath(MEASURE_CHILD)}, dir_, ptx, spec);
  }
  std::string dir_;
};

TEST_F(CudaMeasurement, PtxAndLaunchAreCheckedBeforeAnythingRuns) {
  MeasureOutcome garbage = Run("garbage", Spec("twice"));
  EXPECT_EQ(garbage.kind, OutcomeKind::kCompile);
  EXPECT_EQ(
      garbage.message,
      "the kernel is neither PTX text (no .version/.target directives) nor a cubin: a CUDA server measures PTX or "
      "a cubin");
  MeasureOutcome elf = Run(std::string("\x7f"
                                       "ELF garbage"),
                           Spec("twice"));
  EXPECT_EQ(elf.kind, OutcomeKind::kCompile);
  EXPECT_EQ(elf.message, "the kernel is a truncated ELF file (12 bytes), not a cubin");
  // An ELF header for x86-64 (machine 62), and one for CUDA (190) that does not name the kernel.
  std::string header(64, '\0');
  header.replace(0, 4,
                 "\x7f"
                 "ELF");
  header[18] = char(62);
  EXPECT_EQ(Run(header, Spec("twice")).message, "the kernel is an ELF file for machine 62, not a cubin (EM_CUDA, 190)");
  header[18] = char(190);
  EXPECT_EQ(Run(header + "other", Spec("twice")).message, "the cubin has no symbol 'twice'");
  MeasureOutcome absent = Run(Ptx("twice", kDouble), Spec("thrice"));
  EXPECT_EQ(absent.kind, OutcomeKind::kCompile);
  EXPECT_EQ(absent.message, "the PTX has no entry 'thrice'");
  MeasureSpec wide = Spec("twice");
  wide.gpu.block[1] = 32;
  EXPECT_EQ(Run(Ptx("twice", kDouble), wide).message, "launch.block has 2048 threads; a block holds at most 1024");
  MeasureSpec zero = Spec("twice");
  zero.gpu.grid[2] = 0;
  EXPECT_EQ(Run(Ptx("twice", kDouble), zero).message, "launch.grid needs 3 sizes in [1, 2^31-1]");
  // The spec crosses to the child intact.
  auto back = ParseSpec(SerializeSpec(wide));
  ASSERT_TRUE(back.ok());
  EXPECT_TRUE(back->gpu.enabled);
  EXPECT_EQ(back->gpu.block[1], 32);
}

TEST_F(CudaMeasurement, WithoutADriverTheTrialFailsSayingSo) {
  TUNEFARM_NEED_NO_DRIVER();
  MeasureOutcome o = Run(Ptx("twice", kDouble), Spec("twice"));
  EXPECT_EQ(o.kind, OutcomeKind::kRuntimeCrash);
  EXPECT_EQ(o.message.rfind("cannot open the GPU: no CUDA driver: " + CudaDriverLibraryName() + " cannot be loaded", 0),
            0u)
      << o.message;
}

// The CUDA target of this machine's first GPU (sm_90 for every Hopper part).
Result<compiler::Target> FirstGpuTarget(std::string* name) {
  TUNEFARM_ASSIGN_OR_RETURN(auto driver, CudaDriver::Load());
  TUNEFARM_ASSIGN_OR_RETURN(auto gpu, driver->Describe(0));
  if (name) *name = gpu.name;
  return compiler::ParseTarget("cuda -arch=" + std::string(gpu.compute_major >= 9 ? "sm_90" : gpu.arch()));
}

// How a compiled kernel is measured: its arguments, launch, and the expected outputs computed by
// the naive reference from the same seeded stream the child uses.
MeasureSpec CheckedSpec(const compiler::KernelSpec& spec, const compiler::KernelInfo& info, uint64_t seed) {
  MeasureSpec m;
  m.symbol = spec.symbol;
  for (const auto& b : info.buffers) m.args.push_back(ArgSpec{b.shape, b.dtype, b.role});
  m.gpu.enabled = true;
  for (int d = 0; d < 3; ++d) {
    m.gpu.grid[d] = info.grid[d];
    m.gpu.block[d] = info.block[d];
  }
  m.seed = seed;
  ArgumentStream rng(m.seed);
  testing::Buffers args;
  for (const ArgSpec& a : m.args) {
    args.emplace_back(size_t(a.num_elements()));
    SeedArgument(a, args.back().data(), rng);
  }
  m.expected_outputs = testing::ReferenceOutput(spec, info, args);
  return m;
}

TEST_F(CudaMeasurement, OnAGpuACompiledKernelIsTimedAndChecked) {
  TUNEFARM_NEED_GPU();
  std::string gpu_name;
  auto target = FirstGpuTarget(&gpu_name);
  ASSERT_TRUE(target.ok()) << target.status().ToString();
  compiler::Workload w = compiler::DenseWorkload(1, 512, 1000);
  w.implementation = "dense_cuda";
  compiler::KernelSpec spec{w, compiler::Epilogue{true, false, compiler::Activation::kRelu}, *target, -1, "dense"};
  std::vector<compiler::KernelInfo> infos;
  auto ptx = compiler::BuildPtx({spec}, &infos);
  ASSERT_TRUE(ptx.ok()) << ptx.status().ToString();
  MeasureSpec m = CheckedSpec(spec, infos[0], 7);
  m.timing.number = 20;
  m.timing.repeat = 3;
  m.timing.timeout_ms = 20000;
  MeasureOutcome o = Run(*ptx, m);
  ASSERT_EQ(o.kind, OutcomeKind::kOk) << o.message;
  ASSERT_EQ(o.costs_ms.size(), 3u);
  for (double c : o.costs_ms) EXPECT_GT(c, 0);
  std::printf("dense 1x512->1000 fallback on %s: %.4f ms (%d launches per round)\n", gpu_name.c_str(), o.costs_ms[0],
              o.number);
}

// ResNet-18's 3x3 conv at 56x56 under a few random configs of the CUDA template (the tuner's
// candidates), each built to PTX and, with ptxas here, to a cubin for the target's arch.
struct Candidates {
  std::vector<compiler::KernelSpec> specs;
  std::vector<compiler::KernelInfo> infos;
  std::vector<std::string> ptx, cubin;
};
Candidates BuildConvCandidates(const compiler::Target& target, int count) {
  Candidates c;
  compiler::Workload w = compiler::Conv2dWorkload(1, 64, 56, 56, 64, 3, 3, 1, 1);
  w.implementation = "conv2d_nchw_cuda";
  auto space = compiler::GetConfigSpace(w, target);
  EXPECT_TRUE(space.ok()) << space.status().ToString();
  std::mt19937_64 rng(11);
  for (int tries = 0; space.ok() && int(c.specs.size()) < count && tries < 50 * count; ++tries) {
    auto cfg = space->RandomValid(rng);
    if (!cfg.ok()) continue;
    compiler::KernelSpec spec{w, compiler::Epilogue{}, target, cfg->index(), "conv"};
    std::vector<compiler::KernelInfo> infos;
    std::string cubin;
    compiler::BuildOptions options;
    options.cubin = &cubin;
    auto ptx = compiler::BuildPtx({spec}, &infos, options);
    if (!ptx.ok()) continue;  // a config the launch verifier or the register check refuses
    c.specs.push_back(spec);
    c.infos.push_back(infos[0]);
    c.ptx.push_back(*ptx);
    c.cubin.push_back(cubin);
  }
  return c;
}

// What a tuner's candidate builds cost on this machine, with one build job and with one per core:
// each phase (lowering, LLVM's NVPTX code generation, ptxas) per candidate, and the wall time per
// candidate when every core builds. The GPU check kit runs it with 32 candidates on the GPU host
// (TUNEFARM_BUILD_PROFILE_CANDIDATES), where the farm's builds ran tenfold slower than here; the
// assertions hold anywhere: every build succeeds, and a candidate built on many threads at once is
// byte for byte the one built alone (the builder shares nothing between threads).
TEST_F(CudaMeasurement, CandidateBuildsOnOneJobAndOnEveryCore) {
  auto target = compiler::ParseTarget("h100");
  ASSERT_TRUE(target.ok());
  const char* env = std::getenv("TUNEFARM_BUILD_PROFILE_CANDIDATES");
  const int count = env ? std::max(1, std::atoi(env)) : 4;
  const int jobs = int(std::max(2u, std::thread::hardware_concurrency()));
  Candidates c = BuildConvCandidates(*target, count);
  ASSERT_EQ(int(c.specs.size()), count);
  const std::string ptxas = compiler::FindPtxas();

  struct Build {
    std::string ptx, cubin;
    compiler::BuildOptions::Times times;
    bool ok = false;
  };
  using Clock = std::chrono::steady_clock;
  auto build_all = [&](int threads, double* wall_ms) {
    std::vector<Build> out(c.specs.size());
    std::atomic<size_t> next{0};
    const auto t0 = Clock::now();
    std::vector<std::thread> workers;
    for (int j = 0; j < threads; ++j) {
      workers.emplace_back([&] {
        for (size_t i; (i = next++) < c.specs.size();) {
          compiler::BuildOptions options;
          options.cubin = &out[i].cubin;
          options.times = &out[i].times;
          auto ptx = compiler::BuildPtx({c.specs[i]}, nullptr, options);
          out[i].ok = ptx.ok();
          if (ptx.ok()) out[i].ptx = *ptx;
        }
      });
    }
    for (auto& w : workers) w.join();
    *wall_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    return out;
  };
  auto phases = [&](const std::vector<Build>& builds) {
    compiler::BuildOptions::Times sum;
    for (const Build& b : builds) {
      sum.lower_ms += b.times.lower_ms / double(builds.size());
      sum.codegen_ms += b.times.codegen_ms / double(builds.size());
      sum.tool_ms += b.times.tool_ms / double(builds.size());
    }
    return sum;
  };
  // Spawning a tool from this (large, threaded) process, alone and from every core at once.
  auto spawn_ms = [&](int threads) {
    const int per_thread = 8;
    const auto t0 = Clock::now();
    std::vector<std::thread> workers;
    for (int j = 0; j < threads; ++j) {
      workers.emplace_back([] {
        for (int k = 0; k < per_thread; ++k) EXPECT_TRUE(compiler::RunTool({"true"}, "timing a spawn").ok());
      });
    }
    for (auto& w : workers) w.join();
    return std::chrono::duration<double, std::milli>(Clock::now() - t0).count() / per_thread;
  };

  double alone_ms = 0, parallel_ms = 0;
  const std::vector<Build> alone = build_all(1, &alone_ms);
  const std::vector<Build> parallel = build_all(jobs, &parallel_ms);
  for (size_t i = 0; i < c.specs.size(); ++i) {
    ASSERT_TRUE(alone[i].ok && parallel[i].ok) << "candidate " << i;
    EXPECT_EQ(alone[i].ptx, parallel[i].ptx) << "candidate " << i << " built differently on " << jobs << " threads";
    EXPECT_EQ(alone[i].cubin.empty(), ptxas.empty()) << "candidate " << i;
  }
  const auto a = phases(alone), p = phases(parallel);
  const double n = double(c.specs.size());
  std::printf(
      "candidate builds (conv2d 64x56x56 3x3 for h100, %d candidates, ptxas: %s): 1 job: %.0f ms each "
      "(lowering %.0f, LLVM %.0f, ptxas %.0f); %d jobs: %.1f ms each of wall time, %.0f ms each of work "
      "(lowering %.0f, LLVM %.0f, ptxas %.0f), %.1f jobs busy; spawning a tool: %.1f ms alone, %.1f ms on %d "
      "threads at once\n",
      count, ptxas.empty() ? "none" : ptxas.c_str(), alone_ms / n, a.lower_ms, a.codegen_ms, a.tool_ms, jobs,
      parallel_ms / n, p.lower_ms + p.codegen_ms + p.tool_ms, p.lower_ms, p.codegen_ms, p.tool_ms,
      (p.lower_ms + p.codegen_ms + p.tool_ms) * n / parallel_ms, spawn_ms(1), spawn_ms(jobs), jobs);
}

// With ptxas on the tuning machine, a candidate travels with ptxas's cubin, which a server whose GPU
// has that arch loads without the driver's JIT: what the server checks of it.
TEST_F(CudaMeasurement, ACubinFromPtxasIsAcceptedNamingItsKernel) {
  auto target = compiler::ParseTarget("h100");
  ASSERT_TRUE(target.ok());
  Candidates c = BuildConvCandidates(*target, 1);
  ASSERT_EQ(c.specs.size(), 1u);
  if (c.cubin[0].empty()) GTEST_SKIP() << "no ptxas on this machine: candidates travel as PTX alone";
  EXPECT_EQ(c.cubin[0].compare(0, 4,
                               "\x7f"
                               "ELF"),
            0);
  EXPECT_TRUE(CheckPtx(c.cubin[0], "conv").ok());
  EXPECT_EQ(CheckPtx(c.cubin[0], "dense").message(), "the cubin has no symbol 'dense'");
}

// The same candidates measured on the GPU from PTX (the driver JIT-compiles each) and from the
// cubin: both correct, and the load times side by side (the kit's report shows them).
TEST_F(CudaMeasurement, OnAGpuCandidatesLoadFromPtxAndFromTheirCubin) {
  TUNEFARM_NEED_GPU();
  std::string gpu_name;
  auto target = FirstGpuTarget(&gpu_name);
  ASSERT_TRUE(target.ok()) << target.status().ToString();
  Candidates c = BuildConvCandidates(*target, 8);
  ASSERT_FALSE(c.specs.empty());
  MeasureWorker worker({testing::ProgramPath(MEASURE_CHILD)}, dir_);
  double ptx_load = 0, cubin_load = 0, run = 0;
  int cubins = 0;
  for (size_t i = 0; i < c.specs.size(); ++i) {
    MeasureSpec m = CheckedSpec(c.specs[i], c.infos[i], 5 + i);
    m.timing.min_repeat_ms = 10;
    m.timing.timeout_ms = 20000;
    MeasureOutcome from_ptx = worker.Measure(c.ptx[i], m);
    ASSERT_EQ(from_ptx.kind, OutcomeKind::kOk) << from_ptx.message;
    ptx_load += from_ptx.load_ms;
    run += from_ptx.run_ms - from_ptx.load_ms;
    if (c.cubin[i].empty()) continue;
    MeasureOutcome from_cubin = worker.Measure(c.cubin[i], m);
    ASSERT_EQ(from_cubin.kind, OutcomeKind::kOk) << from_cubin.message;
    cubin_load += from_cubin.load_ms;
    ++cubins;
  }
  const int n = int(c.specs.size());
  std::printf(
      "conv2d 64x56x56 3x3 candidates on %s: loading %.1f ms per kernel from PTX (the driver's JIT), %s; "
      "timing %.1f ms per kernel\n",
      gpu_name.c_str(), ptx_load / n,
      cubins ? (std::to_string(cubin_load / cubins).substr(0, 5) + " ms from the cubin").c_str()
             : "no ptxas here (no cubins)",
      run / n);
}

TEST_F(CudaMeasurement, OnAGpuHostileKernelsCostOneTrialEach) {
  TUNEFARM_NEED_GPU();
  // Writes 1 GiB past its output buffer: an illegal address, sticky in its context -- the child
  // dies with it and the next trial runs in a fresh one.
  const std::string oob =
      Ptx("oob", "add.s64 %rd7, %rd4, 1073741824;\nadd.s64 %rd8, %rd7, %rd5;\nst.global.f32 [%rd8], %f1;\n");
  MeasureOutcome a = Run(oob, Spec("oob"));
  EXPECT_EQ(a.kind, OutcomeKind::kRuntimeCrash);
  EXPECT_NE(a.message.find("CUDA_ERROR_ILLEGAL_ADDRESS"), std::string::npos) << a.message;
  // Never returns: the parent's timeout kills the child (and its context).
  const std::string forever = Ptx("forever", "LOOP:\nbra LOOP;\n");
  MeasureSpec slow = Spec("forever");
  slow.timing.timeout_ms = 2000;
  MeasureOutcome b = Run(forever, slow);
  EXPECT_EQ(b.kind, OutcomeKind::kTimeout) << b.message;
  // Compiled for at most 64 threads per block, launched with 1024: refused before launching.
  MeasureOutcome c = Run(Ptx("narrow", kDouble, "\n.maxntid 64, 1, 1"), Spec("narrow", 1024));
  EXPECT_EQ(c.kind, OutcomeKind::kInstantiation);
  EXPECT_NE(c.message.find("launches 1024 threads per block"), std::string::npos) << c.message;
  // And a good kernel right after all of them.
  MeasureOutcome d = Run(Ptx("twice", kDouble), Spec("twice"));
  EXPECT_EQ(d.kind, OutcomeKind::kOk) << d.message;

  // The same through the persistent worker a CUDA server uses: its context is kept between good
  // kernels and replaced after the illegal address and after the timeout.
  MeasureWorker worker({testing::ProgramPath(MEASURE_CHILD)}, dir_);
  EXPECT_EQ(worker.Measure(Ptx("twice", kDouble), Spec("twice")).kind, OutcomeKind::kOk);
  EXPECT_EQ(worker.Measure(Ptx("twice", kDouble), Spec("twice")).kind, OutcomeKind::kOk);
  EXPECT_EQ(worker.starts(), 1);
  EXPECT_EQ(worker.Measure(oob, Spec("oob")).kind, OutcomeKind::kRuntimeCrash);
  EXPECT_EQ(worker.Measure(Ptx("twice", kDouble), Spec("twice")).kind, OutcomeKind::kOk);
  EXPECT_EQ(worker.starts(), 2);
  EXPECT_EQ(worker.Measure(forever, slow).kind, OutcomeKind::kTimeout);
  EXPECT_EQ(worker.Measure(Ptx("twice", kDouble), Spec("twice")).kind, OutcomeKind::kOk);
  EXPECT_EQ(worker.starts(), 3);
}

// The emulation test's cases on the GPU itself: random (workload, config, epilogue) cases per CUDA
// template (every fifth the fallback; 200, or TUNEFARM_GPU_CASES), each built to its own PTX module
// for this GPU, run by one persistent worker and checked against the naive references (<= 1e-4
// relative).
class CudaTemplatesOnGpu : public ::testing::TestWithParam<std::string> {};

TEST_P(CudaTemplatesOnGpu, RandomCasesMatchTheReferences) {
  TUNEFARM_NEED_GPU();
  const std::string tmpl = GetParam();
  std::string gpu_name;
  auto target = FirstGpuTarget(&gpu_name);
  ASSERT_TRUE(target.ok()) << target.status().ToString();
  const char* env = std::getenv("TUNEFARM_GPU_CASES");
  const int cases = env ? std::max(1, std::atoi(env)) : 200;
  const std::string dir = ::testing::TempDir() + "tunefarm_gpu_cases_" + std::to_string(getpid());
  ASSERT_EQ(system(("rm -rf " + dir + " && mkdir -p " + dir).c_str()), 0);
  MeasureWorker worker({testing::ProgramPath(MEASURE_CHILD)}, dir);
  std::mt19937_64 rng(std::hash<std::string>()(tmpl));
  int checked = 0, failed = 0, refused = 0;
  for (int i = 0; checked < cases; ++i) {
    compiler::KernelSpec spec;
    spec.workload = testing::RandomWorkload(tmpl, rng);
    spec.epilogue = testing::RandomEpilogue(rng);
    spec.target = *target;
    auto space = compiler::GetConfigSpace(spec.workload, *target);
    ASSERT_TRUE(space.ok()) << space.status().ToString();
    spec.config_index = -1;
    if (i % 5 != 0) {
      auto cfg = space->RandomValid(rng);
      ASSERT_TRUE(cfg.ok()) << cfg.status().ToString();
      spec.config_index = cfg->index();
    }
    spec.symbol = "g" + std::to_string(i);
    if (!compiler::DescribeKernel(spec).ok()) {  // verifier refusals are not cases
      ASSERT_LT(++refused, 50 * cases) << tmpl << ": the verifier refuses nearly every random config";
      continue;
    }
    // One PTX module per case: the driver JITs just this kernel, inside this case's own timeout.
    std::vector<compiler::KernelInfo> infos;
    auto ptx = compiler::BuildPtx({spec}, &infos);
    ASSERT_TRUE(ptx.ok()) << ptx.status().ToString();
    MeasureSpec m = CheckedSpec(spec, infos[0], 100 + uint64_t(i));
    m.timing.number = 1;
    m.timing.repeat = 1;
    m.timing.timeout_ms = 10000;
    MeasureOutcome o = worker.Measure(*ptx, m);
    if (o.kind != OutcomeKind::kOk) ++failed;
    EXPECT_EQ(o.kind, OutcomeKind::kOk) << spec.workload.Key() << " epilogue " << spec.epilogue.ToString() << " config "
                                        << infos[0].config_json << ": " << o.message;
    ++checked;
  }
  ASSERT_EQ(system(("rm -rf " + dir).c_str()), 0);
  std::printf("%s on %s: %d cases run on the GPU, %d failed (%d configs refused by the verifier, not run)\n",
              tmpl.c_str(), gpu_name.c_str(), checked, failed, refused);
}

INSTANTIATE_TEST_SUITE_P(All, CudaTemplatesOnGpu,
                         ::testing::Values("conv2d_nchw_cuda", "depthwise_conv2d_nchw_cuda", "dense_cuda",
                                           "dense_small_batch_cuda", "conv2d_nchw_winograd_cuda"));

}  // namespace
}  // namespace tunefarm::rpc_server
