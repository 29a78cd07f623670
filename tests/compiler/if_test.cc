// If (compiler/operators/control_ops.cc): both branches inlined; a runtime condition runs one
// branch's kernels on the CPU executor; a constant condition keeps only the taken branch (whose
// other branch need not even be valid for the shapes at hand); branches that disagree on shapes
// under a runtime condition are an error naming the node.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <string>
#include <vector>

#include "common/compile_onnx.h"
#include "compiler/frontend/onnx_importer.h"
#include "tunefarm/runtime/executor.h"

namespace tunefarm {
namespace {

onnx::ValueInfoProto* Declare(onnx::ValueInfoProto* v, const std::string& name, int type,
                              const std::vector<int64_t>& dims) {
  v->set_name(name);
  auto* tt = v->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(type);
  tt->mutable_shape();  // a scalar has a shape too: no dimensions
  for (int64_t d : dims) tt->mutable_shape()->add_dim()->set_dim_value(d);
  return v;
}

onnx::NodeProto* AddNode(onnx::GraphProto* g, const std::string& op, const std::vector<std::string>& in,
                         const std::string& out) {
  auto* n = g->add_node();
  n->set_op_type(op);
  n->set_name(out);
  for (const auto& i : in) n->add_input(i);
  n->add_output(out);
  return n;
}

void AddScalar(onnx::GraphProto* g, const std::string& name, float v) {
  auto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::FLOAT);
  t->add_float_data(v);
}

// then: y = Relu(x) * 2 (its own initializer); else: y = Neg(x) + bias (the outer scope's).
void AddBranches(onnx::NodeProto* n, const std::string& out) {
  auto* then_a = n->add_attribute();
  then_a->set_name("then_branch");
  then_a->set_type(onnx::AttributeProto::GRAPH);
  onnx::GraphProto* t = then_a->mutable_g();
  t->set_name("then");
  AddScalar(t, "two", 2.0f);
  AddNode(t, "Relu", {"x"}, "r");
  AddNode(t, "Mul", {"r", "two"}, "t_out");
  t->add_output()->set_name("t_out");
  auto* else_a = n->add_attribute();
  else_a->set_name("else_branch");
  else_a->set_type(onnx::AttributeProto::GRAPH);
  onnx::GraphProto* e = else_a->mutable_g();
  e->set_name("else");
  AddNode(e, "Neg", {"x"}, "ng");
  AddNode(e, "Add", {"ng", "bias"}, "e_out");
  e->add_output()->set_name("e_out");
  (void)out;
}

onnx::ModelProto RuntimeIf() {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  auto* g = m.mutable_graph();
  g->set_name("if");
  Declare(g->add_input(), "x", onnx::TensorProto::FLOAT, {2, 3});
  Declare(g->add_input(), "c", onnx::TensorProto::BOOL, {});
  AddScalar(g, "bias", 10.0f);
  AddBranches(AddNode(g, "If", {"c"}, "y"), "y");
  Declare(g->add_output(), "y", onnx::TensorProto::FLOAT, {2, 3});
  return m;
}

// For the host, or for an sm_90 GPU with its kernels emulated on the CPU.
Result<runtime::Artifact> Compile(const onnx::ModelProto& m, bool gpu = false) {
  return testing::CompileOnnxBytes(m.SerializeAsString(), "if", 3, gpu);
}

TEST(If, ARuntimeConditionRunsOneBranch) {
  // An initializer nothing reads (its removal renumbers the values a guard names) and a
  // one-element condition of rank 3 (which must not broadcast the outputs to its rank).
  onnx::ModelProto m = RuntimeIf();
  auto* unused = m.mutable_graph()->mutable_initializer()->Add();
  unused->set_name("unused");
  unused->set_data_type(onnx::TensorProto::FLOAT);
  unused->add_float_data(1.0f);
  m.mutable_graph()->mutable_initializer()->SwapElements(0, m.graph().initializer_size() - 1);
  auto* cond_shape = m.mutable_graph()->mutable_input(1)->mutable_type()->mutable_tensor_type()->mutable_shape();
  for (int d = 0; d < 3; ++d) cond_shape->add_dim()->set_dim_value(1);
  auto artifact = Compile(m);
  ASSERT_TRUE(artifact.ok()) << artifact.status().message();
  std::vector<size_t> then_kernels, else_kernels;
  for (size_t k = 0; k < artifact->kernels.size(); ++k) {
    for (const auto& [t, value] : artifact->kernels[k].run_if) (value ? then_kernels : else_kernels).push_back(k);
  }
  ASSERT_FALSE(then_kernels.empty());
  ASSERT_FALSE(else_kernels.empty());
  auto ex = runtime::Executor::Load(std::move(*artifact));
  ASSERT_TRUE(ex.ok()) << ex.status().message();
  const std::vector<float> x = {-1, 2, -3, 4, -5, 6};
  ASSERT_TRUE((*ex)->SetInput(0, x.data(), 24).ok());
  for (bool c : {true, false, true}) {
    const uint8_t cond = c;
    ASSERT_TRUE((*ex)->SetInput(1, &cond, 1).ok());
    std::vector<double> ms;
    ASSERT_TRUE((*ex)->RunProfiled(&ms).ok());
    const float* y = static_cast<const float*>((*ex)->Output(0));
    for (size_t i = 0; i < x.size(); ++i) EXPECT_EQ(y[i], c ? 2 * std::max(x[i], 0.0f) : 10 - x[i]) << c << " " << i;
    // The branch not taken was skipped: no time accrued to its kernels.
    for (size_t k : c ? else_kernels : then_kernels) EXPECT_EQ(ms[k], 0.0) << "kernel " << k << " ran";
    for (size_t k : c ? then_kernels : else_kernels) EXPECT_GT(ms[k], 0.0) << "kernel " << k << " did not run";
  }
}

TEST(If, OnAGpuBothBranchesRunAndTheConditionSelects) {
  auto artifact = Compile(RuntimeIf(), /*gpu=*/true);
  ASSERT_TRUE(artifact.ok()) << artifact.status().message();
  for (const auto& k : artifact->kernels) EXPECT_TRUE(k.run_if.empty()) << k.op;
  auto ex = runtime::Executor::Load(std::move(*artifact));
  ASSERT_TRUE(ex.ok()) << ex.status().message();
  const std::vector<float> x = {-1, 2, -3, 4, -5, 6};
  ASSERT_TRUE((*ex)->SetInput(0, x.data(), 24).ok());
  for (bool c : {false, true}) {
    const uint8_t cond = c;
    ASSERT_TRUE((*ex)->SetInput(1, &cond, 1).ok());
    ASSERT_TRUE((*ex)->Run().ok());
    const float* y = static_cast<const float*>((*ex)->Output(0));
    for (size_t i = 0; i < x.size(); ++i) EXPECT_EQ(y[i], c ? 2 * std::max(x[i], 0.0f) : 10 - x[i]) << c << " " << i;
  }
}

TEST(If, AConstantConditionKeepsOnlyTheTakenBranch) {
  // cond = (Shape(x)[0] == 2): folded at import's shape inference. The else branch reshapes x to
  // [7], which its 6 elements cannot be: it must never be compiled.
  onnx::ModelProto m = RuntimeIf();
  auto* g = m.mutable_graph();
  g->mutable_input()->DeleteSubrange(1, 1);
  g->mutable_node()->Clear();
  auto* shape = g->add_initializer();
  shape->set_name("seven");
  shape->set_data_type(onnx::TensorProto::INT64);
  shape->add_dims(1);
  shape->add_int64_data(7);
  auto* zero = g->add_initializer();
  zero->set_name("zero");
  zero->set_data_type(onnx::TensorProto::INT64);
  zero->add_int64_data(0);
  auto* two = g->add_initializer();
  two->set_name("two_rows");
  two->set_data_type(onnx::TensorProto::INT64);
  two->add_int64_data(2);
  AddNode(g, "Shape", {"x"}, "s");
  AddNode(g, "Gather", {"s", "zero"}, "rows");
  AddNode(g, "Equal", {"rows", "two_rows"}, "c");
  onnx::NodeProto* n = AddNode(g, "If", {"c"}, "y");
  AddBranches(n, "y");
  onnx::GraphProto* e = n->mutable_attribute(1)->mutable_g();
  AddNode(e, "Reshape", {"x", "seven"}, "bad");
  auto artifact = Compile(m);
  ASSERT_TRUE(artifact.ok()) << artifact.status().message();
  for (const auto& k : artifact->kernels) {
    EXPECT_TRUE(k.run_if.empty()) << k.op;
    EXPECT_EQ(k.op.find("Neg"), std::string::npos) << "the else branch was compiled";
  }
  auto ex = runtime::Executor::Load(std::move(*artifact));
  ASSERT_TRUE(ex.ok()) << ex.status().message();
  const std::vector<float> x = {-1, 2, -3, 4, -5, 6};
  ASSERT_TRUE((*ex)->SetInput(0, x.data(), 24).ok());
  ASSERT_TRUE((*ex)->Run().ok());
  const float* y = static_cast<const float*>((*ex)->Output(0));
  for (size_t i = 0; i < x.size(); ++i) EXPECT_EQ(y[i], 2 * std::max(x[i], 0.0f));
}

TEST(If, BranchesOfDifferentShapesUnderARuntimeConditionAreRefused) {
  onnx::ModelProto m = RuntimeIf();
  onnx::GraphProto* e = m.mutable_graph()->mutable_node(0)->mutable_attribute(1)->mutable_g();
  auto* axes = e->add_initializer();
  axes->set_name("axes");
  axes->set_data_type(onnx::TensorProto::INT64);
  axes->add_dims(1);
  axes->add_int64_data(1);
  AddNode(e, "ReduceSum", {"e_out", "axes"}, "summed");
  e->mutable_output(0)->set_name("summed");
  auto artifact = Compile(m);
  ASSERT_FALSE(artifact.ok());
  EXPECT_NE(artifact.status().message().find(
                "node 'y' (If, opset 17): output 0 is float32 [2,3] in then_branch and float32 [2,1] in else_branch: "
                "tunefarm "
                "compiles static shapes, so the branches must agree unless the condition is a constant"),
            std::string::npos)
      << artifact.status().message();
}

TEST(If, AMissingBranchOrAnUnknownNameIsAnErrorNamingTheNode) {
  onnx::ModelProto m = RuntimeIf();
  m.mutable_graph()->mutable_node(0)->mutable_attribute()->RemoveLast();
  auto g = frontend::ImportOnnxBytes(m.SerializeAsString(), "if");
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().message(), "node 'y' (op If, opset 17): needs both then_branch and else_branch");
  m = RuntimeIf();
  m.mutable_graph()->mutable_node(0)->mutable_attribute(0)->mutable_g()->mutable_node(0)->set_input(0, "nowhere");
  g = frontend::ImportOnnxBytes(m.SerializeAsString(), "if");
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().message(),
            "node 'r' (op Relu, opset 17): input 'nowhere' is not a graph input, initializer or earlier output");
}

}  // namespace
}  // namespace tunefarm
