// Graph passes: batch-norm folding, dead-node removal, task extraction.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cmath>

#include "common/test_files.h"
#include "compiler/frontend/zoo.h"
#include "compiler/model/passes/fold_batch_norm.h"
#include "compiler/model/passes/infer_shapes.h"
#include "compiler/model/passes/remove_dead_nodes.h"
#include "tunefarm/compiler/model.h"

namespace tunefarm::graph {
namespace {

ConstantData Floats(std::vector<int64_t> shape, std::vector<float> v) { return {DataType::kFloat32, shape, v, {}}; }

// x[1,1,2,2] -> Conv(w[2,1,1,1], b) -> BatchNorm -> Relu -> y
Graph ConvBnRelu() {
  Graph g;
  g.opset = 13;
  Value x;
  x.name = "x";
  x.shape = {1, 1, 2, 2};
  x.shape_known = true;
  int xi = g.AddValue(x);
  g.inputs.push_back(xi);
  int w = g.AddConstant("w", Floats({2, 1, 1, 1}, {2.0f, -1.0f}));
  int b = g.AddConstant("b", Floats({2}, {0.5f, 0.25f}));
  int gamma = g.AddConstant("gamma", Floats({2}, {1.0f, 3.0f}));
  int beta = g.AddConstant("beta", Floats({2}, {0.1f, -0.2f}));
  int mean = g.AddConstant("mean", Floats({2}, {0.3f, 0.0f}));
  int var = g.AddConstant("var", Floats({2}, {4.0f, 1.0f}));
  auto add_node = [&](const std::string& op, std::vector<int> in, const std::string& out) {
    Value v;
    v.name = out;
    v.producer = int(g.nodes.size());
    int o = g.AddValue(v);
    Node n;
    n.name = out;
    n.op_type = op;
    n.inputs = std::move(in);
    n.outputs = {o};
    g.nodes.push_back(n);
    return o;
  };
  int c = add_node("Conv", {xi, w, b}, "conv");
  int bn = add_node("BatchNormalization", {c, gamma, beta, mean, var}, "bn");
  g.nodes.back().attrs["epsilon"] = Attribute{Attribute::kFloat, 0, 0.0f, {}, {}, "", nullptr};
  int y = add_node("Relu", {bn}, "y");
  g.outputs.push_back(y);
  return g;
}

TEST(FoldBatchNorm, FoldsScaleAndShiftIntoTheConv) {
  Graph g = ConvBnRelu();
  ASSERT_TRUE(InferShapes(&g).ok());
  EXPECT_EQ(FoldBatchNorm(&g), 1);
  EXPECT_EQ(RemoveDeadNodes(&g), 1);
  ASSERT_EQ(g.nodes.size(), 2u);
  const Node& conv = g.nodes[0];
  EXPECT_EQ(conv.op_type, "Conv");
  EXPECT_EQ(g.values[size_t(conv.outputs[0])].name, "bn");  // consumers keep reading "bn"
  const auto& w = g.values[size_t(conv.inputs[1])].constant->f32;
  const auto& b = g.values[size_t(conv.inputs[2])].constant->f32;
  // s = gamma / sqrt(var): {0.5, 3}; w' = w * s; b' = (b - mean) * s + beta
  EXPECT_FLOAT_EQ(w[0], 1.0f);
  EXPECT_FLOAT_EQ(w[1], -3.0f);
  EXPECT_FLOAT_EQ(b[0], (0.5f - 0.3f) * 0.5f + 0.1f);
  EXPECT_FLOAT_EQ(b[1], 0.25f * 3.0f - 0.2f);
  EXPECT_EQ(g.nodes[1].op_type, "Relu");
  EXPECT_EQ(g.nodes[1].inputs[0], conv.outputs[0]);
  EXPECT_EQ(g.values[size_t(g.outputs[0])].name, "y");
}

TEST(FoldBatchNorm, LeavesSharedConvOutputsAlone) {
  Graph g = ConvBnRelu();
  g.outputs.push_back(g.nodes[0].outputs[0]);  // the conv output is also a graph output
  ASSERT_TRUE(InferShapes(&g).ok());
  EXPECT_EQ(FoldBatchNorm(&g), 0);
  EXPECT_EQ(RemoveDeadNodes(&g), 0);
  EXPECT_EQ(g.nodes.size(), 3u);
}

bool Exists(const std::string& p) {
  struct stat st;
  return stat(p.c_str(), &st) == 0;
}

// ResNet-18's 12 anchor tasks (the ones TVM lists), each 3x3 stride-1 conv's Winograd
// implementation right after it, and the dense layer's second implementation.
TEST(ExtractTasks, ResNet18HasTheTwelveAnchorTasksAndTheirAlternatives) {
  const char* src = std::getenv("TUNEFARM_SOURCE_DIR");
  std::string path = std::string(src ? src : ".") + "/../shared/models/resnet18.onnx";
  if (!Exists(path)) TUNEFARM_MISSING_FIXTURE(path << " not present");
  auto tasks = compiler::ExtractTasks(path, compiler::HostTarget());
  ASSERT_TRUE(tasks.ok()) << tasks.status().ToString();
  ASSERT_EQ(tasks->size(), 17u);
  int convs = 0, dense = 0, defaults = 0, winograd = 0;
  double flops = 0;
  for (size_t i = 0; i < tasks->size(); ++i) {
    const compiler::Task& t = (*tasks)[i];
    convs += t.workload.implementation == "conv2d_nchwc" ? t.count : 0;
    dense += t.workload.implementation == "dense_pack" ? t.count : 0;
    flops += t.alternative ? 0 : t.flops * t.count;
    defaults += t.alternative ? 0 : 1;
    EXPECT_GT(t.config_space_size, 0);
    if (t.workload.implementation == "conv2d_nchwc_winograd") {
      ++winograd;
      EXPECT_TRUE(t.alternative);
      // the alternative of the direct task just before it: same shape, same nodes
      ASSERT_TRUE(t.default_workload.has_value()) << t.workload.ImplementationKey();
      EXPECT_EQ(t.default_workload->ImplementationKey(), (*tasks)[i - 1].workload.ImplementationKey());
      EXPECT_EQ(t.nodes, (*tasks)[i - 1].nodes);
    }
  }
  EXPECT_EQ(defaults, 12);  // the anchors
  EXPECT_EQ(winograd, 4);   // the four 3x3 stride-1 shapes
  EXPECT_EQ(tasks->back().workload.implementation, "dense_nopack");
  EXPECT_TRUE(tasks->back().alternative);
  EXPECT_EQ(convs, 20);  // 17 3x3/7x7 convs + 3 downsampling 1x1 convs
  EXPECT_EQ(dense, 1);
  EXPECT_NEAR(flops / 1e9, 3.63, 0.01);
  EXPECT_EQ((*tasks)[1].workload.Key(), "conv2d|N1_C64_H56_W56|K64_R3x3_S1x1_P1_1_1_1_D1x1_G1|NCHW|float32");
  EXPECT_EQ((*tasks)[1].workload.implementation, "conv2d_nchwc");
  EXPECT_EQ((*tasks)[1].count, 4);
}

TEST(Zoo, EveryModelInfersToImageNetLogits) {
  // (name, tasks, MFLOP of the tuned ops per inference): the textbook sizes of each network.
  const struct {
    const char* name;
    size_t tasks;
    double mflop;
  } kModels[] = {{"resnet-18", 17, 3628.1},    {"resnet-34", 17, 7327.5},   {"resnet-50", 29, 8178.4},
                 {"mobilenet-v1", 21, 1137.5}, {"mobilenet-v2", 32, 601.5}, {"vgg-16", 24, 30940.5},
                 {"squeezenet-1.1", 22, 698.3}};  // each dense layer also as dense_nopack, each 3x3
                                                  // stride-1 conv shape also as Winograd
  for (const auto& m : kModels) {
    auto g = frontend::ZooModel(m.name);
    ASSERT_TRUE(g.ok()) << g.status().ToString();
    ASSERT_TRUE(InferShapes(&*g).ok()) << m.name;
    EXPECT_EQ(g->values[size_t(g->outputs[0])].shape, (std::vector<int64_t>{1, 1000})) << m.name;
    auto tasks = compiler::ExtractTasks(m.name, compiler::HostTarget());
    ASSERT_TRUE(tasks.ok()) << tasks.status().ToString();
    EXPECT_EQ(tasks->size(), m.tasks) << m.name;
    double flops = 0;
    for (const auto& t : *tasks) flops += t.alternative ? 0 : t.flops * t.count;
    EXPECT_NEAR(flops / 1e6, m.mflop, 0.1) << m.name;
  }
  // Deterministic weights: two builds are identical.
  auto a = frontend::ZooModel("mobilenet-v2"), b = frontend::ZooModel("mobilenet-v2");
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_EQ(a->values.size(), b->values.size());
  for (size_t i = 0; i < a->values.size(); ++i) {
    if (a->values[i].constant) {
      EXPECT_EQ(a->values[i].constant->f32, b->values[i].constant->f32);
    }
  }
}

TEST(ExtractTasks, ErrorsNameTheModel) {
  auto unknown = compiler::ExtractTasks("resnet-19", compiler::HostTarget());
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("model 'resnet-19' is neither a file nor a zoo model (resnet-18, "),
            std::string::npos)
      << unknown.status().message();
}

}  // namespace
}  // namespace tunefarm::graph
