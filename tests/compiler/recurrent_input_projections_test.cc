// RecurrentInputProjections (compiler/model/passes/recurrent_input_projections.h): LSTM, GRU and RNN
// with constant weights get their input projections as dense tasks, and compute what the
// in-kernel projection computes (opt level 0, where the rewrite does not run), for every cell,
// direction and GRU's linear_before_reset. And the recurrent weights transposed at compile time
// when constant (operators/recurrent_ops.cc) compute what R fed at run time computes.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "common/compile_onnx.h"
#include "common/run_artifact.h"

namespace tunefarm {
namespace {

struct Case {
  std::string op = "LSTM";
  std::string direction = "forward";
  bool linear_before_reset = false;
  bool bias = true;
};

// An initializer of random values, or (as_input) a graph input whose values go to *fed.
void AddInitializer(onnx::GraphProto* g, const std::string& name, const std::vector<int64_t>& dims, std::mt19937* rng,
                    bool as_input = false, std::vector<float>* fed = nullptr) {
  std::uniform_real_distribution<float> dist(-0.5f, 0.5f);
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  std::vector<float> values;
  for (int64_t i = 0; i < n; ++i) values.push_back(dist(*rng));
  if (as_input) {
    auto* in = g->add_input();
    in->set_name(name);
    in->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
    for (int64_t d : dims) in->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(d);
    *fed = values;
    return;
  }
  auto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t d : dims) t->add_dims(d);
  for (float v : values) t->add_float_data(v);
}

// r_fed: R becomes the model's second input, its values there.
onnx::ModelProto Model(const Case& c, int64_t T, int64_t B, int64_t I, int64_t H, std::vector<float>* r_fed = nullptr) {
  std::mt19937 rng(3);
  const int64_t gates = c.op == "LSTM" ? 4 : c.op == "GRU" ? 3 : 1, D = c.direction == "bidirectional" ? 2 : 1;
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(14);
  auto* g = m.mutable_graph();
  g->set_name("rnn");
  auto* in = g->add_input();
  in->set_name("x");
  in->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  for (int64_t d : {T, B, I}) in->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(d);
  AddInitializer(g, "w", {D, gates * H, I}, &rng);
  AddInitializer(g, "r", {D, gates * H, H}, &rng, r_fed != nullptr, r_fed);
  auto* n = g->add_node();
  n->set_name("cell");
  n->set_op_type(c.op);
  n->add_input("x");
  n->add_input("w");
  n->add_input("r");
  if (c.bias) {
    AddInitializer(g, "b", {D, 2 * gates * H}, &rng);
    n->add_input("b");
  }
  n->add_output("y");
  g->add_output()->set_name("y");
  auto* hs = n->add_attribute();
  hs->set_name("hidden_size");
  hs->set_type(onnx::AttributeProto::INT);
  hs->set_i(H);
  auto* dir = n->add_attribute();
  dir->set_name("direction");
  dir->set_type(onnx::AttributeProto::STRING);
  dir->set_s(c.direction);
  if (c.linear_before_reset) {
    auto* lbr = n->add_attribute();
    lbr->set_name("linear_before_reset");
    lbr->set_type(onnx::AttributeProto::INT);
    lbr->set_i(1);
  }
  return m;
}

// Y at `opt_level`, and whether a dense task computed part of it.
std::vector<float> CompileAndRun(const onnx::ModelProto& m, int opt_level, const std::vector<float>& x, bool* dense) {
  auto artifact = testing::CompileOnnxBytes(m.SerializeAsString(), "rnn", opt_level);
  EXPECT_TRUE(artifact.ok()) << artifact.status().message();
  if (!artifact.ok()) return {};
  *dense = false;
  for (const auto& k : artifact->kernels) *dense = *dense || k.workload.rfind("dense", 0) == 0;
  return testing::RunArtifact(std::move(*artifact), x);
}

// X [T, B, I]: uniform in [-1, 1) from seed.
std::vector<float> RandomInput(int64_t n, unsigned seed) {
  std::vector<float> x(static_cast<size_t>(n));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (float& v : x) v = dist(rng);
  return x;
}

std::string Label(const Case& c) {
  return c.op + " " + c.direction + (c.linear_before_reset ? " linear_before_reset" : "") + (c.bias ? "" : " no bias");
}

TEST(RecurrentInputProjections, DenseProjectionsComputeWhatTheRecurrentKernelComputes) {
  const int64_t T = 5, B = 2, I = 7, H = 6;
  const std::vector<float> x = RandomInput(T * B * I, 11);
  std::vector<Case> cases;
  for (const char* op : {"LSTM", "GRU", "RNN"}) {
    for (const char* direction : {"forward", "reverse", "bidirectional"}) cases.push_back({op, direction, false, true});
  }
  cases.push_back({"GRU", "bidirectional", true, true});
  cases.push_back({"LSTM", "forward", false, false});
  for (const Case& c : cases) {
    SCOPED_TRACE(Label(c));
    const onnx::ModelProto m = Model(c, T, B, I, H);
    bool dense0 = true, dense3 = false;
    const std::vector<float> reference = CompileAndRun(m, 0, x, &dense0);
    const std::vector<float> rewritten = CompileAndRun(m, 3, x, &dense3);
    EXPECT_FALSE(dense0);
    EXPECT_TRUE(dense3) << "no dense task computes the input projection";
    ASSERT_EQ(reference.size(), rewritten.size());
    for (size_t i = 0; i < reference.size(); ++i) ASSERT_NEAR(rewritten[i], reference[i], 1e-5f) << i;
  }
}

// The step kernels read constant recurrent weights transposed at compile time: the same outputs as
// with R fed at run time (read as given), for every cell, direction and GRU's reset form.
TEST(RecurrentWeights, TransposedAtCompileTimeTheyComputeWhatRFedAtRunTimeComputes) {
  const int64_t T = 4, B = 2, I = 5, H = 16;
  const std::vector<float> x = RandomInput(T * B * I, 13);
  std::vector<Case> cases;
  for (const char* op : {"LSTM", "GRU", "RNN"}) cases.push_back({op, "bidirectional", false, true});
  cases.push_back({"GRU", "forward", true, true});
  for (const Case& c : cases) {
    SCOPED_TRACE(Label(c));
    bool dense = false;
    const std::vector<float> constant_r = CompileAndRun(Model(c, T, B, I, H), 3, x, &dense);
    std::vector<float> r;
    auto artifact = testing::CompileOnnxBytes(Model(c, T, B, I, H, &r).SerializeAsString(), "rnn", 3);
    ASSERT_TRUE(artifact.ok()) << artifact.status().message();
    auto ex = runtime::Executor::Load(std::move(*artifact));
    ASSERT_TRUE(ex.ok()) << ex.status().ToString();
    ASSERT_TRUE((*ex)->SetInput(0, x.data(), x.size() * 4).ok());
    ASSERT_TRUE((*ex)->SetInput(1, r.data(), r.size() * 4).ok());
    ASSERT_TRUE((*ex)->Run().ok());
    const float* y = static_cast<const float*>((*ex)->Output(0));
    ASSERT_EQ(constant_r.size(), size_t((*ex)->outputs()[0].bytes() / 4));
    for (size_t i = 0; i < constant_r.size(); ++i) ASSERT_NEAR(constant_r[i], y[i], 1e-5f) << i;
  }
}

}  // namespace
}  // namespace tunefarm
