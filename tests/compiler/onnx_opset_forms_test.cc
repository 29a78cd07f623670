// The operator forms that changed in opsets 18-21 (and their older forms side by side), each as a
// small model built here, imported, compiled, run and compared with a naive reference written
// from the ONNX operator spec.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <numeric>

#include "common/onnx_builder.h"
#include "compiler/frontend/onnx_importer.h"
#include "compiler/model/compile_graph.h"
#include "tunefarm/runtime/executor.h"

namespace tunefarm::compiler {
namespace {

using tunefarm::testing::AttrFloat;
using tunefarm::testing::AttrInt;
using tunefarm::testing::AttrInts;
using tunefarm::testing::AttrString;
using tunefarm::testing::OnnxBuilder;

std::vector<float> Iota(size_t n, float scale = 0.25f, float offset = -3.0f) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = offset + scale * float((i * 7) % 29);
  return v;
}

// Imports, compiles (opt level 3) and runs the model on one float input; returns each output.
std::vector<std::vector<float>> RunModel(const OnnxBuilder& b, const std::vector<float>& input,
                                         std::vector<std::vector<int64_t>>* shapes = nullptr) {
  auto g = frontend::ImportOnnxBytes(b.Bytes(), "test model");
  EXPECT_TRUE(g.ok()) << g.status().ToString();
  if (!g.ok()) return {};
  CompileOptions options;
  options.warn = [](const std::string&) {};
  auto artifact = CompileGraph(std::move(*g), "test model", HostTarget(), options);
  EXPECT_TRUE(artifact.ok()) << artifact.status().ToString();
  if (!artifact.ok()) return {};
  auto ex = runtime::Executor::Load(std::move(*artifact));
  EXPECT_TRUE(ex.ok()) << ex.status().ToString();
  if (!ex.ok()) return {};
  EXPECT_TRUE((*ex)->SetInput(0, input.data(), input.size() * 4).ok());
  Status s = (*ex)->Run();
  EXPECT_TRUE(s.ok()) << s.ToString();
  std::vector<std::vector<float>> outs;
  for (size_t o = 0; o < (*ex)->outputs().size(); ++o) {
    const float* y = static_cast<const float*>((*ex)->Output(o));
    outs.emplace_back(y, y + (*ex)->outputs()[o].bytes() / 4);
    if (shapes) shapes->push_back((*ex)->outputs()[o].shape);
  }
  return outs;
}

void ExpectNear(const std::vector<float>& y, const std::vector<float>& ref, float tol = 1e-5f) {
  ASSERT_EQ(y.size(), ref.size());
  for (size_t i = 0; i < y.size(); ++i) EXPECT_NEAR(y[i], ref[i], tol * (1 + std::fabs(ref[i]))) << "element " << i;
}

// x: [2, 3, 4]; reduce axes {1, 2} with keepdims 0 -> [2].
std::vector<float> ReduceRef(const std::vector<float>& x, const std::function<float(float, float)>& f, float init,
                             bool mean) {
  std::vector<float> out;
  for (int i = 0; i < 2; ++i) {
    float acc = init;
    for (int j = 0; j < 12; ++j) acc = f(acc, x[size_t(i * 12 + j)]);
    out.push_back(mean ? acc / 12 : acc);
  }
  return out;
}

TEST(OnnxOpsetForms, ReductionsTakeAxesAsAnInputFromOpset18) {
  const auto x = Iota(24);
  const auto sum = [](float a, float b) { return a + b; };
  const auto max = [](float a, float b) { return std::max(a, b); };
  const auto min = [](float a, float b) { return std::min(a, b); };
  struct Case {
    const char* op;
    int64_t opset;
    std::vector<float> ref;
  };
  const Case cases[] = {
      {"ReduceMean", 17, ReduceRef(x, sum, 0, true)},      {"ReduceMean", 18, ReduceRef(x, sum, 0, true)},
      {"ReduceSum", 13, ReduceRef(x, sum, 0, false)},      {"ReduceMax", 18, ReduceRef(x, max, -1e30f, false)},
      {"ReduceMax", 20, ReduceRef(x, max, -1e30f, false)}, {"ReduceMin", 18, ReduceRef(x, min, 1e30f, false)},
  };
  for (const Case& c : cases) {
    OnnxBuilder b(c.opset);
    b.Input("x", {2, 3, 4});
    const bool as_input = c.opset >= 18 || std::string(c.op) == "ReduceSum";
    if (as_input) {
      b.Ints("axes", {-2, 2});
      b.Node(c.op, {"x", "axes"}, {"y"}, {AttrInt("keepdims", 0)});
    } else {
      b.Node(c.op, {"x"}, {"y"}, {AttrInts("axes", {-2, 2}), AttrInt("keepdims", 0)});
    }
    b.Output("y");
    SCOPED_TRACE(std::string(c.op) + " opset " + std::to_string(c.opset));
    auto y = RunModel(b, x);
    ASSERT_EQ(y.size(), 1u);
    ExpectNear(y[0], c.ref);
  }
  // The opset-18 form with an attribute is refused by name.
  OnnxBuilder wrong(18);
  wrong.Input("x", {2, 3, 4});
  wrong.Node("ReduceMean", {"x"}, {"y"}, {AttrInts("axes", {1})});
  wrong.Output("y");
  auto g = frontend::ImportOnnxBytes(wrong.Bytes(), "m");
  ASSERT_TRUE(g.ok());
  auto artifact = CompileGraph(std::move(*g), "m", HostTarget(), CompileOptions{});
  ASSERT_FALSE(artifact.ok());
  EXPECT_NE(artifact.status().message().find("node 'n0' (ReduceMean, opset 18): axes is an input from opset 18"),
            std::string::npos)
      << artifact.status().message();
}

TEST(OnnxOpsetForms, SqueezeAndUnsqueezeWithAxesInputsAtOpset21) {
  for (int64_t opset : {11, 13, 21}) {
    OnnxBuilder b(opset);
    b.Input("x", {2, 1, 3});
    if (opset >= 13) {
      b.Ints("sq", {1});
      b.Ints("unsq", {0, -1});
      b.Node("Squeeze", {"x", "sq"}, {"s"});
      b.Node("Unsqueeze", {"s", "unsq"}, {"y"});
    } else {
      b.Node("Squeeze", {"x"}, {"s"}, {AttrInts("axes", {1})});
      b.Node("Unsqueeze", {"s"}, {"y"}, {AttrInts("axes", {0, -1})});
    }
    b.Output("y");
    const auto x = Iota(6);
    std::vector<std::vector<int64_t>> shapes;
    auto y = RunModel(b, x, &shapes);
    ASSERT_EQ(y.size(), 1u) << "opset " << opset;
    EXPECT_EQ(shapes[0], (std::vector<int64_t>{1, 2, 3, 1})) << "opset " << opset;
    ExpectNear(y[0], x);
  }
}

TEST(OnnxOpsetForms, SplitWithNumOutputsAtOpset18) {
  OnnxBuilder b(18);
  b.Input("x", {2, 7});
  b.Node("Split", {"x"}, {"a", "b", "c"}, {AttrInt("axis", 1), AttrInt("num_outputs", 3)});
  for (const char* o : {"a", "b", "c"}) b.Output(o);
  const auto x = Iota(14);
  std::vector<std::vector<int64_t>> shapes;
  auto y = RunModel(b, x, &shapes);
  ASSERT_EQ(y.size(), 3u);
  // ceil(7 / 3) = 3: parts 3, 3, 1.
  EXPECT_EQ(shapes[0], (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(shapes[2], (std::vector<int64_t>{2, 1}));
  ExpectNear(y[2], {x[6], x[13]});
  ExpectNear(y[1], {x[3], x[4], x[5], x[10], x[11], x[12]});
}

TEST(OnnxOpsetForms, PadWithAxesInputAndWrapModeAtOpset19) {
  // Pads only axis 1 (of [2, 3]) by (2, 1) in wrap mode: columns ... c1 c2 | c0 c1 c2 | c0.
  OnnxBuilder b(19);
  b.Input("x", {2, 3});
  b.Ints("pads", {2, 1});
  b.Ints("axes", {-1});
  b.Node("Pad", {"x", "pads", "", "axes"}, {"y"}, {AttrString("mode", "wrap")});
  b.Output("y");
  const std::vector<float> x = {1, 2, 3, 4, 5, 6};
  auto y = RunModel(b, x);
  ASSERT_EQ(y.size(), 1u);
  ExpectNear(y[0], {2, 3, 1, 2, 3, 1, 5, 6, 4, 5, 6, 4});
  // Before opset 19 wrap is refused by name.
  OnnxBuilder old(18);
  old.Input("x", {2, 3});
  old.Ints("pads", {0, 1, 0, 1});
  old.Node("Pad", {"x", "pads"}, {"y"}, {AttrString("mode", "wrap")});
  old.Output("y");
  auto g = frontend::ImportOnnxBytes(old.Bytes(), "m");
  ASSERT_TRUE(g.ok());
  auto artifact = CompileGraph(std::move(*g), "m", HostTarget(), CompileOptions{});
  ASSERT_FALSE(artifact.ok());
  EXPECT_NE(artifact.status().message().find("unsupported pad mode 'wrap'"), std::string::npos)
      << artifact.status().message();
}

TEST(OnnxOpsetForms, AveragePoolWithDilationsAtOpset19) {
  // [1, 1, 5, 5], kernel 2x2, dilation 2, pad 1, count_include_pad 0.
  OnnxBuilder b(19);
  b.Input("x", {1, 1, 5, 5});
  b.Node("AveragePool", {"x"}, {"y"},
         {AttrInts("kernel_shape", {2, 2}), AttrInts("dilations", {2, 2}), AttrInts("pads", {1, 1, 1, 1}),
          AttrInts("strides", {1, 1})});
  b.Output("y");
  const auto x = Iota(25);
  std::vector<float> ref;
  const int out = (5 + 2 - (2 * 1 + 1)) / 1 + 1;  // 4
  for (int oh = 0; oh < out; ++oh) {
    for (int ow = 0; ow < out; ++ow) {
      float sum = 0;
      int count = 0;
      for (int kh = 0; kh < 2; ++kh) {
        for (int kw = 0; kw < 2; ++kw) {
          const int h = oh - 1 + 2 * kh, w = ow - 1 + 2 * kw;
          if (h < 0 || h >= 5 || w < 0 || w >= 5) continue;
          sum += x[size_t(h * 5 + w)];
          ++count;
        }
      }
      ref.push_back(sum / float(count));
    }
  }
  auto y = RunModel(b, x);
  ASSERT_EQ(y.size(), 1u);
  ExpectNear(y[0], ref);
}

TEST(OnnxOpsetForms, CastWithSaturateAtOpset19AndGeluAtOpset20) {
  OnnxBuilder b(20);
  b.Input("x", {8});
  b.Node("Cast", {"x"}, {"i"}, {AttrInt("to", 7), AttrInt("saturate", 1)});  // to int64: truncates
  b.Node("Cast", {"i"}, {"f"}, {AttrInt("to", 1)});
  b.Node("Gelu", {"x"}, {"g"});
  b.Node("Gelu", {"x"}, {"t"}, {AttrString("approximate", "tanh")});
  for (const char* o : {"f", "g", "t"}) b.Output(o);
  const std::vector<float> x = {-3.5f, -1.25f, -0.5f, 0.0f, 0.3f, 1.0f, 2.75f, 4.0f};
  auto y = RunModel(b, x);
  ASSERT_EQ(y.size(), 3u);
  std::vector<float> trunc, gelu, gelu_tanh;
  for (float v : x) {
    trunc.push_back(std::trunc(v));
    gelu.push_back(0.5f * v * (1.0f + std::erf(v / std::sqrt(2.0f))));
    gelu_tanh.push_back(0.5f * v * (1.0f + std::tanh(std::sqrt(2.0f / float(M_PI)) * (v + 0.044715f * v * v * v))));
  }
  ExpectNear(y[0], trunc);
  ExpectNear(y[1], gelu, 1e-6f);
  ExpectNear(y[2], gelu_tanh, 1e-6f);
}

// What exporters emit for a channel shuffle: the shape computed from Shape/Gather/Div, then
// Reshape -> Transpose -> Reshape; must fold and compile.
TEST(OnnxOpsetForms, ExporterShapeArithmeticFolds) {
  for (int64_t opset : {13, 17, 21}) {
    OnnxBuilder b(opset);
    b.Input("x", {1, 4, 2, 2});
    b.Ints("i0", {0});
    b.Ints("i1", {1});
    b.Ints("groups", {2});
    b.Ints("rest", {2, 2});
    b.Node("Shape", {"x"}, {"shape"});
    b.Node("Gather", {"shape", "i0"}, {"n"});
    b.Node("Gather", {"shape", "i1"}, {"c"});
    b.Node("Div", {"c", "groups"}, {"per_group"});
    b.Node("Concat", {"n", "groups", "per_group", "rest"}, {"s5"}, {AttrInt("axis", 0)});
    b.Node("Reshape", {"x", "s5"}, {"r5"});
    b.Node("Transpose", {"r5"}, {"t5"}, {AttrInts("perm", {0, 2, 1, 3, 4})});
    b.Node("Mul", {"per_group", "groups"}, {"c2"});
    b.Node("Concat", {"n", "c2", "rest"}, {"s4"}, {AttrInt("axis", 0)});
    b.Node("Reshape", {"t5", "s4"}, {"y"});
    b.Output("y");
    const auto x = Iota(16);
    auto y = RunModel(b, x);
    ASSERT_EQ(y.size(), 1u) << "opset " << opset;
    // Channels (0 1 | 2 3) interleave to 0 2 1 3.
    std::vector<float> ref;
    for (int c : {0, 2, 1, 3}) ref.insert(ref.end(), x.begin() + c * 4, x.begin() + c * 4 + 4);
    ExpectNear(y[0], ref);
  }
}

// tf2onnx's form: a pads vector split in two and concatenated back in the other order (its line-segment
// detector builds Pad's pads so): Split folds, so the pads are a constant after folding.
TEST(OnnxOpsetForms, PadsThatFoldThroughSplitAndConcatAreConstants) {
  OnnxBuilder b(13);
  b.Input("x", {1, 1, 2, 2});
  b.Ints("halves", {0, 0, 1, 0, 0, 0, 0, 2});  // [end pads | begin pads]: 2 columns before, 1 row after
  b.Ints("sizes", {4, 4});
  b.Node("Split", {"halves", "sizes"}, {"ends", "begins"}, {AttrInt("axis", 0)});
  b.Node("Concat", {"begins", "ends"}, {"pads"}, {AttrInt("axis", 0)});
  b.Node("Pad", {"x", "pads"}, {"y"});
  b.Output("y");
  const std::vector<float> x = {1, 2, 3, 4};
  std::vector<std::vector<int64_t>> shapes;
  auto y = RunModel(b, x, &shapes);
  ASSERT_EQ(y.size(), 1u);
  EXPECT_EQ(shapes[0], (std::vector<int64_t>{1, 1, 3, 4}));
  ExpectNear(y[0], {0, 0, 1, 2, 0, 0, 3, 4, 0, 0, 0, 0});
}

}  // namespace
}  // namespace tunefarm::compiler
