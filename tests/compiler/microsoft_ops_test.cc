// ONNX Runtime's com.microsoft quantized operators (compiler/operators/microsoft_ops.cc): what they
// refuse is one error naming the node and the reason, omitted inputs included (never a crash). Their
// values against ONNX Runtime: QuantizedModels (qoperator_contrib, dynamic_contrib).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/onnx_builder.h"
#include "compiler/frontend/onnx_importer.h"
#include "compiler/model/passes/infer_shapes.h"

namespace tunefarm::compiler {
namespace {

using testing::AttrInt;
using testing::OnnxBuilder;

TEST(MicrosoftOps, WhatIsNotSupportedIsOneErrorNamingTheNodeAndTheReason) {
  struct Refused {
    const char* op;
    std::vector<std::string> inputs;
    std::vector<onnx::AttributeProto> attrs;
    const char* message;
  };
  // x: uint8 [1, 4, 5, 5]; xf: float32 [1, 4, 5, 5]; a: uint8 [2, 4]; bm: int8 [4, 3].
  const std::vector<Refused> cases = {
      {"QLinearAdd",
       {"xf", "scale", "", "x", "scale", "", "scale"},
       {},
       "node 'n0' (com.microsoft.QLinearAdd, opset 13): A must be uint8 or int8, got float32"},
      {"QLinearAveragePool",
       {"x", "scale", "", "scale"},
       {AttrInt("channels_last", 1), testing::AttrInts("kernel_shape", {2, 2})},
       "node 'n0' (com.microsoft.QLinearAveragePool, opset 13): channels_last 1 is not supported (the "
       "channels-first form QOperator models use is)"},
      {"QLinearConcat",
       {"scale", "y_zero", "", "scale", "y_zero"},
       {AttrInt("axis", 1)},
       "node 'n0' (com.microsoft.QLinearConcat, opset 13): the first input is missing"},
      {"QGemm",
       {"a", "scale", "", "", "scale"},
       {},
       "node 'n0' (com.microsoft.QGemm, opset 13): B or its scale is missing"},
      {"QGemm",
       {"a", "scale", "", "bm", "scale", "", "bias_float"},
       {},
       "node 'n0' (com.microsoft.QGemm, opset 13): C must be int32 (a bias with scale a_scale * b_scale)"},
      {"MatMulIntegerToFloat",
       {"af", "bm", "scale", "scale"},
       {},
       "node 'n0' (com.microsoft.MatMulIntegerToFloat, opset 13): A must be uint8 or int8, got float32"},
      {"DynamicQuantizeMatMul",
       {"af", "bm", "scale3_wrong"},
       {},
       "node 'n0' (com.microsoft.DynamicQuantizeMatMul, opset 13): b_scale [4] must be a single value or [3] (one "
       "per column)"},
  };
  for (const Refused& r : cases) {
    OnnxBuilder b(13);
    b.Input("x", {1, 4, 5, 5}, onnx::TensorProto::UINT8);
    b.Input("xf", {1, 4, 5, 5});
    b.Input("a", {2, 4}, onnx::TensorProto::UINT8);
    b.Input("af", {2, 4});
    b.Bytes8("bm", {4, 3}, std::vector<int32_t>(12, 1), onnx::TensorProto::INT8);
    b.Bytes8("y_zero", {}, {0}, onnx::TensorProto::UINT8);
    b.Floats("scale", {}, {1});
    b.Floats("scale3_wrong", {4}, {1, 1, 1, 1});
    b.Floats("bias_float", {3}, {0, 0, 0});
    b.Node(r.op, r.inputs, {"y"}, r.attrs)->set_domain("com.microsoft");
    b.Output("y");
    auto g = frontend::ImportOnnxBytes(b.Bytes(), "m");
    const Status s = g.ok() ? graph::InferShapes(&*g) : g.status();
    EXPECT_FALSE(s.ok()) << r.message;
    EXPECT_EQ(s.message(), r.message);
  }
}

}  // namespace
}  // namespace tunefarm::compiler
