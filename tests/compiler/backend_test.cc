// Backends (compiler/backend/backend.h): each target kind's code path is chosen once, and its
// decisions are the ones the compiler, the tuner and the CLI used to branch on -- which lowering
// steps, which generic schedule, how Ifs and injective chains are lowered, whether layouts are
// planned, what code is emitted and where it runs, what a tuning candidate is and how it is
// measured. A scan of compiler/, tuner/ and tools/ checks that nothing outside the places
// docs/adding_a_target_kind.md lists asks a target its kind.
#include "compiler/backend/backend.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "common/source_scan.h"
#include "compiler/codegen/codegen_nvptx.h"
#include "compiler/te/tensor.h"
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
  // Each per-kind decision is a method named for what it decides.
  EXPECT_EQ(b_cpu.lowering_steps(), passes::StepList::kCpu);
  EXPECT_EQ(b_gpu.lowering_steps(), passes::StepList::kGpu);
  EXPECT_EQ(b_emu.lowering_steps(), passes::StepList::kGpuOnHost);  // lowered for a launch, run as host loops
  for (const Backend* b : {&b_cpu, &b_gpu, &b_emu}) {
    const std::vector<std::string> steps = passes::LoweringPassNames(b->lowering_steps());
    EXPECT_NE(std::find(steps.begin(), steps.end(), b->features_after()), steps.end()) << b->name();
  }
  EXPECT_FALSE(b_cpu.RunsBothIfBranches());
  EXPECT_TRUE(b_gpu.RunsBothIfBranches());
  EXPECT_TRUE(b_emu.RunsBothIfBranches());
  EXPECT_FALSE(b_cpu.FusesInjectiveChains());
  EXPECT_TRUE(b_gpu.FusesInjectiveChains());
  EXPECT_FALSE(b_cpu.VerifiesRefusedConfigs());
  EXPECT_TRUE(b_gpu.VerifiesRefusedConfigs());
  EXPECT_FALSE(b_cpu.MeasuresWhileBuilding());
  EXPECT_TRUE(b_gpu.MeasuresWhileBuilding());
  EXPECT_TRUE(b_cpu.PlansLayouts(3));
  EXPECT_FALSE(b_cpu.PlansLayouts(2));
  EXPECT_FALSE(b_gpu.PlansLayouts(3));
  EXPECT_FALSE(b_emu.PlansLayouts(3));
  EXPECT_TRUE(b_cpu.CheckMeasurableHere(cpu).ok());
  EXPECT_EQ(b_cpu.CheckMeasurableHere(*ParseTarget("rasp4b")).message(),
            "target " + ParseTarget("rasp4b")->ToString() +
                " does not run on this machine; measure it through the farm (--tracker HOST:PORT --key KEY)");
  EXPECT_EQ(b_emu.CheckMeasurableHere(emulated).message(),
            "target '" + emulated.ToString() +
                "' emulates CUDA on the host to check results and is not tuned: tune for the GPU's target (drop "
                "-emulate=host)");
  // A generic schedule on a GPU computes a 0-d result as [1], a loop to bind its threads to.
  ir::Tensor scalar = te::Compute("s", {}, [](const std::vector<ir::Expr>&) { return ir::Expr(1.0f); });
  ir::Tensor on_cpu = scalar, on_gpu = scalar;
  EXPECT_NE(b_cpu.GenericSchedule(&on_cpu, cpu), nullptr);
  EXPECT_TRUE(on_cpu->shape.empty());
  EXPECT_NE(b_gpu.GenericSchedule(&on_gpu, gpu), nullptr);
  ASSERT_EQ(on_gpu->shape.size(), 1u);
  runtime::Artifact on_host, on_gpu_card, emulated_on_host;
  b_cpu.DescribeCode(cpu, &on_host);
  EXPECT_EQ(on_host.device, "cpu");
  EXPECT_EQ(on_host.triple, cpu.triple);
  b_gpu.DescribeCode(gpu, &on_gpu_card);
  EXPECT_EQ(on_gpu_card.device, "cuda");
  EXPECT_EQ(on_gpu_card.triple, "");
  b_emu.DescribeCode(b_emu.CodeTarget(emulated), &emulated_on_host);
  EXPECT_EQ(emulated_on_host.device, "cpu");
  EXPECT_EQ(emulated_on_host.triple, HostTarget().triple);
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

// What asking a target its kind looks like in a line of source.
bool AsksATargetItsKind(const std::string& line) {
  static const std::regex kForms(R"(is_cuda\(\)|gpu_kernels\(\)|\bis_gpu\b|\.emulated\b|TargetKind::k[A-Za-z]+|)"
                                 R"(\b[A-Za-z_]*target[A-Za-z_]*(\.|->)kind\b)");
  return std::regex_search(line, kForms);
}

// The places that may look at a target's kind: docs/adding_a_target_kind.md's list.
const std::vector<std::string>& KindPlaces() {
  static const std::vector<std::string> kPlaces = {"compiler/include/tunefarm/compiler/target.h", "compiler/target/",
                                                   "compiler/backend/", "compiler/schedule/template_table.cc"};
  return kPlaces;
}

// Only the places a new kind touches ask a target its kind; everything else in the compiler, the
// tuner and the CLI asks its backend (BackendFor, or kernel.h's MeasuresWhileBuilding and
// CheckMeasurableHere), so a new kind is a new backend, not a hunt for branches.
TEST(Backend, NothingElseAsksATargetItsKind) {
  const char* src = std::getenv("TUNEFARM_SOURCE_DIR");
  ASSERT_NE(src, nullptr) << "TUNEFARM_SOURCE_DIR is set by CTest";
  const auto offenders =
      testing::LinesBreakingARule(src, {"compiler", "tuner", "tools"}, KindPlaces(), AsksATargetItsKind);
  std::ostringstream all;
  for (const auto& o : offenders) all << o << "\n";
  EXPECT_TRUE(offenders.empty()) << "ask BackendFor(target) (compiler/backend/backend.h):\n" << all.str();

  // The scan is not blind: a doctored copy with one of each form, in each scanned folder, is caught
  // line by line, and the allowed places stay allowed.
  const std::string doctored = ::testing::TempDir() + "tunefarm_kind_scan_" + std::to_string(getpid());
  const std::vector<std::string> forms = {
      "if (target.is_cuda()) return;", "const bool gpu = backend.gpu_kernels();", "if (func.is_gpu) Launch();",
      "if (t.emulated) Emulate();",    "if (kind == TargetKind::kCuda) {}",       "return spec.target.kind != k;",
      "switch (target_->kind) {",      "if (s.target.kind == other.kind) {"};
  for (const char* dir : {"compiler/model", "tuner/search", "tools/tunefarm", "compiler/backend"}) {
    std::filesystem::create_directories(doctored + "/" + dir);
    std::ofstream out(doctored + "/" + dir + "/doctored.cc");
    for (const std::string& line : forms) out << line << "\n";
    out << "if (op->kind == ForKind::kVectorized) {}\n";  // another enum's kind: fine
  }
  const auto caught =
      testing::LinesBreakingARule(doctored, {"compiler", "tuner", "tools"}, KindPlaces(), AsksATargetItsKind);
  EXPECT_EQ(caught.size(), 3 * forms.size());  // compiler/backend/ is one of the places
  std::filesystem::remove_all(doctored);
}

// docs/adding_a_target_kind.md lists what a new kind touches; each listed place exists and is one
// the scan above allows, and the scan allows nothing the recipe does not list.
TEST(Backend, TheKindRecipeListsWhatTheScanAllows) {
  const char* src = std::getenv("TUNEFARM_SOURCE_DIR");
  ASSERT_NE(src, nullptr) << "TUNEFARM_SOURCE_DIR is set by CTest";
  std::ifstream in(std::string(src) + "/docs/adding_a_target_kind.md");
  ASSERT_TRUE(in) << "docs/adding_a_target_kind.md";
  std::string line;
  bool in_list = false;
  std::set<std::string> listed;
  while (std::getline(in, line)) {
    if (line.rfind("## ", 0) == 0) in_list = line == "## What a new kind touches";
    // A place is a bullet opening with a path in backquotes: "- `compiler/backend/` — ...".
    static const std::regex kPlace(R"(^- `((compiler|tuner|tools)/[^`]*)`)");
    std::smatch m;
    if (in_list && std::regex_search(line, m, kPlace)) listed.insert(m[1]);
  }
  const std::set<std::string> allowed(KindPlaces().begin(), KindPlaces().end());
  EXPECT_EQ(listed, allowed);
  for (const std::string& place : listed) EXPECT_TRUE(std::filesystem::exists(std::string(src) + "/" + place)) << place;
}

}  // namespace
}  // namespace tunefarm::compiler
