// The importer sorts a node list that is not in dependency order (compiler/frontend/node_order.h),
// as ONNX Runtime does, including an If branch that reads a value a later node of the list
// produces; a cycle is one error naming its nodes.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/compile_onnx.h"
#include "common/onnx_builder.h"
#include "common/run_artifact.h"
#include "compiler/frontend/onnx_importer.h"

namespace tunefarm::compiler {
namespace {

using testing::OnnxBuilder;

// A then-branch computing t = a * two from the outer `a` (the else branch: t = a).
onnx::AttributeProto Branch(const char* attr, bool doubles) {
  onnx::AttributeProto a;
  a.set_name(attr);
  a.set_type(onnx::AttributeProto::GRAPH);
  onnx::GraphProto* g = a.mutable_g();
  g->set_name(attr);
  onnx::NodeProto* n = g->add_node();
  n->set_op_type(doubles ? "Mul" : "Identity");
  n->add_input("a");
  if (doubles) n->add_input("two");
  n->add_output(doubles ? "t_then" : "t_else");
  g->add_output()->set_name(doubles ? "t_then" : "t_else");
  return a;
}

TEST(NodeOrder, AListOutOfOrderIsSortedIncludingWhatAnIfBranchReads) {
  OnnxBuilder b(13);
  b.Input("x", {2, 3});
  b.Floats("two", {}, {2.0f});
  b.Bytes8("cond", {}, {1}, onnx::TensorProto::BOOL);
  // Listed consumers first: y reads b (the If's output), whose branch reads a, made last.
  b.Node("Add", {"a", "b"}, {"y"});
  b.Node("If", {"cond"}, {"b"}, {Branch("then_branch", true), Branch("else_branch", false)});
  b.Node("Relu", {"x"}, {"a"});
  b.Output("y");
  const std::vector<float> x = {-1, 0, 1, 2, -3, 4};
  for (bool gpu : {false, true}) {
    auto artifact = testing::CompileOnnxBytes(b.Bytes(), "unsorted", 3, gpu);
    ASSERT_TRUE(artifact.ok()) << artifact.status().ToString();
    EXPECT_EQ(testing::RunArtifact(std::move(*artifact), x), (std::vector<float>{0, 0, 3, 6, 0, 12}))
        << (gpu ? "GPU, emulated" : "host");  // relu(x) + 2 relu(x)
  }
}

TEST(NodeOrder, ACycleIsAnErrorNamingItsNodes) {
  OnnxBuilder b(13);
  b.Input("x", {2, 3});
  b.Node("Relu", {"c"}, {"a"});      // n0 reads n2's c
  b.Node("Neg", {"a"}, {"b"});       // n1
  b.Node("Add", {"b", "x"}, {"c"});  // n2
  b.Node("Relu", {"a"}, {"y"});      // n3: waits on the cycle, is not on it
  b.Output("y");
  const auto g = frontend::ImportOnnxBytes(b.Bytes(), "m");
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().message(),
            "the graph has a cycle: 'n0' (Relu) -> 'n1' (Neg) -> 'n2' (Add) -> 'n0' (Relu) (each feeds the next)");
}

}  // namespace
}  // namespace tunefarm::compiler
