// The QDQ-to-integer rewrite (compiler/model/passes/qdq_to_integer.h) on small QDQ graphs built
// here: a Q(act(Conv(DQ, DQ))) chain becomes one QLinearConv with the activation as its output
// bounds and an int8 conv2d task, a quantized residual add after it its epilogue; data movement
// between alike Q/DQ pairs runs on the integers;
// chains whose values feed anything else stay float. The rewritten model computes what the float
// QDQ graph (opt level 0, no rewrite) computes, within one quantization step.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "common/compile_onnx.h"
#include "common/onnx_builder.h"
#include "common/run_artifact.h"
#include "compiler/model/passes/pipeline.h"
#include "compiler/operators/node_workload.h"
#include "tunefarm/compiler/model.h"

namespace tunefarm::compiler {
namespace {

using testing::AttrInt;
using testing::AttrInts;
using testing::OnnxBuilder;

constexpr float kOutScale = 0.05f;
constexpr int32_t kOutZero = 10;

// x [1, 4, 6, 6] quantized (uint8, zero point 128), a 3x3 conv of 8 channels with per-channel int8
// weights and a float bias, `activation` ("Relu", "Clip" or "" for none), quantized (uint8, zero
// point 10); then, dequantized alike, a MaxPool whose output is quantized with `pool_scale`; the
// result dequantized. `conv_also_output`: the conv's float output is a graph output too.
std::string QdqModel(const std::string& activation, float pool_scale, bool conv_also_output) {
  OnnxBuilder b(13);
  b.Input("x", {1, 4, 6, 6});
  std::mt19937 rng(48);
  std::vector<int32_t> w(8 * 4 * 9);
  for (int32_t& v : w) v = int32_t(rng() % 255) - 127;
  std::vector<float> w_scale, bias;
  for (int k = 0; k < 8; ++k) {
    w_scale.push_back(0.002f * float(k + 1));
    bias.push_back(0.05f * float(k) - 0.2f);
  }
  b.Floats("x_scale", {}, {0.02f});
  b.Bytes8("x_zero", {}, {128}, onnx::TensorProto::UINT8);
  b.Bytes8("w", {8, 4, 3, 3}, w, onnx::TensorProto::INT8);
  b.Floats("w_scale", {8}, w_scale);
  b.Bytes8("w_zero", {8}, std::vector<int32_t>(8, 0), onnx::TensorProto::INT8);
  b.Floats("bias", {8}, bias);
  b.Floats("y_scale", {}, {kOutScale});
  b.Bytes8("y_zero", {}, {kOutZero}, onnx::TensorProto::UINT8);
  b.Floats("pool_scale", {}, {pool_scale});
  b.Floats("lo", {}, {0.0f});
  b.Floats("hi", {}, {2.0f});
  b.Node("QuantizeLinear", {"x", "x_scale", "x_zero"}, {"xq"});
  b.Node("DequantizeLinear", {"xq", "x_scale", "x_zero"}, {"xf"});
  b.Node("DequantizeLinear", {"w", "w_scale", "w_zero"}, {"wf"}, {AttrInt("axis", 0)});
  b.Node("Conv", {"xf", "wf", "bias"}, {"conv"}, {AttrInts("pads", {1, 1, 1, 1}), AttrInts("kernel_shape", {3, 3})});
  std::string act = "conv";
  if (activation == "Relu") {
    b.Node("Relu", {"conv"}, {"act"});
    act = "act";
  } else if (activation == "Clip") {
    b.Node("Clip", {"conv", "lo", "hi"}, {"act"});
    act = "act";
  }
  b.Node("QuantizeLinear", {act, "y_scale", "y_zero"}, {"yq"});
  b.Node("DequantizeLinear", {"yq", "y_scale", "y_zero"}, {"yf"});
  b.Node("MaxPool", {"yf"}, {"pool"}, {AttrInts("kernel_shape", {2, 2}), AttrInts("strides", {2, 2})});
  b.Node("QuantizeLinear", {"pool", "pool_scale", "y_zero"}, {"pq"});
  b.Node("DequantizeLinear", {"pq", "pool_scale", "y_zero"}, {"y"});
  b.Output("y");
  if (conv_also_output) b.Output("conv");
  return b.Bytes();
}

Result<graph::Graph> Optimized(const std::string& bytes) {
  TUNEFARM_ASSIGN_OR_RETURN(graph::Graph g, frontend::ImportOnnxBytes(bytes, "qdq"));
  OptimizeOptions options;
  options.evaluate_constants = HostConstantEvaluator();
  TUNEFARM_RETURN_IF_ERROR(Optimize(&g, 3, HostTarget(), options));
  return g;
}

std::string OpList(const graph::Graph& g) {
  std::string ops;
  for (const graph::Node& n : g.nodes) ops += (ops.empty() ? "" : " ") + n.op_type;
  return ops;
}

const graph::Node* FindOp(const graph::Graph& g, const std::string& op) {
  for (const graph::Node& n : g.nodes) {
    if (n.op_type == op) return &n;
  }
  return nullptr;
}

std::vector<float> Input() {
  std::vector<float> x(4 * 36);
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> d(-2.5f, 2.5f);
  for (float& v : x) v = d(rng);
  return x;
}

// The rewritten model against the float QDQ graph: at most one output step apart.
void ExpectMatchesTheFloatGraph(const std::string& bytes, float step) {
  auto rewritten = testing::CompileOnnxBytes(bytes, "qdq", 3);
  auto as_float = testing::CompileOnnxBytes(bytes, "qdq", 0);
  ASSERT_TRUE(rewritten.ok()) << rewritten.status().ToString();
  ASSERT_TRUE(as_float.ok()) << as_float.status().ToString();
  const std::vector<float> y = testing::RunArtifact(std::move(*rewritten), Input());
  const std::vector<float> ref = testing::RunArtifact(std::move(*as_float), Input());
  ASSERT_EQ(y.size(), ref.size());
  int steps = 0;
  for (size_t i = 0; i < y.size(); ++i) {
    EXPECT_LE(std::fabs(y[i] - ref[i]), step * 1.001f) << "output " << i;
    steps += y[i] != ref[i];
  }
  std::printf("%d of %zu outputs one step off the float QDQ graph\n", steps, y.size());
}

TEST(QdqToInteger, AQuantizedConvBecomesOneIntegerNodeAndAnInt8Task) {
  const std::string bytes = QdqModel("Relu", kOutScale, false);
  auto g = Optimized(bytes);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  // The conv chain is one QLinearConv; the MaxPool between alike Q/DQ pairs reads the uint8 tensor.
  EXPECT_EQ(OpList(*g), "QuantizeLinear QLinearConv MaxPool DequantizeLinear");
  const graph::Node* conv = FindOp(*g, "QLinearConv");
  ASSERT_NE(conv, nullptr);
  // The Relu is the output's lower bound: the zero point.
  EXPECT_EQ(conv->epilogue.activation, graph::FusedActivation::kClip);
  EXPECT_EQ(conv->epilogue.clip_min, float(kOutZero));
  EXPECT_EQ(conv->epilogue.clip_max, 255.0f);
  EXPECT_EQ(g->values[size_t(FindOp(*g, "MaxPool")->inputs[0])].dtype, graph::DataType::kUInt8);

  const std::string path = ::testing::TempDir() + "qdq_to_integer_" + std::to_string(getpid()) + ".onnx";
  std::ofstream(path, std::ios::binary) << bytes;
  auto tasks = ExtractTasks(path, HostTarget());
  std::remove(path.c_str());
  ASSERT_TRUE(tasks.ok()) << tasks.status().ToString();
  ASSERT_EQ(tasks->size(), 1u);
  EXPECT_EQ((*tasks)[0].workload.ImplementationKey(),
            "conv2d_nchwc:conv2d|N1_C4_H6_W6|K8_R3x3_S1x1_P1_1_1_1_D1x1_G1|NCHW|uint8");
  ExpectMatchesTheFloatGraph(bytes, kOutScale);
}

TEST(QdqToInteger, AClipBecomesTheQuantizedBounds) {
  auto g = Optimized(QdqModel("Clip", kOutScale, false));
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  const graph::Node* conv = FindOp(*g, "QLinearConv");
  ASSERT_NE(conv, nullptr) << OpList(*g);
  // Clip(0, 2) quantized with scale 0.05 and zero point 10: [10, 50].
  EXPECT_EQ(conv->epilogue.clip_min, 10.0f);
  EXPECT_EQ(conv->epilogue.clip_max, 50.0f);
  ExpectMatchesTheFloatGraph(QdqModel("Clip", kOutScale, false), kOutScale);
  auto plain = Optimized(QdqModel("", kOutScale, false));
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(FindOp(*plain, "QLinearConv")->epilogue.activation, graph::FusedActivation::kNone);
}

TEST(QdqToInteger, ChainsWhoseValuesFeedAnythingElseOrQuantizeOtherwiseStayFloat) {
  // The conv's float output is also a graph output: the conv stays.
  auto shared = Optimized(QdqModel("", kOutScale, true));
  ASSERT_TRUE(shared.ok()) << shared.status().ToString();
  EXPECT_EQ(FindOp(*shared, "QLinearConv"), nullptr) << OpList(*shared);
  EXPECT_NE(FindOp(*shared, "Conv"), nullptr);
  // The MaxPool's output is quantized with another scale than its input: it stays a float pool
  // between a DequantizeLinear and a QuantizeLinear.
  auto rescaled = Optimized(QdqModel("Relu", 0.1f, false));
  ASSERT_TRUE(rescaled.ok()) << rescaled.status().ToString();
  EXPECT_EQ(OpList(*rescaled), "QuantizeLinear QLinearConv DequantizeLinear MaxPool QuantizeLinear DequantizeLinear");
  ExpectMatchesTheFloatGraph(QdqModel("Relu", 0.1f, false), 0.1f);
}

// PyTorch's residual block: Q(relu(DQ(Q(conv)) + DQ(shortcut))). The add becomes a QLinearAdd and
// then the conv's epilogue: one kernel from the uint8 input to the uint8 sum.
TEST(QdqToInteger, AResidualAddAfterAQuantizedConvBecomesItsEpilogue) {
  OnnxBuilder b(13);
  b.Input("x", {1, 4, 6, 6});
  std::vector<int32_t> w(4 * 4 * 9);
  for (size_t i = 0; i < w.size(); ++i) w[i] = int32_t(i * 37 % 201) - 100;
  b.Floats("x_scale", {}, {0.02f});
  b.Bytes8("x_zero", {}, {128}, onnx::TensorProto::UINT8);
  b.Bytes8("w", {4, 4, 3, 3}, w, onnx::TensorProto::INT8);
  b.Floats("w_scale", {}, {0.004f});
  b.Floats("c_scale", {}, {0.03f});
  b.Bytes8("c_zero", {}, {120}, onnx::TensorProto::UINT8);
  b.Floats("y_scale", {}, {kOutScale});
  b.Bytes8("y_zero", {}, {0}, onnx::TensorProto::UINT8);
  b.Node("QuantizeLinear", {"x", "x_scale", "x_zero"}, {"xq"});
  b.Node("DequantizeLinear", {"xq", "x_scale", "x_zero"}, {"xf"});
  b.Node("DequantizeLinear", {"w", "w_scale"}, {"wf"});
  b.Node("Conv", {"xf", "wf"}, {"conv"}, {AttrInts("pads", {1, 1, 1, 1}), AttrInts("kernel_shape", {3, 3})});
  b.Node("QuantizeLinear", {"conv", "c_scale", "c_zero"}, {"cq"});
  b.Node("DequantizeLinear", {"cq", "c_scale", "c_zero"}, {"cf"});
  b.Node("Add", {"cf", "xf"}, {"sum"});
  b.Node("Relu", {"sum"}, {"act"});
  b.Node("QuantizeLinear", {"act", "y_scale", "y_zero"}, {"yq"});
  b.Node("DequantizeLinear", {"yq", "y_scale", "y_zero"}, {"y"});
  b.Output("y");
  auto g = Optimized(b.Bytes());
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_EQ(OpList(*g), "QuantizeLinear QLinearConv DequantizeLinear");
  const graph::Node* conv = FindOp(*g, "QLinearConv");
  ASSERT_NE(conv, nullptr);
  ASSERT_EQ(conv->inputs.size(), compiler::kFusedResidual + 5);
  EXPECT_EQ(g->values[size_t(conv->inputs[compiler::kFusedResidual])].name, "xq");  // the shortcut, as uint8
  EXPECT_EQ(conv->epilogue.clip_min, 0.0f);  // the Relu after the add, at the sum's zero point
  ExpectMatchesTheFloatGraph(b.Bytes(), kOutScale);
}

// Attention's product of two quantized activations becomes QLinearMatMul, an int8 batch_matmul task.
TEST(QdqToInteger, AProductOfTwoQuantizedActivationsIsAnInt8BatchMatmul) {
  OnnxBuilder b(13);
  b.Input("x", {2, 4, 8});
  b.Floats("s", {}, {0.03f});
  b.Bytes8("z", {}, {3}, onnx::TensorProto::INT8);
  b.Floats("y_scale", {}, {0.2f});
  b.Bytes8("y_zero", {}, {-5}, onnx::TensorProto::INT8);
  b.Node("QuantizeLinear", {"x", "s", "z"}, {"xq"});
  b.Node("DequantizeLinear", {"xq", "s", "z"}, {"xf"});
  b.Node("Transpose", {"xf"}, {"xt"}, {AttrInts("perm", {0, 2, 1})});
  b.Node("QuantizeLinear", {"xt", "s", "z"}, {"tq"});
  b.Node("DequantizeLinear", {"tq", "s", "z"}, {"tf"});
  b.Node("MatMul", {"xf", "tf"}, {"scores"});
  b.Node("QuantizeLinear", {"scores", "y_scale", "y_zero"}, {"yq"});
  b.Node("DequantizeLinear", {"yq", "y_scale", "y_zero"}, {"y"});
  b.Output("y");
  auto g = Optimized(b.Bytes());
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_EQ(OpList(*g), "QuantizeLinear Transpose QLinearMatMul DequantizeLinear");
  const std::string path = ::testing::TempDir() + "qdq_bmm_" + std::to_string(getpid()) + ".onnx";
  std::ofstream(path, std::ios::binary) << b.Bytes();
  auto tasks = ExtractTasks(path, HostTarget());
  std::remove(path.c_str());
  ASSERT_TRUE(tasks.ok()) << tasks.status().ToString();
  ASSERT_EQ(tasks->size(), 1u);
  EXPECT_EQ((*tasks)[0].workload.ImplementationKey(), "batch_matmul:batch_matmul|B2_M4_K8|N4|BMN|int8");
  auto rewritten = testing::CompileOnnxBytes(b.Bytes(), "bmm", 3);
  auto as_float = testing::CompileOnnxBytes(b.Bytes(), "bmm", 0);
  ASSERT_TRUE(rewritten.ok() && as_float.ok());
  std::vector<float> x(64);
  for (size_t i = 0; i < x.size(); ++i) x[i] = 0.07f * float(int(i % 23) - 11);
  const std::vector<float> y = testing::RunArtifact(std::move(*rewritten), x);
  const std::vector<float> ref = testing::RunArtifact(std::move(*as_float), x);
  ASSERT_EQ(y.size(), ref.size());
  for (size_t i = 0; i < y.size(); ++i) EXPECT_LE(std::fabs(y[i] - ref[i]), 0.2f * 1.001f) << "output " << i;
}

}  // namespace
}  // namespace tunefarm::compiler
