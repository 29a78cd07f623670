// The model compiler end to end: compile -> artifact -> runtime executor, checked against the
// PyTorch outputs of ../shared/models (skip when absent) and, for the zoo, against the same graph
// compiled at opt level 0 (no folding, fusion or layout planning).
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cmath>
#include <cstring>
#include <random>
#include <set>

#include "common/run_artifact.h"
#include "common/test_files.h"
#include "compiler/frontend/zoo.h"
#include "compiler/model/compile_graph.h"
#include "tunefarm/compiler/compile.h"
#include "tunefarm/runtime/executor.h"
#include "tunefarm/runtime/npy.h"

namespace tunefarm::compiler {
namespace {

using tunefarm::testing::Exists;
inline std::string SharedModels() { return tunefarm::testing::SharedModelsDir(); }

// max|y - ref| / max|ref|
double RelativeError(const float* y, const float* ref, size_t n) {
  double diff = 0, mag = 0;
  for (size_t i = 0; i < n; ++i) {
    diff = std::max(diff, double(std::fabs(y[i] - ref[i])));
    mag = std::max(mag, double(std::fabs(ref[i])));
  }
  return diff / mag;
}

using tunefarm::testing::RunArtifact;

CompileOptions Quiet(int opt_level) {
  CompileOptions o;
  o.opt_level = opt_level;
  o.warn = [](const std::string&) {};
  return o;
}

TEST(ModelCompile, ReferenceModelsMatchPyTorch) {
  runtime::Executor::SetNumThreads(2);
  for (const char* name : {"resnet18", "mobilenet_v2"}) {
    const std::string base = SharedModels() + name;
    if (!Exists(base + ".onnx")) TUNEFARM_MISSING_FIXTURE(base << ".onnx not present");
    auto input = runtime::ReadNpy(base + "_input.npy");
    auto ref = runtime::ReadNpy(base + "_output.npy");
    ASSERT_TRUE(input.ok() && ref.ok());
    std::vector<float> x(input->data.size() / 4);
    std::memcpy(x.data(), input->data.data(), input->data.size());
    for (int level : {3, 0}) {
      auto artifact = CompileModel(base + ".onnx", HostTarget(), Quiet(level));
      ASSERT_TRUE(artifact.ok()) << artifact.status().ToString();
      std::vector<float> y = RunArtifact(std::move(*artifact), x);
      ASSERT_EQ(y.size() * 4, ref->data.size());
      double err = RelativeError(y.data(), reinterpret_cast<const float*>(ref->data.data()), y.size());
      std::printf("%s opt level %d vs PyTorch: max rel error %.3g\n", name, level, err);
      EXPECT_LE(err, 1e-4) << name << " at opt level " << level;
    }
  }
}

TEST(ModelCompile, ZooModelsMatchTheirUnoptimizedCompile) {
  runtime::Executor::SetNumThreads(2);
  for (const char* name :
       {"resnet-18", "resnet-34", "resnet-50", "mobilenet-v1", "mobilenet-v2", "squeezenet-1.1", "vgg-16"}) {
    // Compared on the logits: the zoo's final softmax of near-uniform logits would hide differences
    // below float resolution.
    auto g = frontend::LoadModel(name);
    ASSERT_TRUE(g.ok()) << g.status().ToString();
    if (!g->nodes.empty() && g->nodes.back().op_type == "Softmax") g->outputs = {g->nodes.back().inputs[0]};
    auto optimized = CompileGraph(*g, name, HostTarget(), Quiet(3));
    ASSERT_TRUE(optimized.ok()) << optimized.status().ToString();
    auto reference = CompileGraph(*g, name, HostTarget(), Quiet(0));
    ASSERT_TRUE(reference.ok()) << reference.status().ToString();
    const auto& in = optimized->tensors[size_t(optimized->inputs[0])];
    std::vector<float> x(size_t(in.num_elements()));
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    for (float& v : x) v = dist(rng);
    size_t opt_kernels = optimized->kernels.size(), ref_kernels = reference->kernels.size();
    std::vector<float> y = RunArtifact(std::move(*optimized), x);
    std::vector<float> r = RunArtifact(std::move(*reference), x);
    ASSERT_EQ(y.size(), r.size());
    double err = RelativeError(y.data(), r.data(), y.size());
    std::printf("%s: opt level 3 (%zu kernels) vs 0 (%zu kernels): max rel error %.3g\n", name, opt_kernels,
                ref_kernels, err);
    EXPECT_LE(err, 1e-4) << name;
  }
}

}  // namespace
}  // namespace tunefarm::compiler

namespace tunefarm::compiler {
namespace {

// y = x + (c1 * c2). Small constant arithmetic (shape chains) folds during shape inference at
// every opt level; a product too large for that (> 2^16 elements) folds at opt level 1 and up.
TEST(ModelCompile, ConstantFoldingEvaluatesConstantSubgraphs) {
  for (int64_t n : {int64_t(3), int64_t(1) << 17}) {
    graph::Graph g;
    g.opset = 13;
    graph::Value x;
    x.name = "x";
    x.shape = {1, n};
    x.shape_known = true;
    int xi = g.AddValue(x);
    g.inputs = {xi};
    const size_t count = static_cast<size_t>(n);
    std::vector<float> a(count), b(count), in(count), expected(count);
    for (int64_t i = 0; i < n; ++i) {
      a[size_t(i)] = float(i % 7);
      b[size_t(i)] = 0.5f * float(i % 3);
      in[size_t(i)] = float(i % 5);
      expected[size_t(i)] = in[size_t(i)] + a[size_t(i)] * b[size_t(i)];
    }
    int c1 = g.AddConstant("c1", graph::ConstantData{graph::DataType::kFloat32, {n}, a, {}});
    int c2 = g.AddConstant("c2", graph::ConstantData{graph::DataType::kFloat32, {n}, b, {}});
    graph::Value d;
    d.name = "d";
    int di = g.AddValue(d);
    graph::Value y;
    y.name = "y";
    int yi = g.AddValue(y);
    g.nodes.push_back(graph::Node{"mul", "Mul", {c1, c2}, {di}, {}, {}, {}});
    g.nodes.push_back(graph::Node{"add", "Add", {xi, di}, {yi}, {}, {}, {}});
    g.values[size_t(di)].producer = 0;
    g.values[size_t(yi)].producer = 1;
    g.outputs = {yi};
    const bool small = n < (1 << 16);
    for (int level : {0, 1}) {
      auto artifact = CompileGraph(g, "folding", HostTarget(), Quiet(level));
      ASSERT_TRUE(artifact.ok()) << artifact.status().ToString();
      EXPECT_EQ(artifact->kernels.size(), level == 0 && !small ? 2u : 1u) << "opt level " << level << ", n " << n;
      EXPECT_EQ(RunArtifact(std::move(*artifact), in), expected) << "opt level " << level << ", n " << n;
    }
  }
}

// A long chain of the same element-wise operators on one shape (y = relu(... relu(x + c) + c ...)):
// every Add lowers to one function and every Relu to another, so the library holds two kernels
// however long the chain, each node keeps its own launch, and the result is that of the chain.
TEST(ModelCompile, KernelsThatLowerAlikeAreEmittedOnce) {
  constexpr int kPairs = 200;
  constexpr int64_t kWidth = 48;
  graph::Graph g;
  g.opset = 13;
  graph::Value x;
  x.name = "x";
  x.shape = {1, kWidth};
  x.shape_known = true;
  int prev = g.AddValue(x);
  g.inputs = {prev};
  std::vector<float> c(kWidth), in(kWidth), expected(kWidth);
  for (int64_t i = 0; i < kWidth; ++i) {
    c[size_t(i)] = 0.25f * float(i % 4) - 0.3f;
    in[size_t(i)] = float(i % 9) - 4.0f;
  }
  const int ci = g.AddConstant("c", graph::ConstantData{graph::DataType::kFloat32, {kWidth}, c, {}});
  for (int n = 0; n < 2 * kPairs; ++n) {
    graph::Value v;
    v.name = "v" + std::to_string(n);
    v.producer = int(g.nodes.size());
    const int vi = g.AddValue(v);
    if (n % 2 == 0) {
      g.nodes.push_back(graph::Node{"add" + std::to_string(n), "Add", {prev, ci}, {vi}, {}, {}, {}});
    } else {
      g.nodes.push_back(graph::Node{"relu" + std::to_string(n), "Relu", {prev}, {vi}, {}, {}, {}});
    }
    prev = vi;
  }
  g.outputs = {prev};
  expected = in;
  for (int p = 0; p < kPairs; ++p) {
    for (int64_t i = 0; i < kWidth; ++i) expected[size_t(i)] = std::max(0.0f, expected[size_t(i)] + c[size_t(i)]);
  }
  auto artifact = CompileGraph(g, "chain", HostTarget(), Quiet(3));
  ASSERT_TRUE(artifact.ok()) << artifact.status().ToString();
  std::set<std::string> symbols;
  for (const auto& k : artifact->kernels) symbols.insert(k.symbol);
  EXPECT_GE(artifact->kernels.size(), size_t(kPairs));
  EXPECT_LE(symbols.size(), 2u) << "identical kernels should share one emitted function";
  EXPECT_EQ(RunArtifact(std::move(*artifact), in), expected);
}

}  // namespace
}  // namespace tunefarm::compiler
