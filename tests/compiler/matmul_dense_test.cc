// A MatMul of any rank >= 2 by a constant matrix is a dense task over the rows of its leading
// dimensions (compiler/operators/node_workload.cc), with a bias Add along the last axis and a Relu fused
// into it (model/passes/fuse_epilogues.cc); a MatMul of two activations with equal batch dims is a
// batch_matmul task. The tasks' keys, and the outputs against naive products, on the host and
// lowered for an sm_90 GPU (emulated).
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

// Fusion and task extraction recognize a dense layer in one place (operators/node_workload): a Gemm
// with alpha and beta (folded into the packed weights and bias) takes a following Add and Relu as
// its epilogue like any other; they used to disagree, and such a Gemm ran as three kernels.
TEST(MatMulAsDense, AGemmWithAlphaAndBetaFusesItsEpilogue) {
  const int64_t rows = 3, k = 8, n = 6;
  std::mt19937 rng(9);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> w(static_cast<size_t>(n * k)), c(static_cast<size_t>(n)), bias(static_cast<size_t>(n)),
      x(static_cast<size_t>(rows * k));
  for (float& v : w) v = dist(rng);
  for (float& v : c) v = dist(rng);
  for (float& v : bias) v = dist(rng);
  for (float& v : x) v = dist(rng);
  testing::OnnxBuilder b(13);
  b.Input("x", {rows, k});
  b.Floats("w", {n, k}, w);
  b.Floats("c", {n}, c);
  b.Floats("b", {n}, bias);
  b.Node("Gemm", {"x", "w", "c"}, {"g"},
         {testing::AttrFloat("alpha", 2.0f), testing::AttrFloat("beta", 0.5f), testing::AttrInt("transB", 1)});
  b.Node("Add", {"g", "b"}, {"gb"});
  b.Node("Relu", {"gb"}, {"y"});
  b.Output("y");
  for (bool gpu : {false, true}) {
    SCOPED_TRACE(gpu ? "on sm_90 (emulated)" : "on the host");
    auto artifact = testing::CompileOnnxBytes(b.Bytes(), "gemm", 3, gpu);
    ASSERT_TRUE(artifact.ok()) << artifact.status().message();
    ASSERT_EQ(artifact->kernels.size(), 1u) << "the Add and the Relu were not fused into the Gemm";
    EXPECT_NE(artifact->kernels[0].op.find("bias+relu"), std::string::npos) << artifact->kernels[0].op;
    const std::vector<float> y = testing::RunArtifact(std::move(*artifact), x);
    ASSERT_EQ(y.size(), size_t(rows * n));
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t j = 0; j < n; ++j) {
        double acc = 0.5 * c[size_t(j)] + bias[size_t(j)];
        for (int64_t q = 0; q < k; ++q) acc += 2.0 * x[size_t(r * k + q)] * w[size_t(j * k + q)];
        ASSERT_NEAR(y[size_t(r * n + j)], std::max(acc, 0.0), 1e-4) << "row " << r << " column " << j;
      }
    }
  }
}

// x [batch..., rows, k] times y [batch' ..., k, cols] naively, numpy's broadcasting over batch dims of
// equal rank (extent 1 broadcasts).
std::vector<double> NaiveMatMul(const std::vector<float>& x, const std::vector<int64_t>& xs,
                                const std::vector<float>& y, const std::vector<int64_t>& ys) {
  const size_t r = xs.size();
  const int64_t rows = xs[r - 2], k = xs[r - 1], cols = ys[r - 1];
  std::vector<int64_t> batch(r - 2);
  int64_t batches = 1;
  for (size_t d = 0; d + 2 < r; ++d) batches *= (batch[d] = std::max(xs[d], ys[d]));
  std::vector<double> out;
  for (int64_t flat = 0; flat < batches; ++flat) {
    int64_t xb = 0, yb = 0, rest = flat, xstride = 1, ystride = 1;
    for (size_t d = r - 2; d-- > 0;) {
      const int64_t i = rest % batch[d];
      rest /= batch[d];
      xb += (xs[d] == 1 ? 0 : i) * xstride;
      yb += (ys[d] == 1 ? 0 : i) * ystride;
      xstride *= xs[d];
      ystride *= ys[d];
    }
    for (int64_t i = 0; i < rows; ++i) {
      for (int64_t j = 0; j < cols; ++j) {
        double acc = 0;
        for (int64_t c = 0; c < k; ++c)
          acc += double(x[size_t((xb * rows + i) * k + c)]) * y[size_t((yb * k + c) * cols + j)];
        out.push_back(acc);
      }
    }
  }
  return out;
}

// Attention's scores, x x^T per head: products of two activations with the same batch dimensions
// are batch_matmul tasks (the batch dims folded), on the host and for sm_90 (emulated), and match
// a naive product; 17 columns is a count no vector width divides (ViT's 197 tokens in small).
TEST(MatMulOfActivations, EqualBatchDimsAreABatchMatmulTask) {
  const std::vector<int64_t> xs = {2, 3, 17, 8}, ts = {2, 3, 8, 17};
  testing::OnnxBuilder b(13);
  b.Input("x", xs);
  b.Node("Transpose", {"x"}, {"xt"}, {testing::AttrInts("perm", {0, 1, 3, 2})});
  b.Node("MatMul", {"x", "xt"}, {"y"});
  b.Output("y");
  std::mt19937 rng(9);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> x(size_t(2 * 3 * 17 * 8));
  for (float& v : x) v = dist(rng);
  std::vector<float> xt(x.size());  // the transpose, for the reference
  for (int64_t h = 0; h < 6; ++h)
    for (int64_t i = 0; i < 17; ++i)
      for (int64_t c = 0; c < 8; ++c) xt[size_t((h * 8 + c) * 17 + i)] = x[size_t((h * 17 + i) * 8 + c)];
  const std::vector<double> ref = NaiveMatMul(x, xs, xt, ts);
  for (bool gpu : {false, true}) {
    SCOPED_TRACE(gpu ? "sm_90 (emulated)" : "host");
    auto artifact = testing::CompileOnnxBytes(b.Bytes(), "scores", 3, gpu);
    ASSERT_TRUE(artifact.ok()) << artifact.status().message();
    std::string workloads;
    for (const auto& k : artifact->kernels) workloads += k.workload + " ";
    EXPECT_NE(workloads.find(std::string(gpu ? "batch_matmul_cuda" : "batch_matmul") +
                             ":batch_matmul|B6_M17_K8|N17|BMN|float32"),
              std::string::npos)
        << workloads;
    const std::vector<float> y = testing::RunArtifact(std::move(*artifact), x);
    ASSERT_EQ(y.size(), ref.size());
    for (size_t i = 0; i < y.size(); ++i) ASSERT_NEAR(y[i], ref[i], 1e-4) << "element " << i;
  }
}

// Batch dims that broadcast ([2, 17, 8] x [1, 8, 17]) are no batched task: the generic product,
// B's 17 columns padded to a vector multiple for it (compiler/compute/linalg.cc).
TEST(MatMulOfActivations, BroadcastBatchDimsUseTheGenericProduct) {
  const std::vector<int64_t> xs = {2, 17, 8}, ys = {1, 8, 17};
  testing::OnnxBuilder b(13);
  b.Input("x", xs);
  b.Ints("starts", {0});
  b.Ints("ends", {1});
  b.Ints("axes", {0});
  b.Node("Slice", {"x", "starts", "ends", "axes"}, {"first"});
  b.Node("Transpose", {"first"}, {"yt"}, {testing::AttrInts("perm", {0, 2, 1})});
  b.Node("MatMul", {"x", "yt"}, {"y"});
  b.Output("y");
  std::mt19937 rng(10);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> x(size_t(2 * 17 * 8));
  for (float& v : x) v = dist(rng);
  std::vector<float> yt(size_t(8 * 17));
  for (int64_t i = 0; i < 17; ++i)
    for (int64_t c = 0; c < 8; ++c) yt[size_t(c * 17 + i)] = x[size_t(i * 8 + c)];
  const std::vector<double> ref = NaiveMatMul(x, xs, yt, ys);
  for (bool gpu : {false, true}) {
    SCOPED_TRACE(gpu ? "sm_90 (emulated)" : "host");
    auto artifact = testing::CompileOnnxBytes(b.Bytes(), "scores", 3, gpu);
    ASSERT_TRUE(artifact.ok()) << artifact.status().message();
    for (const auto& k : artifact->kernels) EXPECT_EQ(k.workload.find("batch_matmul"), std::string::npos) << k.workload;
    const std::vector<float> y = testing::RunArtifact(std::move(*artifact), x);
    ASSERT_EQ(y.size(), ref.size());
    for (size_t i = 0; i < y.size(); ++i) ASSERT_NEAR(y[i], ref[i], 1e-4) << "element " << i;
  }
}

}  // namespace
}  // namespace tunefarm
