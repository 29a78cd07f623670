// QuantizeLinear and DequantizeLinear (compiler/operators/quantize_ops.cc) against a naive
// reference written from the ONNX spec: round half to even, saturation to the type's range, per
// tensor and per axis, with and without a zero point; on the host and with the kernels lowered for
// a GPU and emulated. ONNX's own backend tests for both run in OnnxConformance. And every form they
// refuse is one error naming the node and the reason.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
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
using testing::OnnxBuilder;

// x [2, 6]: ties on both sides of zero (half to even), values past both ends of the range, and
// ordinary ones; channel 1 is scaled differently.
const std::vector<float> kInput = {0.5f,  1.5f,   2.5f,  -0.5f, -1.5f, -2.5f,   // channel 0
                                   300.f, -300.f, 0.26f, 1.74f, -7.3f, 12.0f};  // channel 1

struct Case {
  const char* name;
  int32_t elem_type;           // of the quantized value
  std::vector<float> scales;   // one (per tensor) or two (per axis 0)
  std::vector<int32_t> zeros;  // empty: no zero point input
};

// The spec's arithmetic, element by element.
std::vector<float> Reference(const Case& c) {
  const bool is_signed = c.elem_type == onnx::TensorProto::INT8;
  const float lo = is_signed ? -128.f : 0.f, hi = is_signed ? 127.f : 255.f;
  std::vector<float> out;
  for (size_t i = 0; i < kInput.size(); ++i) {
    const size_t ch = c.scales.size() == 1 ? 0 : i / 6;
    const float zero = c.zeros.empty() ? 0.f : float(c.zeros[ch]);
    const float q = std::min(std::max(std::nearbyint(kInput[i] / c.scales[ch]) + zero, lo), hi);
    out.push_back((q - zero) * c.scales[ch]);
  }
  return out;
}

std::string RoundTripModel(const Case& c) {
  OnnxBuilder b(13);
  b.Input("x", {2, 6});
  const std::vector<int64_t> param_shape = c.scales.size() == 1 ? std::vector<int64_t>{} : std::vector<int64_t>{2};
  b.Floats("scale", param_shape, c.scales);
  std::vector<std::string> inputs = {"x", "scale"};
  if (!c.zeros.empty()) {
    b.Bytes8("zero", param_shape, c.zeros, c.elem_type);
    inputs.push_back("zero");
  }
  b.Node("QuantizeLinear", inputs, {"q"}, {AttrInt("axis", 0)});
  inputs[0] = "q";
  b.Node("DequantizeLinear", inputs, {"y"}, {AttrInt("axis", 0)});
  b.Output("y");
  return b.Bytes();
}

TEST(QuantizeOps, RoundHalfToEvenAndSaturateAsTheSpecSays) {
  const std::vector<Case> cases = {
      {"int8 per axis with zero points", onnx::TensorProto::INT8, {1.0f, 0.5f}, {3, -2}},
      {"uint8 per tensor with a zero point", onnx::TensorProto::UINT8, {0.25f}, {128}},
      {"uint8 per tensor without a zero point", onnx::TensorProto::UINT8, {1.0f}, {}},
  };
  for (const Case& c : cases) {
    const std::vector<float> want = Reference(c);
    for (bool gpu : {false, true}) {
      auto artifact = testing::CompileOnnxBytes(RoundTripModel(c), "qdq", 3, gpu);
      ASSERT_TRUE(artifact.ok()) << c.name << ": " << artifact.status().ToString();
      const std::vector<float> got = testing::RunArtifact(std::move(*artifact), kInput);
      ASSERT_EQ(got.size(), want.size()) << c.name;
      for (size_t i = 0; i < want.size(); ++i) {
        EXPECT_EQ(got[i], want[i]) << c.name << (gpu ? " (GPU, emulated)" : "") << ": element " << i << " of x "
                                   << kInput[i];
      }
    }
  }
  // The ties themselves: 0.5 -> 0, 1.5 -> 2, 2.5 -> 2, -0.5 -> -0, -1.5 -> -2, -2.5 -> -2.
  const std::vector<float> ties = Reference({"", onnx::TensorProto::INT8, {1.0f}, {}});
  EXPECT_EQ(std::vector<float>(ties.begin(), ties.begin() + 6), (std::vector<float>{0, 2, 2, 0, -2, -2}));
}

Status Infer(const OnnxBuilder& b) {
  auto g = frontend::ImportOnnxBytes(b.Bytes(), "m");
  if (!g.ok()) return g.status();
  return graph::InferShapes(&*g);
}

void ExpectError(const Status& s, const std::string& message) {
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.message(), message);
}

TEST(QuantizeOps, WhatIsNotSupportedIsOneErrorNamingTheNodeAndTheReason) {
  {
    OnnxBuilder b(21);
    b.Input("x", {2, 4});
    b.Floats("scale", {2, 2}, {1, 1, 1, 1});
    b.Node("QuantizeLinear", {"x", "scale"}, {"q"}, {AttrInt("axis", 1), AttrInt("block_size", 2)});
    b.Output("q");
    ExpectError(Infer(b),
                "node 'n0' (QuantizeLinear, opset 21): blocked quantization (block_size 2) is not supported; "
                "quantize per tensor or per axis");
  }
  {
    OnnxBuilder b(13);
    b.Input("x", {2, 3});
    b.Floats("scale", {4}, {1, 1, 1, 1});
    b.Node("QuantizeLinear", {"x", "scale"}, {"q"}, {AttrInt("axis", 1)});
    b.Output("q");
    ExpectError(Infer(b),
                "node 'n0' (QuantizeLinear, opset 13): a per-axis scale has 4 values and axis 1 of the "
                "input 3");
  }
  {
    OnnxBuilder b(13);
    b.Input("x", {2, 3});
    b.Floats("scale", {1, 2}, {1, 1});
    b.Node("QuantizeLinear", {"x", "scale"}, {"q"});
    b.Output("q");
    ExpectError(Infer(b), "node 'n0' (QuantizeLinear, opset 13): the scale must be a scalar or 1-D, got rank 2");
  }
  {
    OnnxBuilder b(21);
    b.Input("x", {2, 3});
    b.Floats("scale", {}, {1});
    b.Node("QuantizeLinear", {"x", "scale"}, {"q"}, {AttrInt("output_dtype", onnx::TensorProto::FLOAT16)});
    b.Output("q");
    ExpectError(Infer(b),
                "node 'n0' (QuantizeLinear, opset 21): output_dtype 10 is not supported here (uint8 or "
                "int8, as the zero point)");
  }
  {
    OnnxBuilder b(13);
    b.Input("x", {2, 3});
    b.Floats("scale", {3}, {1, 1, 1});
    b.Bytes8("zero", {2}, {0, 0}, onnx::TensorProto::INT8);
    b.Node("QuantizeLinear", {"x", "scale", "zero"}, {"q"});
    b.Output("q");
    ExpectError(Infer(b), "node 'n0' (QuantizeLinear, opset 13): the zero point's shape differs from the scale's");
  }
  {
    OnnxBuilder b(13);
    b.Input("x", {2, 3}, onnx::TensorProto::UINT8);
    b.Floats("scale", {}, {1});
    b.Bytes8("zero", {}, {0}, onnx::TensorProto::INT8);
    b.Node("DequantizeLinear", {"x", "scale", "zero"}, {"y"});
    b.Output("y");
    ExpectError(Infer(b), "node 'n0' (DequantizeLinear, opset 13): the zero point's type differs from x's");
  }
  {
    OnnxBuilder b(13);
    b.Input("x", {2, 3}, onnx::TensorProto::INT8);
    b.Floats("scale", {}, {1});
    b.Node("QuantizeLinear", {"x", "scale"}, {"q"});
    b.Output("q");
    ExpectError(Infer(b),
                "node 'n0' (QuantizeLinear, opset 13): the input must be float32 (float16 graphs: Cast first)");
  }
  {
    OnnxBuilder b(13);
    b.Input("x", {2, 3});
    b.Floats("scale", {}, {1});
    b.Node("DequantizeLinear", {"x", "scale"}, {"y"});
    b.Output("y");
    ExpectError(Infer(b),
                "node 'n0' (DequantizeLinear, opset 13): dequantizing float32 is not supported (uint8, int8 and int32 "
                "are; float8 and int4 are not)");
  }
}

}  // namespace
}  // namespace tunefarm::compiler
