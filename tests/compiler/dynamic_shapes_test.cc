// One artifact for a range of sizes (issue 51, docs/dynamic_shapes.md): `--input-shape x:1..16x24`
// keeps dimension 0 symbolic. The artifact is built at the maximum and its kernels compute only the
// run's rows; every size of the range must give what a compile fixed at that size gives, memory is
// the maximum's, and whatever cannot follow a symbolic size is an error naming the node or kernel.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "common/onnx_builder.h"
#include "compiler/frontend/input_shapes.h"
#include "compiler/frontend/onnx_importer.h"
#include "compiler/model/compile_graph.h"
#include "tunefarm/compiler/input_shape.h"
#include "tunefarm/compiler/target.h"
#include "tunefarm/runtime/executor.h"

namespace tunefarm {
namespace {

using testing::AttrInt;
using testing::AttrInts;
using ::testing::HasSubstr;
using testing::OnnxBuilder;

std::vector<float> RandomFloats(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

Result<runtime::Artifact> Compile(const std::string& bytes, const std::vector<std::string>& shapes,
                                  const compiler::Target& target = compiler::HostTarget()) {
  TUNEFARM_ASSIGN_OR_RETURN(graph::Graph g, frontend::ImportOnnxBytes(bytes, "dynamic"));
  std::vector<compiler::InputShape> parsed;
  for (const std::string& s : shapes) {
    TUNEFARM_ASSIGN_OR_RETURN(compiler::InputShape shape, compiler::ParseInputShape(s));
    parsed.push_back(shape);
  }
  TUNEFARM_RETURN_IF_ERROR(frontend::ApplyInputShapes(&g, parsed));
  compiler::CompileOptions options;
  options.warn = [](const std::string&) {};
  return compiler::CompileGraph(std::move(g), "dynamic", target, options);
}

// Runs the executor on one float input; the first output and its shape.
std::vector<float> Run(runtime::Executor& ex, const std::vector<float>& x, std::vector<int64_t>* shape = nullptr) {
  Status s = ex.SetInput(0, x.data(), x.size() * 4);
  EXPECT_TRUE(s.ok()) << s.ToString();
  s = ex.Run();
  EXPECT_TRUE(s.ok()) << s.ToString();
  if (shape) *shape = ex.outputs()[0].shape;
  const float* y = static_cast<const float*>(ex.Output(0));
  return std::vector<float>(y, y + ex.outputs()[0].bytes() / 4);
}

// For each size: the range artifact's output against a compile fixed at that size (its own tiles
// and configs), and the output's shape. The sizes run in an order that goes down and up again, so
// rows a larger run left behind would show.
void ExpectMatchesFixedCompiles(const std::string& model, const std::string& input, const std::string& range,
                                const std::string& rest, int64_t row_elements, const std::vector<int64_t>& sizes) {
  auto ranged = Compile(model, {input + ":" + range + rest});
  ASSERT_TRUE(ranged.ok()) << ranged.status().ToString();
  ASSERT_TRUE(ranged->symbolic_dim.has_value());
  auto ex = runtime::Executor::Load(std::move(*ranged));
  ASSERT_TRUE(ex.ok()) << ex.status().ToString();
  for (int64_t size : sizes) {
    SCOPED_TRACE("size " + std::to_string(size));
    const std::vector<float> x = RandomFloats(size_t(size * row_elements), unsigned(size));
    auto fixed = Compile(model, {input + ":" + std::to_string(size) + rest});
    ASSERT_TRUE(fixed.ok()) << fixed.status().ToString();
    auto fixed_ex = runtime::Executor::Load(std::move(*fixed));
    ASSERT_TRUE(fixed_ex.ok());
    std::vector<int64_t> shape, fixed_shape;
    const std::vector<float> want = Run(**fixed_ex, x, &fixed_shape);
    const std::vector<float> got = Run(**ex, x, &shape);
    EXPECT_EQ(shape, fixed_shape);
    ASSERT_EQ(got.size(), want.size());
    double scale = 0, err = 0;
    for (size_t i = 0; i < want.size(); ++i) {
      scale = std::max(scale, double(std::fabs(want[i])));
      err = std::max(err, double(std::fabs(got[i] - want[i])));
    }
    EXPECT_LE(err, 1e-5 * std::max(scale, 1.0)) << "max |got - want| " << err;
  }
}

// x [batch, 24] -> MatMul [24, 40] -> + bias -> Relu -> MatMul [40, 10] -> Softmax.
std::string Mlp() {
  OnnxBuilder b(13);
  b.SymbolicInput("x", {"batch", "24"});
  b.Floats("w1", {24, 40}, RandomFloats(24 * 40, 1));
  b.Floats("b1", {40}, RandomFloats(40, 2));
  b.Floats("w2", {40, 10}, RandomFloats(40 * 10, 3));
  b.Node("MatMul", {"x", "w1"}, {"h"});
  b.Node("Add", {"h", "b1"}, {"hb"});
  b.Node("Relu", {"hb"}, {"r"});
  b.Node("MatMul", {"r", "w2"}, {"logits"});
  b.Node("Softmax", {"logits"}, {"y"}, {AttrInt("axis", -1)});
  b.Output("y");
  return b.Bytes();
}

TEST(DynamicShapes, DenseLayersServeEverySizeOfTheRange) {
  ExpectMatchesFixedCompiles(Mlp(), "x", "1..16", "x24", 24, {16, 1, 5, 16, 2, 13});
}

// x [batch, 3, 12, 12] -> Conv 3x3 + bias -> Relu -> Conv 3x3 (where Winograd would apply) ->
// GlobalAveragePool -> Flatten -> Gemm: the convolution templates in NCHWc, their layout
// transforms, a pooling and a dense layer, all over the batch.
std::string SmallCnn() {
  OnnxBuilder b(13);
  b.SymbolicInput("data", {"N", "3", "12", "12"});
  b.Floats("w1", {16, 3, 3, 3}, RandomFloats(16 * 27, 4));
  b.Floats("c1", {16}, RandomFloats(16, 5));
  b.Floats("w2", {16, 16, 3, 3}, RandomFloats(16 * 16 * 9, 6));
  b.Floats("fc", {5, 16}, RandomFloats(80, 7));
  b.Floats("fcb", {5}, RandomFloats(5, 8));
  b.Node("Conv", {"data", "w1", "c1"}, {"a"}, {AttrInts("pads", {1, 1, 1, 1})});
  b.Node("Relu", {"a"}, {"ar"});
  b.Node("Conv", {"ar", "w2"}, {"b"}, {AttrInts("pads", {1, 1, 1, 1})});
  b.Node("GlobalAveragePool", {"b"}, {"p"});
  b.Node("Flatten", {"p"}, {"f"});
  b.Node("Gemm", {"f", "fc", "fcb"}, {"y"}, {AttrInt("transB", 1)});
  b.Output("y");
  return b.Bytes();
}

TEST(DynamicShapes, ConvolutionsServeEveryBatchOfTheRange) {
  ExpectMatchesFixedCompiles(SmallCnn(), "data", "1..4", "x3x12x12", 3 * 12 * 12, {4, 1, 3, 2, 4});
}

// The batch read back from the input's shape for a Reshape (torch's x.view(x.size(0), -1)): the
// target is folded at each size, and only its dimension 0 differs.
TEST(DynamicShapes, AReshapeToTheBatchReadFromTheShapeFollowsIt) {
  OnnxBuilder b(13);
  b.SymbolicInput("x", {"batch", "6", "8"});
  b.Ints("zero", {0});
  b.Ints("minus_one", {-1});
  b.Floats("w", {48, 7}, RandomFloats(48 * 7, 9));
  b.Node("Shape", {"x"}, {"s"});
  b.Node("Gather", {"s", "zero"}, {"n"}, {AttrInt("axis", 0)});
  b.Node("Concat", {"n", "minus_one"}, {"target"}, {AttrInt("axis", 0)});
  b.Node("Reshape", {"x", "target"}, {"flat"});
  b.Node("MatMul", {"flat", "w"}, {"y"});
  b.Output("y");
  ExpectMatchesFixedCompiles(b.Bytes(), "x", "1..8", "x6x8", 48, {8, 3, 1, 8});
}

// The artifact keeps the range and plans memory once, for its maximum: within 10% of a compile
// fixed at the maximum.
TEST(DynamicShapes, MemoryIsPlannedOnceForTheMaximum) {
  auto ranged = Compile(SmallCnn(), {"data:1..4x3x12x12"});
  auto fixed = Compile(SmallCnn(), {"data:4x3x12x12"});
  ASSERT_TRUE(ranged.ok() && fixed.ok());
  EXPECT_EQ(ranged->symbolic_dim->name, "N");
  EXPECT_EQ(ranged->symbolic_dim->min, 1);
  EXPECT_EQ(ranged->symbolic_dim->max, 4);
  auto a = runtime::Executor::Load(*ranged);
  auto f = runtime::Executor::Load(std::move(*fixed));
  ASSERT_TRUE(a.ok() && f.ok());
  EXPECT_LE(double((*a)->peak_bytes()), 1.1 * double((*f)->peak_bytes()));
  EXPECT_EQ((*a)->inputs()[0].shape, (std::vector<int64_t>{4, 3, 12, 12}));
  EXPECT_EQ((*a)->inputs()[0].leading_scale, 1);

  // The format keeps the range and each tensor's scale; a scale without a range is corrupt.
  auto parsed = runtime::Artifact::Parse(ranged->Serialize());
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  ASSERT_TRUE(parsed->symbolic_dim.has_value());
  EXPECT_EQ(parsed->symbolic_dim->tensor, ranged->symbolic_dim->tensor);
  for (size_t t = 0; t < ranged->tensors.size(); ++t) {
    EXPECT_EQ(parsed->tensors[t].leading_scale, ranged->tensors[t].leading_scale) << ranged->tensors[t].name;
  }
  runtime::Artifact broken = *ranged;
  broken.symbolic_dim.reset();
  EXPECT_THAT(broken.Validate().message(), HasSubstr("has a leading scale (1) but the artifact no symbolic dimension"));
}

TEST(DynamicShapes, ARunOutsideTheRangeOrWithInputsThatDisagreeIsOneClearError) {
  OnnxBuilder b(13);
  b.SymbolicInput("x", {"batch", "4"});
  b.SymbolicInput("z", {"batch", "4"});
  b.Node("Add", {"x", "z"}, {"y"});
  b.Output("y");
  auto artifact = Compile(b.Bytes(), {"x:2..8x4", "z:2..8x4"});
  ASSERT_TRUE(artifact.ok()) << artifact.status().ToString();
  auto ex = runtime::Executor::Load(std::move(*artifact));
  ASSERT_TRUE(ex.ok());
  const std::vector<float> one_row(4, 1.0f), three_rows(12, 2.0f), nine_rows(36, 0.0f), odd(6, 0.0f);
  EXPECT_EQ((*ex)->SetInput("x", one_row.data(), 16).message(),
            "input 'x': 'batch' (its dimension 0) is 1, outside the artifact's range [2, 8]");
  EXPECT_EQ((*ex)->SetInput("x", nine_rows.data(), 144).message(),
            "input 'x': 'batch' (its dimension 0) is 9, outside the artifact's range [2, 8]");
  EXPECT_EQ((*ex)->SetInput("z", odd.data(), 24).message(),
            "input 'z' takes 16 bytes for each unit of 'batch' (its dimension 0 is 1 x 'batch', in [2, 8]), got 24");
  ASSERT_TRUE((*ex)->SetInput("x", three_rows.data(), 48).ok());
  EXPECT_EQ((*ex)->Run().message(), "inputs 'x' and 'z' disagree on 'batch': 3 and 8");
  ASSERT_TRUE((*ex)->SetInput("z", three_rows.data(), 48).ok());
  ASSERT_TRUE((*ex)->Run().ok());
  EXPECT_EQ((*ex)->outputs()[0].shape, (std::vector<int64_t>{3, 4}));
  const float* y = static_cast<const float*>((*ex)->Output(0));
  for (int i = 0; i < 12; ++i) EXPECT_EQ(y[i], 4.0f);
}

TEST(DynamicShapes, WhatCannotFollowASymbolicSizeIsRefusedNamingIt) {
  // A reduction over the batch: every row of the output reads every row of the input.
  OnnxBuilder sum(13);
  sum.SymbolicInput("x", {"batch", "4"});
  sum.Node("ReduceMax", {"x"}, {"y"}, {AttrInts("axes", {0}), AttrInt("keepdims", 1)});
  sum.Output("y");
  auto r = Compile(sum.Bytes(), {"x:1..8x4"});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            "dynamic: kernel ReduceMax of node 'n0': stage 'in0.reduce' reads 'in0' at another row than its own (a "
            "reduction over dimension 0, a shifted or strided row): its dimension 0 cannot follow the symbolic size");

  // The size used as a number: folded into a constant at each size.
  OnnxBuilder mean(13);
  mean.SymbolicInput("x", {"batch", "4"});
  mean.Ints("zero", {0});
  mean.Node("Shape", {"x"}, {"s"});
  mean.Node("Gather", {"s", "zero"}, {"n"}, {AttrInt("axis", 0)});
  mean.Node("Cast", {"n"}, {"nf"}, {AttrInt("to", 1)});
  mean.Node("Div", {"x", "nf"}, {"y"});
  mean.Output("y");
  r = Compile(mean.Bytes(), {"x:1..8x4"});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            "dynamic: node 'n3' (Div, opset 13): its input 1 ('nf') is folded from the size of 'batch' (it differs at "
            "'batch' = 8 and 2); this model cannot keep 'batch' symbolic: give it one size with --input-shape");

  // Today's limits, each named: a range past dimension 0, two ranges, a GPU target.
  OnnxBuilder two(13);
  two.SymbolicInput("x", {"batch", "seq"});
  two.SymbolicInput("z", {"batch", "seq"});
  two.Node("Add", {"x", "z"}, {"y"});
  two.Output("y");
  r = Compile(two.Bytes(), {"x:1x1..8", "z:1x8"});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            "--input-shape x:1x1..8: a range on dimension 1 of input 'x'; only dimension 0 can be kept symbolic so "
            "far (give the others one size)");
  r = Compile(two.Bytes(), {"x:1..8x4", "z:1..4x4"});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            "--input-shape z:1..4x4: its range differs from another input's (1..8); the inputs given ranges share "
            "one symbolic dimension, so give them the same one");
  r = Compile(Mlp(), {"x:1..8x24"}, *compiler::ParseTarget("cuda -arch=sm_90 -emulate=host"));
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("'batch' is kept symbolic (a range in --input-shape), which CPU "
                                              "targets support so far"));

  for (const auto& [text, message] : std::vector<std::pair<std::string, std::string>>{
           {"x:8..1x4",
            "--input-shape 'x:8..1x4': the range '8..1' is empty or one size; a range is LO..HI with LO < HI"},
           {"x:4..4x4",
            "--input-shape 'x:4..4x4': the range '4..4' is empty or one size; a range is LO..HI with LO < HI"},
           {"x:..8x4",
            "--input-shape 'x:..8x4': dimension '..8' is not a positive integer below 2^31 nor a range LO..HI of them "
            "(dimensions are separated by 'x')"},
           {"x:0..8x4",
            "--input-shape 'x:0..8x4': dimension '0..8' is not a positive integer below 2^31 nor a range LO..HI of "
            "them (dimensions are separated by 'x')"}}) {
    auto parsed = compiler::ParseInputShape(text);
    ASSERT_FALSE(parsed.ok()) << text;
    EXPECT_EQ(parsed.status().message(), message);
  }
  auto ok = compiler::ParseInputShape("x:1..512x768");
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->ToString(), "x:1..512x768");
  EXPECT_EQ(ok->dims, (std::vector<int64_t>{512, 768}));
}

}  // namespace
}  // namespace tunefarm
