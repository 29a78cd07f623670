// Element types at a model's edges, end to end: an ONNX model with float16, uint64 or float64
// inputs and outputs compiles, its artifact records the types, and the executor converts.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <cstring>
#include <vector>

#include "common/compile_onnx.h"
#include "tunefarm/runtime/element_convert.h"
#include "tunefarm/runtime/executor.h"

namespace tunefarm {
namespace {

// y = op(x) (one input) or op(x, x), with x and y declared `type`, shape [4].
onnx::ModelProto Model(const std::string& op, int type, bool binary, int output_type = -1) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  auto* g = m.mutable_graph();
  g->set_name("edge");
  auto declare = [](onnx::ValueInfoProto* v, const std::string& name, int t) {
    v->set_name(name);
    auto* tt = v->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(t);
    tt->mutable_shape()->add_dim()->set_dim_value(4);
  };
  declare(g->add_input(), "x", type);
  declare(g->add_output(), "y", output_type < 0 ? type : output_type);
  auto* n = g->add_node();
  n->set_op_type(op);
  n->add_input("x");
  if (binary) n->add_input("x");
  n->add_output("y");
  return m;
}

Result<std::unique_ptr<runtime::Executor>> Build(const onnx::ModelProto& m) {
  TUNEFARM_ASSIGN_OR_RETURN(runtime::Artifact a, testing::CompileOnnxBytes(m.SerializeAsString(), "edge"));
  return runtime::Executor::Load(std::move(a));
}

TEST(EdgeTypes, AFloat16ModelTakesAndGivesFloat16) {
  auto ex = Build(Model("Relu", onnx::TensorProto::FLOAT16, false));
  ASSERT_TRUE(ex.ok()) << ex.status().message();
  ASSERT_EQ((*ex)->inputs()[0].dtype, runtime::ElementType::kFloat16);
  ASSERT_EQ((*ex)->outputs()[0].dtype, runtime::ElementType::kFloat16);
  EXPECT_EQ((*ex)->inputs()[0].bytes(), 8);
  std::vector<uint16_t> x;
  for (float v : {-2.0f, 0.5f, 65504.0f, 1.0009765625f}) x.push_back(runtime::FloatToHalf(v));
  ASSERT_TRUE((*ex)->SetInput(0, x.data(), 8).ok());
  ASSERT_TRUE((*ex)->Run().ok());
  std::vector<uint16_t> y(4);
  std::memcpy(y.data(), (*ex)->Output(0), 8);
  EXPECT_EQ(y, (std::vector<uint16_t>{0, x[1], x[2], x[3]}));  // relu: the values themselves, bit for bit
}

TEST(EdgeTypes, UInt64IsComputedInInt64AndRefusesWhatInt64CannotHold) {
  auto ex = Build(Model("Add", onnx::TensorProto::UINT64, true));
  ASSERT_TRUE(ex.ok()) << ex.status().message();
  ASSERT_EQ((*ex)->inputs()[0].dtype, runtime::ElementType::kUInt64);
  std::vector<uint64_t> x = {1, 2, 3000000000ull, (uint64_t(1) << 62) - 1};
  ASSERT_TRUE((*ex)->SetInput(0, x.data(), 32).ok());
  ASSERT_TRUE((*ex)->Run().ok());
  std::vector<uint64_t> y(4);
  std::memcpy(y.data(), (*ex)->Output(0), 32);
  EXPECT_EQ(y, (std::vector<uint64_t>{2, 4, 6000000000ull, (uint64_t(1) << 63) - 2}));
  x[2] = uint64_t(1) << 63;
  Status s = (*ex)->SetInput(0, x.data(), 32);
  EXPECT_EQ(
      s.message(),
      "input 'x': element 2 is 9223372036854775808; uint64 values are computed in int64 and must be at most 2^63-1");
}

TEST(EdgeTypes, CastToFloat64ReachesTheOutputAsFloat64) {
  onnx::ModelProto m = Model("Cast", onnx::TensorProto::FLOAT, false, onnx::TensorProto::DOUBLE);
  auto* to = m.mutable_graph()->mutable_node(0)->add_attribute();
  to->set_name("to");
  to->set_type(onnx::AttributeProto::INT);
  to->set_i(onnx::TensorProto::DOUBLE);
  auto ex = Build(m);
  ASSERT_TRUE(ex.ok()) << ex.status().message();
  ASSERT_EQ((*ex)->outputs()[0].dtype, runtime::ElementType::kFloat64);
  const std::vector<float> x = {0.25f, -3.0f, 1e30f, 7.5f};
  ASSERT_TRUE((*ex)->SetInput(0, x.data(), 16).ok());
  ASSERT_TRUE((*ex)->Run().ok());
  std::vector<double> y(4);
  std::memcpy(y.data(), (*ex)->Output(0), 32);
  EXPECT_EQ(y, (std::vector<double>{0.25, -3.0, double(1e30f), 7.5}));
}

TEST(EdgeTypes, CastsToNarrowIntegersWrapInsideTheGraph) {
  // x -> Cast(to) -> Cast(int64): what the narrow type held, read back as ONNX (numpy) reads it.
  for (const auto& [to, expected] :
       std::vector<std::pair<int, std::vector<int64_t>>>{{onnx::TensorProto::UINT32, {4294967295, 70000, 3}},
                                                         {onnx::TensorProto::UINT16, {65535, 4464, 3}},
                                                         {onnx::TensorProto::INT16, {-1, 4464, 3}}}) {
    SCOPED_TRACE(to);
    onnx::ModelProto m = Model("Cast", onnx::TensorProto::FLOAT, false, onnx::TensorProto::INT64);
    auto* g = m.mutable_graph();
    g->mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(0)->set_dim_value(3);
    g->mutable_output(0)->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(0)->set_dim_value(3);
    auto* first = g->mutable_node(0);
    first->set_output(0, "narrow");
    auto* a = first->add_attribute();
    a->set_name("to");
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(to);
    auto* back = g->add_node();
    back->set_op_type("Cast");
    back->add_input("narrow");
    back->add_output("y");
    auto* b = back->add_attribute();
    b->set_name("to");
    b->set_type(onnx::AttributeProto::INT);
    b->set_i(onnx::TensorProto::INT64);
    auto ex = Build(m);
    ASSERT_TRUE(ex.ok()) << ex.status().message();
    const std::vector<float> x = {-1.0f, 70000.0f, 3.0f};
    ASSERT_TRUE((*ex)->SetInput(0, x.data(), 12).ok());
    ASSERT_TRUE((*ex)->Run().ok());
    std::vector<int64_t> y(3);
    std::memcpy(y.data(), (*ex)->Output(0), 24);
    EXPECT_EQ(y, expected);
  }
}

TEST(EdgeTypes, AnOutputDeclaredAsAnotherTypeThanItComputesIsRefused) {
  // Relu of float16 computes a float, declared uint32: the model contradicts itself.
  auto ex = Build(Model("Relu", onnx::TensorProto::FLOAT16, false, onnx::TensorProto::UINT32));
  ASSERT_FALSE(ex.ok());
  EXPECT_EQ(ex.status().message(), "edge: graph output 'y' is declared uint32 but computes float32");
}

}  // namespace
}  // namespace tunefarm
