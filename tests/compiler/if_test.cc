// If (compiler/operators/control_ops.cc): both branches inlined; a runtime condition runs one
// branch's kernels on the CPU executor; a constant condition keeps only the taken branch (whose
// other branch need not even be valid for the shapes at hand); branches that disagree on shapes
// under a runtime condition are an error naming the node; a branch that cannot run at the given
// shapes under a runtime condition fails only the runs that take it (Silero VAD's 8 kHz branch).
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
Result<runtime::Artifact> Compile(const onnx::ModelProto& m, bool gpu = false,
                                  std::vector<std::string>* warnings = nullptr) {
  return testing::CompileOnnxBytes(m.SerializeAsString(), "if", 3, gpu, warnings);
}

void AddInt64s(onnx::GraphProto* g, const std::string& name, const std::vector<int64_t>& values) {
  auto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::INT64);
  t->add_dims(int64_t(values.size()));
  for (int64_t v : values) t->add_int64_data(v);
}

// Breaks a branch for x of [2, 3]: its last node's first input is reshaped to [7] first, which 6
// elements cannot be.
void BreakBranch(onnx::GraphProto* branch) {
  AddInt64s(branch, "seven", {7});
  onnx::NodeProto* last = branch->mutable_node(branch->node_size() - 1);
  const std::string fed = last->input(0);
  last->set_input(0, "bad");
  AddNode(branch, "Reshape", {fed, "seven"}, "bad");
  branch->mutable_node()->SwapElements(branch->node_size() - 1, branch->node_size() - 2);  // before the last
}

// y = c1 ? (c2 ? Relu(x)*2 : <broken>) : bias - x: the broken branch nested in a runtime one.
onnx::ModelProto NestedIfWithABrokenBranch() {
  onnx::ModelProto m = RuntimeIf();
  auto* g = m.mutable_graph();
  Declare(g->add_input(), "c2", onnx::TensorProto::BOOL, {});
  onnx::GraphProto* outer_then = g->mutable_node(0)->mutable_attribute(0)->mutable_g();
  outer_then->mutable_node()->Clear();
  outer_then->mutable_initializer()->Clear();
  auto* inner = AddNode(outer_then, "If", {"c2"}, "inner_out");
  inner->set_name("inner");
  outer_then->mutable_output(0)->set_name("inner_out");
  AddBranches(inner, "t_out");
  BreakBranch(inner->mutable_attribute(1)->mutable_g());
  return m;
}

// Runs the artifact at x = [-1, 2, -3, 4, -5, 6] with the given bool inputs; the output, or the error.
Result<std::vector<float>> RunWith(runtime::Executor* ex, const std::vector<bool>& conditions) {
  const std::vector<float> x = {-1, 2, -3, 4, -5, 6};
  TUNEFARM_RETURN_IF_ERROR(ex->SetInput(0, x.data(), 24));
  for (size_t i = 0; i < conditions.size(); ++i) {
    const uint8_t c = conditions[i];
    TUNEFARM_RETURN_IF_ERROR(ex->SetInput(1 + i, &c, 1));
  }
  TUNEFARM_RETURN_IF_ERROR(ex->Run());
  const float* y = static_cast<const float*>(ex->Output(0));
  return std::vector<float>(y, y + 6);
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

TEST(If, ABranchThatCannotRunAtTheseShapesFailsOnlyTheRunsThatTakeIt) {
  onnx::ModelProto m = RuntimeIf();
  BreakBranch(m.mutable_graph()->mutable_node(0)->mutable_attribute(1)->mutable_g());
  const std::string why =
      "node 'y' (If, opset 17): its else branch cannot run at the input shapes the model was compiled for (node "
      "'y#0.else/bad' (Reshape, opset 17): cannot reshape [2,3] (6 elements) to [7])";
  for (bool gpu : {false, true}) {
    std::vector<std::string> warnings;
    auto artifact = Compile(m, gpu, &warnings);
    ASSERT_TRUE(artifact.ok()) << artifact.status().message();
    ASSERT_EQ(warnings.size(), 1u);
    EXPECT_EQ(warnings[0].find("warning: node 'y' (If, opset 17): a run whose condition is false fails: its else "
                               "branch cannot run"),
              0u)
        << warnings[0];
    for (const auto& k : artifact->kernels) EXPECT_EQ(k.op.find("Neg"), std::string::npos) << "the cut branch runs";
    // The check survives the file (format version 4).
    const std::string bytes = artifact->Serialize();
    EXPECT_NE(artifact->MetadataJson().find("\"format_version\": 4"), std::string::npos);
    auto parsed = runtime::Artifact::Parse(bytes);
    ASSERT_TRUE(parsed.ok()) << parsed.status().message();
    auto ex = runtime::Executor::Load(std::move(*parsed));
    ASSERT_TRUE(ex.ok()) << ex.status().message();
    for (bool c : {true, false, true}) {
      auto y = RunWith(ex->get(), {c});
      if (!c) {
        ASSERT_FALSE(y.ok()) << "gpu " << gpu;
        EXPECT_EQ(y.status().message(), why);
        continue;
      }
      ASSERT_TRUE(y.ok()) << y.status().message();
      EXPECT_EQ(*y, (std::vector<float>{0, 4, 0, 8, 0, 12})) << "gpu " << gpu;
    }
  }
}

TEST(If, ABrokenBranchInsideAnotherFailsOnlyWhenBothConditionsTakeIt) {
  const onnx::ModelProto m = NestedIfWithABrokenBranch();
  for (bool gpu : {false, true}) {  // on a GPU both outer branches run: the check reads c1 too
    auto artifact = Compile(m, gpu);
    ASSERT_TRUE(artifact.ok()) << artifact.status().message();
    auto ex = runtime::Executor::Load(std::move(*artifact));
    ASSERT_TRUE(ex.ok()) << ex.status().message();
    for (bool c1 : {true, false}) {
      for (bool c2 : {true, false}) {
        auto y = RunWith(ex->get(), {c1, c2});
        if (c1 && !c2) {
          ASSERT_FALSE(y.ok());
          EXPECT_EQ(y.status().message(),
                    "node 'y#0.then/inner' (If, opset 17): its else branch cannot run at the input shapes the model "
                    "was compiled for (node 'inner#1.else/bad' (Reshape, opset 17): cannot reshape [2,3] (6 "
                    "elements) to [7])");
          continue;
        }
        ASSERT_TRUE(y.ok()) << "c1 " << c1 << " c2 " << c2 << " gpu " << gpu << ": " << y.status().message();
        const std::vector<float> expected =
            c1 ? std::vector<float>{0, 4, 0, 8, 0, 12} : std::vector<float>{11, 8, 13, 6, 15, 4};
        EXPECT_EQ(*y, expected);
      }
    }
  }
}

TEST(If, BothBranchesThatCannotRunAreAnErrorNamingEach) {
  onnx::ModelProto m = RuntimeIf();
  BreakBranch(m.mutable_graph()->mutable_node(0)->mutable_attribute(0)->mutable_g());
  BreakBranch(m.mutable_graph()->mutable_node(0)->mutable_attribute(1)->mutable_g());
  auto artifact = Compile(m);
  ASSERT_FALSE(artifact.ok());
  EXPECT_EQ(artifact.status().message(),
            "if: node 'y' (If, opset 17): neither branch can run at these input shapes; then_branch: node "
            "'y#0.then/bad' (Reshape, opset 17): cannot reshape [2,3] (6 elements) to [7]; else_branch: node "
            "'y#0.else/bad' (Reshape, opset 17): cannot reshape [2,3] (6 elements) to [7]");
}

}  // namespace
}  // namespace tunefarm
