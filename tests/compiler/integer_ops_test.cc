// The integer family (compiler/operators/integer_ops.cc) against naive references: ConvInteger
// accumulates in int32 exactly where a float32 sum would not be exact, with padding that counts as
// the zero point and per-channel weight zero points; QLinearMatMul requantizes per column as ONNX
// Runtime does; on the host and with the kernels lowered for a GPU and emulated. ONNX's backend tests
// for these operators run in OnnxConformance. Every form refused is one error naming the node.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "common/compile_onnx.h"
#include "common/onnx_builder.h"
#include "common/run_artifact.h"
#include "compiler/frontend/onnx_importer.h"
#include "compiler/model/passes/infer_shapes.h"

namespace tunefarm::compiler {
namespace {

using testing::AttrInt;
using testing::AttrInts;
using testing::OnnxBuilder;

constexpr int64_t kChannels = 512, kOut = 2, kSide = 3;

// x: the uint8 values carried in a float input (QuantizeLinear with scale 1 makes them uint8).
struct ConvCase {
  std::vector<float> x;                // [1, C, 3, 3], integers in [0, 255]
  std::vector<int32_t> w;              // [M, C, 3, 3], int8
  int32_t x_zero = 7;                  // uint8
  std::vector<int32_t> w_zero{3, -5};  // int8, per output channel
};

ConvCase MakeConvCase() {
  // Large products of one sign: each output sums 4608 products near -28,000, so the sums pass 2^24,
  // where float32 stops holding every integer; the spread keeps their low bits busy.
  std::mt19937 rng(2026);
  ConvCase c;
  std::uniform_int_distribution<int> xs(200, 255), ws(-128, -100);
  for (int64_t i = 0; i < kChannels * kSide * kSide; ++i) c.x.push_back(float(xs(rng)));
  for (int64_t i = 0; i < kOut * kChannels * kSide * kSide; ++i) c.w.push_back(ws(rng));
  return c;
}

// ConvInteger with pads 1: a padded tap reads the zero point, i.e. contributes 0.
std::vector<int64_t> ConvReference(const ConvCase& c) {
  std::vector<int64_t> out;
  for (int64_t m = 0; m < kOut; ++m) {
    for (int64_t oy = 0; oy < kSide; ++oy) {
      for (int64_t ox = 0; ox < kSide; ++ox) {
        int64_t acc = 0;
        for (int64_t ch = 0; ch < kChannels; ++ch) {
          for (int64_t ky = 0; ky < 3; ++ky) {
            for (int64_t kx = 0; kx < 3; ++kx) {
              const int64_t iy = oy + ky - 1, ix = ox + kx - 1;
              if (iy < 0 || iy >= kSide || ix < 0 || ix >= kSide) continue;
              const int64_t xv = int64_t(c.x[size_t((ch * kSide + iy) * kSide + ix)]) - c.x_zero;
              const int64_t wv = c.w[size_t(((m * kChannels + ch) * 3 + ky) * 3 + kx)] - c.w_zero[size_t(m)];
              acc += xv * wv;
            }
          }
        }
        out.push_back(acc);
      }
    }
  }
  return out;
}

// y = float(ConvInteger(x, w) - expected): all zeros when every int32 sum is exact.
std::string ConvMinusExpectedModel(const ConvCase& c, const std::vector<int64_t>& expected) {
  OnnxBuilder b(13);
  b.Input("x", {1, kChannels, kSide, kSide});
  b.Floats("one", {}, {1.0f});
  b.Bytes8("x_zero", {}, {c.x_zero}, onnx::TensorProto::UINT8);
  b.Bytes8("w", {kOut, kChannels, 3, 3}, c.w, onnx::TensorProto::INT8);
  b.Bytes8("w_zero", {kOut}, c.w_zero, onnx::TensorProto::INT8);
  b.Bytes8("u8_zero", {}, {0}, onnx::TensorProto::UINT8);
  b.Int32s("expected", {1, kOut, kSide, kSide}, std::vector<int32_t>(expected.begin(), expected.end()));
  b.Node("QuantizeLinear", {"x", "one", "u8_zero"}, {"xq"});
  b.Node("ConvInteger", {"xq", "w", "x_zero", "w_zero"}, {"acc"}, {AttrInts("pads", {1, 1, 1, 1})});
  b.Node("Sub", {"acc", "expected"}, {"diff"});
  b.Node("Cast", {"diff"}, {"y"}, {AttrInt("to", onnx::TensorProto::FLOAT)});
  b.Output("y");
  return b.Bytes();
}

TEST(IntegerOps, ConvIntegerSumsExactlyInInt32PastWhereFloatStopsBeingExact) {
  const ConvCase c = MakeConvCase();
  const std::vector<int64_t> expected = ConvReference(c);
  int64_t largest = 0;
  for (int64_t v : expected) largest = std::max(largest, std::abs(v));
  ASSERT_GT(largest, int64_t(1) << 24) << "the case must reach past float32's exact integers";
  for (bool gpu : {false, true}) {
    auto artifact = testing::CompileOnnxBytes(ConvMinusExpectedModel(c, expected), "conv_integer", 3, gpu);
    ASSERT_TRUE(artifact.ok()) << artifact.status().ToString();
    const std::vector<float> diff = testing::RunArtifact(std::move(*artifact), c.x);
    ASSERT_EQ(diff.size(), expected.size());
    for (size_t i = 0; i < diff.size(); ++i) {
      EXPECT_EQ(diff[i], 0.0f) << (gpu ? "GPU, emulated: " : "host: ") << "output " << i << " expected " << expected[i];
    }
  }
}

// QLinearMatMul [2, 4] x [4, 3], B per column: scales and zero points per column of B,
// requantized as ONNX Runtime does: float(acc) * (a_scale * b_scale[n] / y_scale), rounded half to
// even, plus the output zero point, saturated to uint8.
TEST(IntegerOps, QLinearMatMulRequantizesPerColumnWithRoundHalfToEven) {
  const std::vector<float> a = {0, 17, 255, 128, 3, 250, 99, 1};                       // uint8 values
  const std::vector<int32_t> b = {-128, 127, 5, 64, -64, 0, 1, -1, 33, 100, 20, -90};  // int8 [4, 3]
  const float a_scale = 0.02f, y_scale = 0.5f;
  const std::vector<float> b_scale = {0.01f, 0.03f, 0.25f};
  const std::vector<int32_t> b_zero = {0, 4, -3};
  const int32_t a_zero = 128, y_zero = 100;
  std::vector<float> want;
  for (int i = 0; i < 2; ++i) {
    for (int n = 0; n < 3; ++n) {
      int32_t acc = 0;
      for (int k = 0; k < 4; ++k)
        acc += (int32_t(a[size_t(i * 4 + k)]) - a_zero) * (b[size_t(k * 3 + n)] - b_zero[size_t(n)]);
      const float multiplier = a_scale * b_scale[size_t(n)] / y_scale;
      want.push_back(std::min(std::max(std::nearbyint(float(acc) * multiplier) + float(y_zero), 0.0f), 255.0f));
    }
  }
  OnnxBuilder m(13);
  m.Input("a", {2, 4});
  m.Floats("one", {}, {1.0f});
  m.Bytes8("u8_zero", {}, {0}, onnx::TensorProto::UINT8);
  m.Floats("a_scale", {}, {a_scale});
  m.Bytes8("a_zero", {}, {a_zero}, onnx::TensorProto::UINT8);
  m.Bytes8("b", {4, 3}, b, onnx::TensorProto::INT8);
  m.Floats("b_scale", {3}, b_scale);
  m.Bytes8("b_zero", {3}, b_zero, onnx::TensorProto::INT8);
  m.Floats("y_scale", {}, {y_scale});
  m.Bytes8("y_zero", {}, {y_zero}, onnx::TensorProto::UINT8);
  m.Node("QuantizeLinear", {"a", "one", "u8_zero"}, {"aq"});
  m.Node("QLinearMatMul", {"aq", "a_scale", "a_zero", "b", "b_scale", "b_zero", "y_scale", "y_zero"}, {"yq"});
  m.Node("DequantizeLinear", {"yq", "one", "u8_zero"}, {"y"});  // the uint8 values as floats
  m.Output("y");
  for (bool gpu : {false, true}) {
    auto artifact = testing::CompileOnnxBytes(m.Bytes(), "qlinear_matmul", 3, gpu);
    ASSERT_TRUE(artifact.ok()) << artifact.status().ToString();
    EXPECT_EQ(testing::RunArtifact(std::move(*artifact), a), want) << (gpu ? "GPU, emulated" : "host");
  }
}

Status Infer(const OnnxBuilder& b) {
  auto g = frontend::ImportOnnxBytes(b.Bytes(), "m");
  if (!g.ok()) return g.status();
  return graph::InferShapes(&*g);
}

TEST(IntegerOps, WhatIsNotSupportedIsOneErrorNamingTheNodeAndTheReason) {
  struct Refused {
    const char* op;
    std::vector<std::string> inputs;
    const char* message;
  };
  // x: uint8 [1, 4, 5, 5]; w: int8 [2, 4, 3, 3]; a: uint8 [2, 4]; bm: int8 [4, 3].
  const std::vector<Refused> cases = {
      {"ConvInteger",
       {"xf", "w"},
       "node 'n0' (ConvInteger, opset 13): takes uint8 or int8 operands, got float32 and int8"},
      {"ConvInteger",
       {"x", "w", "", "zero3"},
       "node 'n0' (ConvInteger, opset 13): the second operand's zero point [3] must be a single value or [2] (one "
       "per output channel)"},
      {"ConvInteger",
       {"x", "w", "w_zero"},
       "node 'n0' (ConvInteger, opset 13): the first operand's zero point must be uint8, got int8"},
      {"QLinearConv",
       {"x", "scale", "x_zero", "w", "scale3", "", "scale", "y_zero"},
       "node 'n0' (QLinearConv, opset 13): the second operand's scale [3] must be a single value or [2] (one per "
       "output channel)"},
      {"QLinearConv",
       {"x", "scale", "x_zero", "w", "scale", "", "scale", "y_zero", "bias_float"},
       "node 'n0' (QLinearConv, opset 13): the bias must be int32, got float32"},
      {"QLinearConv",
       {"x", "scale", "x_zero", "w", "scale", "", "", "y_zero"},
       "node 'n0' (QLinearConv, opset 13): input 6 (a scale) is missing"},
      {"QLinearMatMul",
       {"a", "scale", "x_zero", "bm", "scale", "", "scale", "zero_i32"},
       "node 'n0' (QLinearMatMul, opset 13): the output's zero point must be uint8 or int8, got int32"},
      {"QLinearMatMul",
       {"a", "scale", "x_zero", "", "scale", "", "scale", "y_zero"},
       "node 'n0' (QLinearMatMul, opset 13): the second operand is missing"},
      {"MatMulInteger",
       {"a", "bm", "zero3_u8"},
       "node 'n0' (MatMulInteger, opset 13): the first operand's zero point [3] must be a single value or [2] (one "
       "per row of the first operand)"},
  };
  for (const Refused& r : cases) {
    OnnxBuilder b(13);
    b.Input("x", {1, 4, 5, 5}, onnx::TensorProto::UINT8);
    b.Input("xf", {1, 4, 5, 5});
    b.Input("a", {2, 4}, onnx::TensorProto::UINT8);
    b.Bytes8("w", {2, 4, 3, 3}, std::vector<int32_t>(72, 1), onnx::TensorProto::INT8);
    b.Bytes8("bm", {4, 3}, std::vector<int32_t>(12, 1), onnx::TensorProto::INT8);
    b.Bytes8("x_zero", {}, {0}, onnx::TensorProto::UINT8);
    b.Bytes8("w_zero", {}, {0}, onnx::TensorProto::INT8);
    b.Bytes8("zero3", {3}, {0, 0, 0}, onnx::TensorProto::INT8);
    b.Bytes8("zero3_u8", {3}, {0, 0, 0}, onnx::TensorProto::UINT8);
    b.Bytes8("y_zero", {}, {0}, onnx::TensorProto::UINT8);
    b.Int32s("zero_i32", {}, {0});
    b.Floats("scale", {}, {1});
    b.Floats("scale3", {3}, {1, 1, 1});
    b.Floats("bias_float", {2}, {0, 0});
    b.Node(r.op, r.inputs, {"y"});
    b.Output("y");
    const Status s = Infer(b);
    EXPECT_FALSE(s.ok()) << r.message;
    EXPECT_EQ(s.message(), r.message);
  }
}

}  // namespace
}  // namespace tunefarm::compiler
