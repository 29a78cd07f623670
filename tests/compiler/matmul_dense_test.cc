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

#include "common/compile_onnx.h"
#include "common/onnx_builder.h"
#include "common/run_artifact.h"

namespace tunefarm {
namespace {

struct Weights {
  std::vector<float> w, bias;  // w [K, N], bias [N]
};

// x [dims..., K] -> MatMul(w [K, N]) -> Add(bias [N], bias first as torch writes it) -> Relu.
std::string Model(const std::vector<int64_t>& x_dims, int64_t n, const Weights& wt) {
  testing::OnnxBuilder b(13);
  b.Input("x", x_dims);
  b.Floats("w", {x_dims.back(), n}, wt.w);
  b.Floats("b", {n}, wt.bias);
  b.Node("MatMul", {"x", "w"}, {"xw"});
  b.Node("Add", {"b", "xw"}, {"xwb"});
  b.Node("Relu", {"xwb"}, {"y"});
  b.Output("y");
  return b.Bytes();
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
      auto artifact = testing::CompileOnnxBytes(Model(dims, n, wt), "matmul", 3, gpu);
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
  testing::OnnxBuilder b(13);
  b.Input("x", {batch, rows, k});
  b.Node("Transpose", {"x"}, {"xt"}, {testing::AttrInts("perm", {0, 2, 1})});
  b.Node("MatMul", {"x", "xt"}, {"y"});
  b.Output("y");
  std::mt19937 rng(9);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> x(size_t(batch * rows * k));
  for (float& v : x) v = dist(rng);
  for (bool gpu : {false, true}) {
    SCOPED_TRACE(gpu ? "sm_90 (emulated)" : "host");
    auto artifact = testing::CompileOnnxBytes(b.Bytes(), "scores", 3, gpu);
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
