// Whole models lowered for CUDA and checked without a GPU: every kernel (the tuned templates and
// every operator's generic GPU schedule) is lowered for an sm_90 GPU, its launch verified, then
// run as host code with the GPU's semantics (CompileOptions::emulate_gpu) and compared with the
// CPU compile of the same graph, and the reference models with PyTorch.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "common/test_files.h"
#include "compiler/codegen/codegen_nvptx.h"
#include "compiler/frontend/zoo.h"
#include "compiler/model/compile_graph.h"
#include "tunefarm/compiler/compile.h"
#include "tunefarm/runtime/executor.h"
#include "tunefarm/runtime/npy.h"

namespace tunefarm::compiler {
namespace {

double RelativeError(const std::vector<float>& y, const std::vector<float>& ref) {
  double diff = 0, mag = 0;
  for (size_t i = 0; i < y.size(); ++i) {
    diff = std::max(diff, double(std::fabs(y[i] - ref[i])));
    mag = std::max(mag, double(std::fabs(ref[i])));
  }
  return diff / mag;
}

std::vector<float> RunOnCpu(runtime::Artifact artifact, const std::vector<float>& input) {
  auto ex = runtime::Executor::Load(std::move(artifact));
  EXPECT_TRUE(ex.ok()) << ex.status().ToString();
  if (!ex.ok()) return {};
  EXPECT_TRUE((*ex)->SetInput(0, input.data(), input.size() * 4).ok());
  Status s = (*ex)->Run();
  EXPECT_TRUE(s.ok()) << s.ToString();
  const float* y = static_cast<const float*>((*ex)->Output(0));
  return std::vector<float>(y, y + (*ex)->outputs()[0].bytes() / 4);
}

CompileOptions Options(bool emulate_gpu) {
  CompileOptions o;
  o.emulate_gpu = emulate_gpu;
  o.warn = [](const std::string&) {};
  return o;
}

Target Sm90() { return *ParseTarget("cuda -arch=sm_90"); }

TEST(CudaModels, EveryZooModelLoweredForTheGpuMatchesItsCpuCompile) {
  runtime::Executor::SetNumThreads(2);
  for (const std::string& name : frontend::ZooModelNames()) {
    auto g = frontend::LoadModel(name);
    ASSERT_TRUE(g.ok()) << g.status().ToString();
    // Compared on the logits (the final softmax of near-uniform logits would hide differences).
    if (!g->nodes.empty() && g->nodes.back().op_type == "Softmax") g->outputs = {g->nodes.back().inputs[0]};
    CompileStats stats;
    auto gpu = CompileGraph(*g, name, Sm90(), Options(true), &stats);
    ASSERT_TRUE(gpu.ok()) << name << ": " << gpu.status().ToString();
    auto cpu = CompileGraph(*g, name, HostTarget(), Options(false));
    ASSERT_TRUE(cpu.ok()) << name << ": " << cpu.status().ToString();
    const auto& in = cpu->tensors[size_t(cpu->inputs[0])];
    std::vector<float> x(size_t(in.num_elements()));
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    for (float& v : x) v = dist(rng);
    std::vector<float> y = RunOnCpu(std::move(*gpu), x), r = RunOnCpu(std::move(*cpu), x);
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
    auto artifact = CompileModel(base + ".onnx", Sm90(), Options(true));
    ASSERT_TRUE(artifact.ok()) << artifact.status().ToString();
    std::vector<float> y = RunOnCpu(std::move(*artifact), x);
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
    auto artifact = CompileModel(name, Sm90(), Options(false), &stats);
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
  auto artifact = CompileModel("squeezenet-1.1", Sm90(), Options(false));
  ASSERT_TRUE(artifact.ok()) << artifact.status().ToString();
  auto ex = runtime::Executor::Load(std::move(*artifact));
  ASSERT_FALSE(ex.ok());
  EXPECT_EQ(ex.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(ex.status().message().find("the artifact holds CUDA kernels (PTX, target cuda -arch=sm_90"),
            std::string::npos)
      << ex.status().ToString();
}

}  // namespace
}  // namespace tunefarm::compiler
