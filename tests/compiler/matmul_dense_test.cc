// A MatMul of any rank >= 2 by a constant matrix is a dense task over the rows of its leading
// dimensions (compiler/model/node_workload.cc), with a bias Add along the last axis and a Relu fused
// into it (graph/passes/fuse_epilogues.cc): the task's key, and the output against a naive
// product, on the host and lowered for an sm_90 GPU (emulated).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

#include "common/compile_onnx.h"
#include "common/run_artifact.h"

namespace tunefarm {
namespace {

struct Weights {
  std::vector<float> w, bias;  // w [K, N], bias [N]
};

void AddInitializer(onnx::GraphProto* g, const std::string& name, const std::vector<int64_t>& dims,
                    const std::vector<float>& values) {
  auto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t d : dims) t->add_dims(d);
  for (float v : values) t->add_float_data(v);
}

// x [dims..., K] -> MatMul(w [K, N]) -> Add(bias [N], bias first as torch writes it) -> Relu.
onnx::ModelProto Model(const std::vector<int64_t>& x_dims, int64_t n, const Weights& wt) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(13);
  auto* g = m.mutable_graph();
  g->set_name("matmul");
  auto* in = g->add_input();
  in->set_name("x");
  in->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  for (int64_t d : x_dims) in->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(d);
  AddInitializer(g, "w", {x_dims.back(), n}, wt.w);
  AddInitializer(g, "b", {n}, wt.bias);
  auto* mm = g->add_node();
  mm->set_op_type("MatMul");
  mm->set_name("proj");
  mm->add_input("x");
  mm->add_input("w");
  mm->add_output("xw");
  auto* add = g->add_node();
  add->set_op_type("Add");
  add->add_input("b");
  add->add_input("xw");
  add->add_output("xwb");
  auto* relu = g->add_node();
  relu->set_op_type("Relu");
  relu->add_input("xwb");
  relu->add_output("y");
  g->add_output()->set_name("y");
  return m;
}

TEST(MatMulAsDense, AnyRankByAConstantMatrixIsADenseTaskWithItsBiasAndReluFused) {
  const int64_t k = 24, n = 20;
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  Weights wt;
  for (int64_t i = 0; i < k * n; ++i) wt.w.push_back(dist(rng));
  for (int64_t i = 0; i < n; ++i) wt.bias.push_back(dist(rng));
  for (const std::vector<int64_t>& dims : {std::vector<int64_t>{7, k}, {2, 5, k}, {2, 3, 2, k}}) {
    for (bool gpu : {false, true}) {
      int64_t rows = 1;
      for (size_t d = 0; d + 1 < dims.size(); ++d) rows *= dims[d];
      SCOPED_TRACE("rank " + std::to_string(dims.size()) + (gpu ? " on sm_90 (emulated)" : " on the host"));
      std::vector<float> x(size_t(rows * k));
      for (float& v : x) v = dist(rng);
      auto artifact = testing::CompileOnnxBytes(Model(dims, n, wt).SerializeAsString(), "matmul", 3, gpu);
      ASSERT_TRUE(artifact.ok()) << artifact.status().message();
      // One kernel: the dense template with the bias and the Relu as its epilogue.
      ASSERT_EQ(artifact->kernels.size(), 1u);
      EXPECT_EQ(artifact->kernels[0].workload.find("|N" + std::to_string(rows) + "_I24|O20|"),
                artifact->kernels[0].workload.find('|'))
          << artifact->kernels[0].workload;
      EXPECT_NE(artifact->kernels[0].op.find("bias+relu"), std::string::npos) << artifact->kernels[0].op;
      const std::vector<float> y = testing::RunArtifact(std::move(*artifact), x);
      ASSERT_EQ(y.size(), size_t(rows * n));
      for (int64_t r = 0; r < rows; ++r) {
        for (int64_t j = 0; j < n; ++j) {
          double acc = wt.bias[size_t(j)];
          for (int64_t c = 0; c < k; ++c) acc += double(x[size_t(r * k + c)]) * wt.w[size_t(c * n + j)];
          ASSERT_NEAR(y[size_t(r * n + j)], std::max(acc, 0.0), 1e-4) << "row " << r << " column " << j;
        }
      }
    }
  }
}

// A product of two activations whose column count no vector width divides (ViT's 197 x 197
// attention scores): B's columns are padded for the vectorized product (compiler/ops/linalg.cc).
// x [2, 17, 8] times its transpose [2, 8, 17] against a naive product, host and emulated sm_90.
TEST(MatMulOfActivations, ColumnsNoVectorWidthDividesMatchANaiveProduct) {
  const int64_t batch = 2, rows = 17, k = 8;
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(13);
  auto* g = m.mutable_graph();
  g->set_name("scores");
  auto* in = g->add_input();
  in->set_name("x");
  in->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  for (int64_t d : {batch, rows, k}) in->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(d);
  auto* tr = g->add_node();
  tr->set_op_type("Transpose");
  tr->add_input("x");
  tr->add_output("xt");
  auto* perm = tr->add_attribute();
  perm->set_name("perm");
  perm->set_type(onnx::AttributeProto::INTS);
  for (int64_t p : {0, 2, 1}) perm->add_ints(p);
  auto* mm = g->add_node();
  mm->set_op_type("MatMul");
  mm->add_input("x");
  mm->add_input("xt");
  mm->add_output("y");
  g->add_output()->set_name("y");
  std::mt19937 rng(9);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> x(size_t(batch * rows * k));
  for (float& v : x) v = dist(rng);
  for (bool gpu : {false, true}) {
    SCOPED_TRACE(gpu ? "sm_90 (emulated)" : "host");
    auto artifact = testing::CompileOnnxBytes(m.SerializeAsString(), "scores", 3, gpu);
    ASSERT_TRUE(artifact.ok()) << artifact.status().message();
    const std::vector<float> y = testing::RunArtifact(std::move(*artifact), x);
    ASSERT_EQ(y.size(), size_t(batch * rows * rows));
    for (int64_t b = 0; b < batch; ++b) {
      for (int64_t i = 0; i < rows; ++i) {
        for (int64_t j = 0; j < rows; ++j) {
          double acc = 0;
          for (int64_t c = 0; c < k; ++c) acc += double(x[size_t((b * rows + i) * k + c)]) * x[size_t((b * rows + j) * k + c)];
          ASSERT_NEAR(y[size_t((b * rows + i) * rows + j)], acc, 1e-4) << b << " " << i << " " << j;
        }
      }
    }
  }
}

}  // namespace
}  // namespace tunefarm
