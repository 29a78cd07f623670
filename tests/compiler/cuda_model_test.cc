// Whole models lowered for CUDA and checked without a GPU: every kernel (the tuned templates and
// every operator's generic GPU schedule) is lowered for an sm_90 GPU, its launch verified, then
// run as host code with the GPU's semantics (an emulated target, -emulate=host) and compared with the
// CPU compile of the same graph, and the reference models with PyTorch.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "common/gpu_test.h"
#include "common/onnx_builder.h"
#include "common/run_artifact.h"
#include "common/test_files.h"
#include "compiler/codegen/codegen_nvptx.h"
#include "compiler/config_sources.h"
#include "compiler/frontend/onnx_importer.h"
#include "compiler/frontend/zoo.h"
#include "compiler/model/compile_graph.h"
#include "compiler/model/extract_tasks.h"
#include "tunefarm/compiler/compile.h"
#include "tunefarm/compiler/kernel.h"
#include "tunefarm/runtime/cuda_driver.h"
#include "tunefarm/runtime/cuda_executor.h"
#include "tunefarm/runtime/executor.h"
#include "tunefarm/runtime/npy.h"
#include "tunefarm/testing/kernel_cases.h"

namespace tunefarm::compiler {
namespace {

double RelativeError(const std::vector<float>& y, const std::vector<float>& ref) {
  return runtime::MaxRelativeError(y, ref);
}
using testing::RunArtifact;

CompileOptions Options() {
  CompileOptions o;
  o.warn = [](const std::string&) {};
  return o;
}

Target Sm90() { return *ParseTarget("cuda -arch=sm_90"); }
// Its kernels lowered for the GPU, then run on this CPU with the GPU's semantics.
Target Sm90Emulated() { return *ParseTarget("cuda -arch=sm_90 -emulate=host"); }

TEST(CudaModels, EveryZooModelLoweredForTheGpuMatchesItsCpuCompile) {
  runtime::Executor::SetNumThreads(2);
  for (const std::string& name : frontend::ZooModelNames()) {
    auto g = frontend::LoadModel(name);
    ASSERT_TRUE(g.ok()) << g.status().ToString();
    // Compared on the logits (the final softmax of near-uniform logits would hide differences).
    CompileStats stats;
    // Each compile also records the workloads it looks up: the tasks `tunefarm tasks` lists for
    // the target are exactly those, on either kind.
    testing::LookupRecorder gpu_lookups, cpu_lookups;
    CompileOptions gpu_options = Options(), cpu_options = Options();
    gpu_options.configs = &gpu_lookups;
    cpu_options.configs = &cpu_lookups;
    auto gpu = CompileGraph(*g, name, Sm90Emulated(), gpu_options, &stats);
    ASSERT_TRUE(gpu.ok()) << name << ": " << gpu.status().ToString();
    auto cpu = CompileGraph(*g, name, HostTarget(), cpu_options);
    ASSERT_TRUE(cpu.ok()) << name << ": " << cpu.status().ToString();
    for (const auto& [target, lookups] : {std::pair{Sm90(), &gpu_lookups}, std::pair{HostTarget(), &cpu_lookups}}) {
      auto tasks = ExtractTasks(*g, name, target, 3);
      ASSERT_TRUE(tasks.ok()) << name << ": " << tasks.status().ToString();
      EXPECT_EQ(testing::TaskCounts(*tasks), lookups->lookups()) << name << " on " << target.ToString();
    }
    const auto& in = cpu->tensors[size_t(cpu->inputs[0])];
    std::vector<float> x(size_t(in.num_elements()));
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    for (float& v : x) v = dist(rng);
    std::vector<float> y = RunArtifact(std::move(*gpu), x), r = RunArtifact(std::move(*cpu), x);
    ASSERT_EQ(y.size(), r.size()) << name;
    const double err = RelativeError(y, r);
    std::printf("%s: %d CUDA kernels (%d tuned templates) emulated vs the CPU compile: max rel error %.3g\n",
                name.c_str(), stats.kernels, stats.tunable_kernels, err);
    EXPECT_LE(err, 1e-4) << name;
  }
}

TEST(CudaModels, ReferenceModelsLoweredForTheGpuMatchPyTorch) {
  runtime::Executor::SetNumThreads(2);
  for (const char* name : {"resnet18", "mobilenet_v2"}) {
    const std::string base = testing::SharedModelsDir() + name;
    ASSERT_TRUE(testing::Exists(base + ".onnx")) << base << ".onnx is missing (../shared/models)";
    auto input = runtime::ReadNpy(base + "_input.npy");
    auto ref = runtime::ReadNpy(base + "_output.npy");
    ASSERT_TRUE(input.ok() && ref.ok());
    std::vector<float> x(input->data.size() / 4), expected(ref->data.size() / 4);
    std::memcpy(x.data(), input->data.data(), input->data.size());
    std::memcpy(expected.data(), ref->data.data(), ref->data.size());
    auto artifact = CompileModel(base + ".onnx", Sm90Emulated(), Options());
    ASSERT_TRUE(artifact.ok()) << artifact.status().ToString();
    std::vector<float> y = RunArtifact(std::move(*artifact), x);
    ASSERT_EQ(y.size(), expected.size());
    const double err = RelativeError(y, expected);
    std::printf("%s lowered for CUDA (emulated) vs PyTorch: max rel error %.3g\n", name, err);
    EXPECT_LE(err, 1e-4) << name;
  }
}

// Without emulation: a CUDA artifact (PTX and launches), made on a machine with no GPU; its PTX
// assembles for sm_90 within the register file when ptxas is here, and the file round-trips.
TEST(CudaModels, EveryZooModelCompilesIntoACudaArtifact) {
  const bool have_ptxas = !FindPtxas().empty();
  for (const std::string& name : frontend::ZooModelNames()) {
    CompileStats stats;
    auto artifact = CompileModel(name, Sm90(), Options(), &stats);
    ASSERT_TRUE(artifact.ok()) << name << ": " << artifact.status().ToString();  // ptxas checked registers
    EXPECT_EQ(artifact->device, "cuda");
    EXPECT_NE(artifact->library.find(".target sm_90"), std::string::npos);
    for (const auto& k : artifact->kernels) {
      EXPECT_NE(artifact->library.find(".entry " + k.symbol + "("), std::string::npos) << k.symbol;
      EXPECT_GE(k.block[0] * k.block[1] * k.block[2], 1) << k.symbol;
    }
    auto back = runtime::Artifact::Parse(artifact->Serialize());
    ASSERT_TRUE(back.ok()) << back.status().ToString();
    EXPECT_EQ(back->Serialize(), artifact->Serialize());
    ASSERT_EQ(back->kernels.size(), artifact->kernels.size());
    EXPECT_EQ(back->kernels[0].grid, artifact->kernels[0].grid);
    EXPECT_EQ(back->kernels[0].block, artifact->kernels[0].block);
    std::printf("%s: %d CUDA kernels, %zu KB of PTX%s, lowered in %.0f ms, PTX in %.0f ms\n", name.c_str(),
                stats.kernels, artifact->library.size() / 1024, have_ptxas ? " (ptxas: within the register file)" : "",
                stats.lower_ms, stats.codegen_ms);
  }
  if (!have_ptxas) std::printf("[ note ] no ptxas here: the PTX was not assembled\n");
}

TEST(CudaModels, TheCpuExecutorRefusesACudaArtifactSayingWhy) {
  auto artifact = CompileModel("squeezenet-1.1", Sm90(), Options());
  ASSERT_TRUE(artifact.ok()) << artifact.status().ToString();
  auto ex = runtime::Executor::Load(std::move(*artifact));
  ASSERT_FALSE(ex.ok());
  EXPECT_EQ(ex.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(ex.status().message().find("the artifact holds CUDA kernels (PTX, target cuda -arch=sm_90"),
            std::string::npos)
      << ex.status().ToString();
}

// Apply-history-best on CUDA: records choose the implementation and the config per node. Winograd
// recorded faster than direct for resnet-18's 3x3 stride-1 convolutions and the small-batch dense
// for its classifier: the compile takes them (weights transformed at compile time) and the model,
// run with the GPU's semantics, still matches its CPU compile.
TEST(CudaModels, RecordsChooseTheImplementationAndTheConfig) {
  auto g = frontend::LoadModel("resnet-18");
  ASSERT_TRUE(g.ok());
  g->outputs = {g->nodes.back().inputs[0]};  // the logits
  const Target target = Sm90();
  testing::LookupRecorder recorder;
  CompileOptions lookup = Options();
  lookup.configs = &recorder;
  ASSERT_TRUE(CompileGraph(*g, "resnet-18", Sm90Emulated(), lookup).ok());
  testing::FixedConfigs records;
  std::mt19937_64 rng(3);
  int preferred = 0;
  for (const auto& [key, count] : recorder.lookups()) {
    auto w = Workload::FromImplementationKey(key);
    ASSERT_TRUE(w.ok()) << key;
    const bool wanted =
        w->implementation == "conv2d_nchw_winograd_cuda" || w->implementation == "dense_small_batch_cuda";
    auto space = GetConfigSpace(*w, target);
    ASSERT_TRUE(space.ok());
    auto cfg = space->RandomValid(rng);
    ASSERT_TRUE(cfg.ok());
    records.Add(*w, cfg->index(), wanted ? 0.5 : 1.0);  // the wanted implementation measured faster
    preferred += wanted;
  }
  ASSERT_GE(preferred, 5);  // 4 Winograd-eligible convolutions, the dense
  CompileOptions tuned = Options();
  tuned.configs = &records;
  CompileStats stats;
  auto gpu = CompileGraph(*g, "resnet-18", Sm90Emulated(), tuned, &stats);
  ASSERT_TRUE(gpu.ok()) << gpu.status().ToString();
  EXPECT_EQ(stats.from_records, stats.tunable_kernels);
  int winograd = 0, small_batch = 0;
  for (const auto& k : gpu->kernels) {
    if (k.workload.rfind("conv2d_nchw_winograd_cuda", 0) == 0) ++winograd;
    if (k.workload.rfind("dense_small_batch_cuda", 0) == 0) ++small_batch;
    if (!k.workload.empty()) {
      EXPECT_EQ(k.config_origin, runtime::ConfigOrigin::kRecords) << k.symbol;
    }
  }
  EXPECT_GE(winograd, 8);  // resnet-18's 3x3 stride-1 convolutions (4 workloads, 8+ nodes)
  EXPECT_EQ(small_batch, 1);
  auto cpu = CompileGraph(*g, "resnet-18", HostTarget(), Options());
  ASSERT_TRUE(cpu.ok());
  std::vector<float> x(3 * 224 * 224);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::mt19937 xr(5);
  for (float& v : x) v = dist(xr);
  const double err = RelativeError(RunArtifact(std::move(*gpu), x), RunArtifact(std::move(*cpu), x));
  std::printf(
      "resnet-18 with %d Winograd and %d small-batch kernels from records (emulated) vs the CPU compile: max "
      "rel error %.3g\n",
      winograd, small_batch, err);
  EXPECT_LE(err, 1e-4);
}

// A chain of element-wise operators (and a transpose) is one GPU kernel, with the same values as
// the CPU compile; a value two operators read, and the graph's output, stay in memory.
TEST(CudaModels, InjectiveChainsBecomeOneKernel) {
  testing::OnnxBuilder b(17);
  b.Input("x", {2, 8, 6, 5});
  b.Floats("c", {1, 8, 1, 1}, {0.1f, -0.2f, 0.3f, -0.4f, 0.5f, -0.6f, 0.7f, -0.8f});
  b.Node("Relu", {"x"}, {"r"});
  b.Node("Add", {"r", "c"}, {"a"});
  b.Node("Sigmoid", {"a"}, {"s"});
  b.Node("Transpose", {"s"}, {"t"}, {testing::AttrInts("perm", {0, 2, 3, 1})});
  b.Node("Mul", {"t", "t"}, {"m"});  // read twice by one operator: still fused
  b.Node("Tanh", {"m"}, {"y"});      // one chain: relu .. tanh
  b.Node("Exp", {"y"}, {"z1"});      // y read by two operators: stays materialized
  b.Node("Neg", {"y"}, {"z2"});
  b.Node("Add", {"z1", "z2"}, {"out"});
  b.Output("out");
  auto g = frontend::ImportOnnxBytes(b.Bytes(), "chain");
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  auto gpu = CompileGraph(*g, "chain", Sm90Emulated(), Options());
  ASSERT_TRUE(gpu.ok()) << gpu.status().ToString();
  auto cpu = CompileGraph(*g, "chain", HostTarget(), Options());
  ASSERT_TRUE(cpu.ok()) << cpu.status().ToString();
  // relu..tanh as one kernel, then exp+neg+add as the second (both read y).
  EXPECT_EQ(gpu->kernels.size(), 2u);
  for (const auto& k : gpu->kernels) std::printf("  kernel %s\n", k.op.c_str());
  std::vector<float> x(2 * 8 * 6 * 5);
  for (size_t i = 0; i < x.size(); ++i) x[i] = float(int(i % 17) - 8) * 0.25f;
  const double err = RelativeError(RunArtifact(std::move(*gpu), x), RunArtifact(std::move(*cpu), x));
  EXPECT_LE(err, 1e-6);
}

TEST(CudaModels, WithoutADriverTheGpuExecutorSaysSo) {
  TUNEFARM_NEED_NO_DRIVER();
  auto artifact = CompileModel("squeezenet-1.1", Sm90(), Options());
  ASSERT_TRUE(artifact.ok()) << artifact.status().ToString();
  auto ex = runtime::CudaExecutor::Load(std::move(*artifact));
  ASSERT_FALSE(ex.ok());
  EXPECT_EQ(ex.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(ex.status().message().find("no CUDA driver"), std::string::npos) << ex.status().ToString();
}

TEST(CudaModels, TheGpuExecutorRefusesACpuArtifactSayingWhy) {
  auto artifact = CompileModel("squeezenet-1.1", HostTarget(), Options());
  ASSERT_TRUE(artifact.ok()) << artifact.status().ToString();
  auto ex = runtime::CudaExecutor::Load(std::move(*artifact));
  ASSERT_FALSE(ex.ok());
  EXPECT_NE(ex.status().message().find("not CUDA kernels: compile the model with --target cuda"), std::string::npos)
      << ex.status().ToString();
}

// On a GPU host: the artifacts run on the GPU (CUDA graph replay and plain launches) and match the
// CPU compile (zoo) and PyTorch (../shared/models) within 1e-4.
TEST(CudaModels, OnAGpuModelsMatchTheCpuCompileAndPyTorch) {
  TUNEFARM_NEED_GPU();
  auto driver = CudaDriver::Load();
  auto gpu = (*driver)->Describe(0);
  ASSERT_TRUE(gpu.ok()) << gpu.status().ToString();
  const Target target = *ParseTarget("cuda -arch=" + std::string(gpu->compute_major >= 9 ? "sm_90" : gpu->arch()));
  runtime::Executor::SetNumThreads(2);
  // pytorch: PyTorch's input and output for the model; null: random input, the CPU compile's output.
  auto check = [&](const std::string& name, graph::Graph g,
                   const std::pair<std::vector<float>, std::vector<float>>* pytorch) {
    auto cuda = CompileGraph(g, name, target, Options());
    ASSERT_TRUE(cuda.ok()) << name << ": " << cuda.status().ToString();
    std::vector<float> x(size_t(cuda->tensors[size_t(cuda->inputs[0])].num_elements()));
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    for (float& v : x) v = dist(rng);
    if (pytorch) x = pytorch->first;
    std::vector<float> expected;
    if (pytorch) {
      expected = pytorch->second;
    } else {
      auto cpu = CompileGraph(g, name, HostTarget(), Options());
      ASSERT_TRUE(cpu.ok()) << cpu.status().ToString();
      expected = RunArtifact(std::move(*cpu), x);
    }
    for (bool graph : {true, false}) {
      runtime::CudaExecutorOptions options;
      options.use_graph = graph;
      auto ex = runtime::CudaExecutor::Load(*cuda, options);
      ASSERT_TRUE(ex.ok()) << ex.status().ToString();
      ASSERT_TRUE((*ex)->SetInput(0, x.data(), x.size() * 4).ok());
      for (int r = 0; r < 3; ++r) ASSERT_TRUE((*ex)->Run().ok()) << name;  // the replays too
      const float* y = static_cast<const float*>((*ex)->Output(0));
      std::vector<float> got(y, y + expected.size());
      const double err = RelativeError(got, expected);
      auto ms = (*ex)->TimedRun();
      ASSERT_TRUE(ms.ok()) << ms.status().ToString();
      std::printf("%s on %s (%s): max rel error %.3g vs %s, %.3f ms per run\n", name.c_str(), gpu->name.c_str(),
                  graph ? "CUDA graph" : "launches", err, pytorch ? "PyTorch" : "the CPU compile", *ms);
      EXPECT_LE(err, 1e-4) << name;
      // Each kernel timed alone (tunefarm run --profile): positive, and with graphs, whose launches
      // run back to back as in the model's replay, they add up to no more than the replayed model
      // (with a quarter for noise); plain launches time the host's launch rate for small kernels.
      std::vector<double> kernel_ms;
      for (int r = 0; r < 2; ++r) ASSERT_TRUE((*ex)->RunProfiled(&kernel_ms).ok()) << name;  // captured once
      double sum = 0;
      for (double k : kernel_ms) {
        EXPECT_TRUE(k > 0 && std::isfinite(k)) << name;
        sum += k / 2;
      }
      if (graph) {
        EXPECT_LE(sum, 1.25 * *ms) << name << ": the kernels timed alone add up to more than the model";
      }
    }
  };
  for (const std::string& name : frontend::ZooModelNames()) {
    auto g = frontend::LoadModel(name);
    ASSERT_TRUE(g.ok());
    check(name, *g, nullptr);
  }
  for (const char* name : {"resnet18", "mobilenet_v2"}) {
    const std::string base = testing::SharedModelsDir() + name;
    if (!testing::Exists(base + ".onnx") && !testing::FixturesRequired()) {
      // A GPU check kit carries no PyTorch outputs: the zoo models above were its check.
      std::printf("%s: PyTorch's reference (%s.onnx) is not here; compared with the CPU compile only\n", name,
                  base.c_str());
      continue;
    }
    auto g = frontend::LoadModel(base + ".onnx");
    auto input = runtime::ReadNpy(base + "_input.npy");
    auto ref = runtime::ReadNpy(base + "_output.npy");
    ASSERT_TRUE(g.ok() && input.ok() && ref.ok()) << base;
    std::pair<std::vector<float>, std::vector<float>> io(input->data.size() / 4, ref->data.size() / 4);
    std::memcpy(io.first.data(), input->data.data(), input->data.size());
    std::memcpy(io.second.data(), ref->data.data(), ref->data.size());
    check(name, *g, &io);
  }
}

}  // namespace
}  // namespace tunefarm::compiler
