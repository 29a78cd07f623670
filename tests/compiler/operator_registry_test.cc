// The operator registry (one row per ONNX operator) and what depends on it: the importer's claimed
// list, the docs table, attribute checks with errors naming node, op and opset, and the agreement
// between `tunefarm tasks` and what `tunefarm compile` tunes (one graph pipeline for both).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "common/onnx_builder.h"
#include "common/test_files.h"
#include "compiler/config_sources.h"
#include "compiler/frontend/onnx_importer.h"
#include "compiler/frontend/zoo.h"
#include "compiler/model/compile_graph.h"
#include "compiler/model/extract_tasks.h"
#include "compiler/model/passes/infer_shapes.h"
#include "compiler/operators/registry.h"
#include "tunefarm/compiler/compile.h"
#include "tunefarm/compiler/kernel.h"
#include "tunefarm/compiler/model.h"
#include "tunefarm/runtime/executor.h"

namespace tunefarm::compiler {
namespace {

using tunefarm::testing::AttrFloat;
using tunefarm::testing::AttrInt;
using tunefarm::testing::AttrInts;
using tunefarm::testing::AttrString;
using tunefarm::testing::OnnxBuilder;

TEST(OperatorRegistry, OneRowPerOperatorWithInferenceAndALowering) {
  std::set<std::string> seen;
  // Operators whose outputs are always constants (shape inference folds them, or refuses a runtime
  // input: NonZero) need no kernel.
  const std::set<std::string> always_constant = {"Constant", "ConstantOfShape", "EyeLike", "NonZero",
                                                 "Range",    "Shape",           "Size"};
  for (const operators::OperatorDef* d : operators::AllOperators()) {
    EXPECT_TRUE(seen.insert(d->name).second) << d->name << " is registered twice";
    EXPECT_NE(d->infer, nullptr) << d->name;
    if (!always_constant.count(d->name)) {
      EXPECT_NE(d->lower, nullptr) << d->name;
    }
    EXPECT_EQ(operators::FindOperator(d->name), d);
  }
  EXPECT_EQ(operators::FindOperator("NonMaxSuppression"), nullptr);
  EXPECT_EQ(frontend::SupportedOnnxOps(), operators::OperatorNames());
  EXPECT_GE(seen.size(), 60u);
}

TEST(OperatorRegistry, DocsTableIsGeneratedFromTheRegistry) {
  const char* src = std::getenv("TUNEFARM_SOURCE_DIR");
  ASSERT_NE(src, nullptr) << "TUNEFARM_SOURCE_DIR is set by CTest";
  const std::string docs = tunefarm::testing::ReadFile(std::string(src) + "/docs/onnx_support.md");
  const std::string table = operators::OperatorTableMarkdown();
  EXPECT_NE(docs.find(table), std::string::npos)
      << "docs/onnx_support.md is out of date; regenerate its table with `tunefarm ops --markdown`:\n"
      << table;
}

Status ImportStatus(const OnnxBuilder& b) { return frontend::ImportOnnxBytes(b.Bytes(), "m").status(); }

void ExpectError(const Status& s, const std::string& part) {
  ASSERT_FALSE(s.ok()) << "expected an error containing: " << part;
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.ToString();
  EXPECT_NE(s.message().find(part), std::string::npos) << s.message();
}

TEST(OperatorRegistry, AttributeErrorsNameTheNodeOpAndOpset) {
  {
    OnnxBuilder b(13);
    b.Input("x", {1, 3, 8, 8});
    b.Node("Relu", {"x"}, {"y"}, {AttrInt("alpha", 1)});
    b.Output("y");
    ExpectError(ImportStatus(b), "node 'n0' (Relu, opset 13): unknown attribute 'alpha' (Relu takes none)");
  }
  {
    OnnxBuilder b(17);
    b.Input("x", {1, 3, 8, 8});
    b.Floats("w", {4, 3, 3, 3}, std::vector<float>(108, 0.5f));
    b.Node("Conv", {"x", "w"}, {"y"}, {AttrString("group", "1")});
    b.Output("y");
    ExpectError(ImportStatus(b), "node 'n0' (Conv, opset 17): attribute 'group' must be an int, got a string");
  }
  {
    OnnxBuilder b(11);
    b.Input("x", {2, 3});
    b.Node("Concat", {"x", "x"}, {"y"});
    b.Output("y");
    ExpectError(ImportStatus(b), "node 'n0' (Concat, opset 11): missing required attribute 'axis'");
  }
  {
    OnnxBuilder b(19);
    b.Input("x", {2, 3});
    b.Node("Cast", {"x"}, {"y"}, {AttrFloat("to", 1.0f)});
    b.Output("y");
    ExpectError(ImportStatus(b), "node 'n0' (Cast, opset 19): attribute 'to' must be an int, got a float");
  }
  {
    OnnxBuilder b(17);
    b.Input("x", {1, 3, 8, 8});
    b.Node("MaxPool", {"x"}, {"y"}, {AttrInts("kernel_shape", {2, 2}), AttrInts("kernel_size", {2, 2})});
    b.Output("y");
    ExpectError(ImportStatus(b),
                "node 'n0' (MaxPool, opset 17): unknown attribute 'kernel_size' (MaxPool takes auto_pad, kernel_shape");
  }
}

// Inputs that would crash a careless inference (missing, wrong type, absurd sizes) are errors
// naming the node.
TEST(OperatorRegistry, HostileNodesAreErrorsNamingTheNode) {
  auto infer = [](const OnnxBuilder& b) -> Status {
    auto g = frontend::ImportOnnxBytes(b.Bytes(), "m");
    if (!g.ok()) return g.status();
    return graph::InferShapes(&*g);
  };
  {
    OnnxBuilder b(13);
    b.Input("x", {2, 3});
    b.Node("MatMul", {"x", ""}, {"y"});
    b.Output("y");
    ExpectError(infer(b), "node 'n0' (MatMul, opset 13): missing required input 1");
  }
  {  // the indexed operators (index_ops.cc)
    OnnxBuilder b(13);
    b.Input("x", {2, 3});
    b.Ints("k", {4});
    b.Node("TopK", {"x", "k"}, {"v", "i"});
    b.Output("v");
    ExpectError(infer(b), "node 'n0' (TopK, opset 13): K 4 is outside [0, 3]");
  }
  {
    OnnxBuilder b(16);
    b.Input("x", {3});
    b.Ints("idx", {0, 7, 1});
    b.Node("ScatterElements", {"x", "idx", "x"}, {"y"}, {AttrString("reduction", "mean")});
    b.Output("y");
    ExpectError(infer(b),
                "node 'n0' (ScatterElements, opset 16): reduction 'mean' is not one of none, add, mul, max, min");
  }
  {
    OnnxBuilder b(16);
    b.Input("x", {3});
    b.Ints("idx", {0, 7, 1});
    b.Node("ScatterElements", {"x", "idx", "x"}, {"y"});
    b.Output("y");
    ExpectError(infer(b), "node 'n0' (ScatterElements, opset 16): index 7 is outside [-3, 3)");
  }
  {
    OnnxBuilder b(13);
    b.Input("x", {2, 3});
    b.Input("depth", {1});
    b.Floats("values", {2}, {0, 1});
    b.Node("OneHot", {"x", "depth", "values"}, {"y"});
    b.Output("y");
    ExpectError(infer(b), "node 'n0' (OneHot, opset 13): depth must be a constant scalar");
  }
  {
    OnnxBuilder b(13);
    b.Input("x", {2, 3});
    b.Node("Where", {"x", "x", "x"}, {"y"});
    b.Output("y");
    ExpectError(infer(b), "node 'n0' (Where, opset 13): the condition must be bool, got float32");
  }
  {
    OnnxBuilder b(13);
    b.Input("x", {2, 3});
    b.Ints("shape", {int64_t(1) << 62, 4});
    b.Node("ConstantOfShape", {"shape"}, {"c"});
    b.Node("Add", {"x", "c"}, {"y"});
    b.Output("y");
    ExpectError(infer(b), "node 'n0' (ConstantOfShape, opset 13): output [4611686018427387904,4] is too large to fill");
  }
  {
    OnnxBuilder b(13);
    b.Input("x", {1, 3, 8, 8});
    b.Floats("w", {4, 3, 3, 3}, std::vector<float>(108, 0.5f));
    b.Node("Conv", {"x", "w"}, {"y"}, {AttrInts("strides", {0, 0}), AttrString("auto_pad", "SAME_UPPER")});
    b.Output("y");
    ExpectError(infer(b),
                "node 'n0' (Conv, opset 13): kernel_shape [3,3], strides [0,0] and dilations [1,1] must be positive");
  }
  {
    OnnxBuilder b(13);
    b.Input("x", {2, 4});
    b.Floats("w", {4, 5}, std::vector<float>(20, 0.5f));
    b.Floats("c", {3}, {1, 2, 3});
    b.Node("Gemm", {"x", "w", "c"}, {"y"});
    b.Output("y");
    ExpectError(infer(b), "node 'n0' (Gemm, opset 13): C [3] does not broadcast to [2,5]");
  }
  {
    OnnxBuilder b(13);
    b.Input("x", {2, 4});
    b.Ints("shape", {1 << 30, 1 << 30, 1, 4});
    b.Node("Expand", {"x", "shape"}, {"y"});
    b.Output("y");
    ExpectError(infer(b), "node 'n0' (Expand, opset 13): output 0 shape");
  }
}

// The workloads of the compiled artifact's tunable kernels, with their counts.
std::map<std::string, int> CompiledWorkloads(const runtime::Artifact& a) {
  std::map<std::string, int> w;
  for (const auto& k : a.kernels) {
    if (!k.workload.empty()) ++w[k.workload];
  }
  return w;
}

CompileOptions Quiet(const ConfigSource* configs = nullptr) {
  CompileOptions o;
  o.warn = [](const std::string&) {};
  o.configs = configs;
  return o;
}

// Compiles the graph, extracts its tasks, checks that the tasks are exactly the workloads the
// compile looked up in the records (every implementation of every tunable node) and that every
// kernel it chose is a task; returns the artifact.
// A CUDA target's kernels are emulated on this CPU (the artifact runs here).
runtime::Artifact ExpectTasksMatchCompile(const graph::Graph& g, const std::string& name,
                                          const Target& target = HostTarget()) {
  auto tasks = ExtractTasks(g, name, target, 3);
  EXPECT_TRUE(tasks.ok()) << tasks.status().ToString();
  tunefarm::testing::LookupRecorder recorder;
  Target compiled_for = target;
  compiled_for.emulated = target.kind == TargetKind::kCuda;
  auto artifact = CompileGraph(g, name, compiled_for, Quiet(&recorder));
  EXPECT_TRUE(artifact.ok()) << artifact.status().ToString();
  if (!tasks.ok() || !artifact.ok()) return {};
  const auto listed = tunefarm::testing::TaskCounts(*tasks);
  EXPECT_EQ(listed, recorder.lookups()) << name;
  for (const auto& [key, n] : CompiledWorkloads(*artifact))
    EXPECT_EQ(listed.count(key), 1u) << key << " runs but is not a task";
  return std::move(*artifact);
}

std::vector<float> RunOne(runtime::Artifact artifact, const std::vector<float>& x) {
  auto ex = runtime::Executor::Load(std::move(artifact));
  EXPECT_TRUE(ex.ok());
  if (!ex.ok()) return {};
  EXPECT_TRUE((*ex)->SetInput(0, x.data(), x.size() * 4).ok());
  EXPECT_TRUE((*ex)->Run().ok());
  const float* y = static_cast<const float*>((*ex)->Output(0));
  return std::vector<float>(y, y + (*ex)->outputs()[0].bytes() / 4);
}

// A Gemm with alpha 2 and beta 0.5 is a tuning task and a tunable kernel (alpha and beta are
// folded into the packed parameters), and computes alpha A B^T + beta C.
TEST(TaskCompileAgreement, GemmWithAlphaAndBetaIsTunedAndCorrect) {
  OnnxBuilder b(13);
  b.Input("x", {2, 16});
  std::vector<float> w(8 * 16), c(8), x(2 * 16);
  for (size_t i = 0; i < w.size(); ++i) w[i] = float(int(i % 11) - 5) * 0.125f;
  for (size_t i = 0; i < c.size(); ++i) c[i] = float(i) - 3.0f;
  for (size_t i = 0; i < x.size(); ++i) x[i] = float(int(i % 7) - 3) * 0.5f;
  b.Floats("w", {8, 16}, w);
  b.Floats("c", {8}, c);
  b.Node("Gemm", {"x", "w", "c"}, {"y"}, {AttrFloat("alpha", 2.0f), AttrFloat("beta", 0.5f), AttrInt("transB", 1)});
  b.Output("y");
  auto g = frontend::ImportOnnxBytes(b.Bytes(), "gemm");
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  runtime::Artifact a = ExpectTasksMatchCompile(*g, "gemm");
  ASSERT_EQ(CompiledWorkloads(a).size(), 1u) << "the Gemm must be a tunable kernel";
  auto tasks = ExtractTasks(*g, "gemm", HostTarget(), 3);
  ASSERT_TRUE(tasks.ok());
  EXPECT_EQ(tasks->size(), 2u) << "dense_pack and dense_nopack";
  auto y = RunOne(std::move(a), x);
  ASSERT_EQ(y.size(), 16u);
  for (int m = 0; m < 2; ++m) {
    for (int n = 0; n < 8; ++n) {
      float ref = 0.5f * c[size_t(n)];
      for (int k = 0; k < 16; ++k) ref += 2.0f * x[size_t(m * 16 + k)] * w[size_t(n * 16 + k)];
      EXPECT_NEAR(y[size_t(m * 8 + n)], ref, 1e-4f) << m << "," << n;
    }
  }
}

// A conv on constant inputs beside a live one: on either target kind the tasks are exactly the
// workloads compile looks up and every conv kernel compile emits is one task node. (CUDA's tasks
// came from a walk of their own over the graph, which did not share compile's view of what runs.)
TEST(TaskCompileAgreement, ConvsOnConstantAndLiveInputsAreTasksAsCompileRunsThemOnCpuAndCuda) {
  OnnxBuilder b(13);
  b.Input("x", {1, 4, 6, 6});
  std::vector<float> c(4 * 36), w(4 * 4 * 9);
  for (size_t i = 0; i < c.size(); ++i) c[i] = float(int(i % 5) - 2) * 0.5f;
  for (size_t i = 0; i < w.size(); ++i) w[i] = float(int(i % 7) - 3) * 0.125f;
  b.Floats("c", {1, 4, 6, 6}, c);
  b.Floats("w", {4, 4, 3, 3}, w);
  b.Node("Conv", {"c", "w"}, {"constant"}, {AttrInts("pads", {1, 1, 1, 1})});
  b.Node("Conv", {"x", "w"}, {"live"}, {AttrInts("pads", {1, 1, 1, 1})});
  b.Node("Add", {"live", "constant"}, {"y"});
  b.Output("y");
  auto g = frontend::ImportOnnxBytes(b.Bytes(), "constant_conv");
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  for (const Target& target : {HostTarget(), *ParseTarget("cuda -arch=sm_90")}) {
    SCOPED_TRACE(target.ToString());
    runtime::Artifact a = ExpectTasksMatchCompile(*g, "constant_conv", target);
    auto tasks = ExtractTasks(*g, "constant_conv", target, 3);
    ASSERT_TRUE(tasks.ok()) << tasks.status().ToString();
    int task_nodes = 0, kernels = 0;
    for (const Task& t : *tasks) task_nodes += t.alternative ? 0 : t.count;
    for (const auto& [key, n] : CompiledWorkloads(a)) kernels += n;
    EXPECT_GE(kernels, 1);
    EXPECT_EQ(task_nodes, kernels) << "one task node per conv kernel compile emits";
  }
}

// A Conv whose weight is Transpose(constant) becomes a task and a tunable kernel (the transpose is
// folded first), computing the same as the untransposed weight.
TEST(TaskCompileAgreement, ConvWithTransposedConstantWeightIsTuned) {
  OnnxBuilder b(13);
  b.Input("x", {1, 4, 6, 6});
  std::vector<float> wt(3 * 3 * 4 * 8);  // stored as [KH, KW, C, K]
  for (size_t i = 0; i < wt.size(); ++i) wt[i] = float(int(i % 13) - 6) * 0.0625f;
  b.Floats("w_hwck", {3, 3, 4, 8}, wt);
  b.Node("Transpose", {"w_hwck"}, {"w"}, {AttrInts("perm", {3, 2, 0, 1})});
  b.Node("Conv", {"x", "w"}, {"y"}, {AttrInts("pads", {1, 1, 1, 1})});
  b.Output("y");
  auto g = frontend::ImportOnnxBytes(b.Bytes(), "conv");
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  runtime::Artifact a = ExpectTasksMatchCompile(*g, "conv");
  ASSERT_EQ(CompiledWorkloads(a).size(), 1u) << "the Conv must be a tunable kernel";
  std::vector<float> x(4 * 36);
  for (size_t i = 0; i < x.size(); ++i) x[i] = float(int(i % 9) - 4) * 0.25f;
  auto y = RunOne(std::move(a), x);
  ASSERT_EQ(y.size(), 8u * 36u);
  for (int k = 0; k < 8; ++k) {
    for (int h = 0; h < 6; ++h) {
      for (int w = 0; w < 6; ++w) {
        float ref = 0;
        for (int c = 0; c < 4; ++c) {
          for (int r = 0; r < 3; ++r) {
            for (int s = 0; s < 3; ++s) {
              const int ih = h + r - 1, iw = w + s - 1;
              if (ih < 0 || ih >= 6 || iw < 0 || iw >= 6) continue;
              ref += x[size_t((c * 6 + ih) * 6 + iw)] * wt[size_t(((r * 3 + s) * 4 + c) * 8 + k)];
            }
          }
        }
        EXPECT_NEAR(y[size_t((k * 6 + h) * 6 + w)], ref, 1e-4f);
      }
    }
  }
}

// Apply history best across implementations: the dense layer runs whichever of dense_pack and
// dense_nopack has the faster record, with that record's config; without records, the default.
TEST(Strategy, ApplyHistoryBestPicksTheFastestImplementation) {
  OnnxBuilder b(13);
  b.Input("x", {1, 64});
  std::vector<float> w(32 * 64), x(64);
  for (size_t i = 0; i < w.size(); ++i) w[i] = float(int(i % 9) - 4) * 0.125f;
  for (size_t i = 0; i < x.size(); ++i) x[i] = float(int(i % 5) - 2);
  b.Floats("w", {64, 32}, w);
  b.Node("MatMul", {"x", "w"}, {"y"});
  b.Output("y");
  auto g = frontend::ImportOnnxBytes(b.Bytes(), "dense");
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  auto tasks = ExtractTasks(*g, "dense", HostTarget(), 3);
  ASSERT_TRUE(tasks.ok()) << tasks.status().ToString();
  ASSERT_EQ(tasks->size(), 2u);
  const Workload pack = (*tasks)[0].workload, nopack = (*tasks)[1].workload;
  EXPECT_EQ(pack.implementation, "dense_pack");
  EXPECT_EQ(nopack.implementation, "dense_nopack");
  // A valid index other than the fallback in each space.
  auto other_valid_index = [](const Workload& wl) {
    auto space = GetConfigSpace(wl, HostTarget());
    const int64_t fallback = *FallbackConfigIndex(wl, HostTarget());
    for (int64_t i = space->size() - 1; i >= 0; --i) {
      auto c = space->Get(i);
      if (c.ok() && space->IsValid(*c) && i != fallback) return i;
    }
    return int64_t(-1);
  };
  const int64_t pack_index = other_valid_index(pack), nopack_index = other_valid_index(nopack);
  ASSERT_GE(pack_index, 0);
  ASSERT_GE(nopack_index, 0);
  std::vector<float> ref(32, 0.0f);
  for (int n = 0; n < 32; ++n) {
    for (int k = 0; k < 64; ++k) ref[size_t(n)] += x[size_t(k)] * w[size_t(k * 32 + n)];
  }
  for (bool nopack_faster : {true, false}) {
    tunefarm::testing::FixedConfigs records;
    records.Add(pack, pack_index, nopack_faster ? 2.0 : 1.0);
    records.Add(nopack, nopack_index, nopack_faster ? 1.0 : 2.0);
    auto artifact = CompileGraph(*g, "dense", HostTarget(), Quiet(&records));
    ASSERT_TRUE(artifact.ok()) << artifact.status().ToString();
    const runtime::ArtifactKernel* tuned = nullptr;
    for (const auto& k : artifact->kernels) {
      if (!k.workload.empty()) tuned = &k;
    }
    ASSERT_NE(tuned, nullptr);
    EXPECT_EQ(tuned->workload, (nopack_faster ? nopack : pack).ImplementationKey());
    EXPECT_EQ(tuned->config_index, nopack_faster ? nopack_index : pack_index);
    EXPECT_EQ(tuned->config_origin, runtime::ConfigOrigin::kRecords);
    auto y = RunOne(std::move(*artifact), x);
    ASSERT_EQ(y.size(), 32u);
    for (size_t i = 0; i < 32; ++i) EXPECT_NEAR(y[i], ref[i], 1e-4f) << i;
  }
  auto untuned = CompileGraph(*g, "dense", HostTarget(), Quiet());
  ASSERT_TRUE(untuned.ok());
  for (const auto& k : untuned->kernels) {
    if (!k.workload.empty()) {
      EXPECT_EQ(k.workload, pack.ImplementationKey()) << "the default implementation without records";
    }
  }
}

TEST(TaskCompileAgreement, ZooAndReferenceModels) {
  for (const std::string& name : frontend::ZooModelNames()) {
    if (name == "vgg-16" || name == "resnet-50" || name == "resnet-34")
      continue;  // same layers as the others, 10x the weights
    auto g = frontend::ZooModel(name);
    ASSERT_TRUE(g.ok()) << name;
    ExpectTasksMatchCompile(*g, name);
  }
  for (const char* model : {"resnet18", "mobilenet_v2"}) {
    const std::string path = tunefarm::testing::SharedModelsDir() + model + ".onnx";
    if (!tunefarm::testing::Exists(path)) continue;
    auto g = frontend::ImportOnnxFile(path);
    ASSERT_TRUE(g.ok()) << path;
    ExpectTasksMatchCompile(*g, path);
  }
}

}  // namespace
}  // namespace tunefarm::compiler
