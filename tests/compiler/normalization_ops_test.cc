// GroupNormalization and NonZero (compiler/operators/nn_ops.cc, index_ops.cc), which ONNX 1.13's
// backend data does not cover: GroupNormalization against a naive reference in both opsets' forms
// (scale and bias per group at 18, per channel at 21) on the host and for sm_90 (emulated), and
// NonZero folded from a constant or refused, naming the node, for a runtime input. Softmax and
// LayerNormalization over rows long enough for lane-split reductions (compiler/compute/reduce.cc:
// 64, 128, 197 and 768 wide, the backend data's rows are shorter), against naive references.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "common/compile_onnx.h"
#include "common/onnx_builder.h"
#include "common/run_artifact.h"

namespace tunefarm {
namespace {

using testing::AttrFloat;
using testing::AttrInt;
using testing::OnnxBuilder;

int64_t Product(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::vector<float> Pattern(size_t n, float scale, float offset) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = offset + scale * float((i * 11) % 23);
  return v;
}

// x [N, C, H, W] normalized over each group's channels and pixels, then the affine per channel
// (affine.size() == C) or per group.
std::vector<float> GroupNormReference(const std::vector<float>& x, int64_t n, int64_t c, int64_t hw, int64_t groups,
                                      const std::vector<float>& scale, const std::vector<float>& bias, float eps) {
  std::vector<float> y(x.size());
  const int64_t per_group = c / groups, count = per_group * hw;
  for (int64_t b = 0; b < n; ++b) {
    for (int64_t g = 0; g < groups; ++g) {
      const size_t base = size_t((b * c + g * per_group) * hw);
      double mean = 0, var = 0;
      for (int64_t i = 0; i < count; ++i) mean += x[base + size_t(i)];
      mean /= double(count);
      for (int64_t i = 0; i < count; ++i) var += (x[base + size_t(i)] - mean) * (x[base + size_t(i)] - mean);
      var /= double(count);
      for (int64_t i = 0; i < count; ++i) {
        const int64_t channel = g * per_group + i / hw;
        const size_t a = size_t(int64_t(scale.size()) == c ? channel : g);
        y[base + size_t(i)] = float((x[base + size_t(i)] - mean) / std::sqrt(var + eps) * scale[a] + bias[a]);
      }
    }
  }
  return y;
}

TEST(GroupNormalization, MatchesANaiveReferenceInBothOpsetsForms) {
  const int64_t n = 2, c = 6, h = 3, w = 5, groups = 3;
  const float eps = 1e-3f;
  const std::vector<float> x = Pattern(size_t(n * c * h * w), 0.37f, -4.0f);
  for (int64_t opset : {18, 21}) {
    const int64_t affine = opset >= 21 ? c : groups;
    const std::vector<float> scale = Pattern(size_t(affine), 0.2f, 0.5f), bias = Pattern(size_t(affine), -0.3f, 1.0f);
    OnnxBuilder b(opset);
    b.Input("x", {n, c, h, w});
    b.Floats("scale", {affine}, scale);
    b.Floats("bias", {affine}, bias);
    b.Node("GroupNormalization", {"x", "scale", "bias"}, {"y"},
           {AttrInt("num_groups", groups), AttrFloat("epsilon", eps)});
    b.Output("y");
    const std::vector<float> ref = GroupNormReference(x, n, c, h * w, groups, scale, bias, eps);
    for (bool gpu : {false, true}) {
      SCOPED_TRACE("opset " + std::to_string(opset) + (gpu ? " on sm_90 (emulated)" : " on the host"));
      auto artifact = testing::CompileOnnxBytes(b.Bytes(), "groupnorm", 3, gpu);
      ASSERT_TRUE(artifact.ok()) << artifact.status().message();
      const std::vector<float> y = testing::RunArtifact(std::move(*artifact), x);
      ASSERT_EQ(y.size(), ref.size());
      for (size_t i = 0; i < y.size(); ++i)
        EXPECT_NEAR(y[i], ref[i], 1e-5f * (1 + std::fabs(ref[i]))) << "element " << i;
    }
  }
}

TEST(GroupNormalization, AffineOfTheOtherOpsetsFormIsRefusedNamingTheShape) {
  OnnxBuilder b(18);  // per-channel vectors at opset 18, which says per group
  b.Input("x", {1, 4, 2, 2});
  b.Floats("scale", {4}, std::vector<float>(4, 1.0f));
  b.Floats("bias", {4}, std::vector<float>(4, 0.0f));
  b.Node("GroupNormalization", {"x", "scale", "bias"}, {"y"}, {AttrInt("num_groups", 2)});
  b.Output("y");
  auto artifact = testing::CompileOnnxBytes(b.Bytes(), "groupnorm");
  ASSERT_FALSE(artifact.ok());
  EXPECT_NE(artifact.status().message().find("scale [4] must be [2] (one per group, as opset 18 says"),
            std::string::npos)
      << artifact.status().message();

  OnnxBuilder odd(21);
  odd.Input("x", {1, 6, 2, 2});
  odd.Floats("scale", {6}, std::vector<float>(6, 1.0f));
  odd.Floats("bias", {6}, std::vector<float>(6, 0.0f));
  odd.Node("GroupNormalization", {"x", "scale", "bias"}, {"y"}, {AttrInt("num_groups", 4)});
  odd.Output("y");
  artifact = testing::CompileOnnxBytes(odd.Bytes(), "groupnorm");
  ASSERT_FALSE(artifact.ok());
  EXPECT_NE(artifact.status().message().find("num_groups 4 must be positive and divide the 6 channels"),
            std::string::npos)
      << artifact.status().message();
}

TEST(LongRows, SoftmaxAndLayerNormMatchNaiveReferences) {
  // [3, n] rows, and [4, 50, 197]: enough work for the parallel loop the row stages attach to.
  for (const std::vector<int64_t>& shape : {std::vector<int64_t>{3, 64}, {3, 128}, {3, 197}, {3, 768}, {4, 50, 197}}) {
    const int64_t n = shape.back(), rows = Product(shape) / n;
    const std::vector<float> x = Pattern(size_t(rows * n), 0.43f, -5.0f);
    for (const char* op : {"Softmax", "LayerNormalization"}) {
      OnnxBuilder b(17);
      b.Input("x", shape);
      const bool ln = std::string(op) == "LayerNormalization";
      if (ln) {
        b.Floats("scale", {n}, Pattern(size_t(n), 0.05f, 0.5f));
        b.Floats("bias", {n}, Pattern(size_t(n), -0.02f, 0.1f));
        b.Node(op, {"x", "scale", "bias"}, {"y"}, {AttrInt("axis", -1)});
      } else {
        b.Node(op, {"x"}, {"y"}, {AttrInt("axis", -1)});
      }
      b.Output("y");
      std::vector<double> ref;
      const std::vector<float> scale = Pattern(size_t(n), 0.05f, 0.5f), bias = Pattern(size_t(n), -0.02f, 0.1f);
      for (int64_t r = 0; r < rows; ++r) {
        const float* row = &x[size_t(r * n)];
        if (ln) {
          double mean = 0, var = 0;
          for (int64_t c = 0; c < n; ++c) mean += row[c];
          mean /= double(n);
          for (int64_t c = 0; c < n; ++c) var += (row[c] - mean) * (row[c] - mean);
          var /= double(n);
          for (int64_t c = 0; c < n; ++c)
            ref.push_back((row[c] - mean) / std::sqrt(var + 1e-5) * scale[size_t(c)] + bias[size_t(c)]);
        } else {
          double max = row[0], sum = 0;
          for (int64_t c = 0; c < n; ++c) max = std::max(max, double(row[c]));
          for (int64_t c = 0; c < n; ++c) sum += std::exp(row[c] - max);
          for (int64_t c = 0; c < n; ++c) ref.push_back(std::exp(row[c] - max) / sum);
        }
      }
      for (bool gpu : {false, true}) {
        SCOPED_TRACE(std::string(op) + " over " + std::to_string(n) + " in " + std::to_string(rows) + " rows" +
                     (gpu ? " on sm_90 (emulated)" : " on the host"));
        auto artifact = testing::CompileOnnxBytes(b.Bytes(), "rows", 3, gpu);
        ASSERT_TRUE(artifact.ok()) << artifact.status().message();
        const std::vector<float> y = testing::RunArtifact(std::move(*artifact), x);
        ASSERT_EQ(y.size(), ref.size());
        for (size_t i = 0; i < y.size(); ++i)
          ASSERT_NEAR(y[i], ref[i], 1e-5 * (1 + std::fabs(ref[i]))) << "element " << i;
      }
    }
  }
}

TEST(NonZero, AConstantInputFoldsToItsIndices) {
  // NonZero([[1, 0, 2], [0, 3, 0]]) = [[0, 0, 1], [0, 2, 1]]: row indices, then column indices.
  OnnxBuilder b(13);
  b.Input("x", {2, 3});
  b.Floats("c", {2, 3}, {1, 0, 2, 0, 3, 0});
  b.Node("NonZero", {"c"}, {"idx"});
  b.Node("Cast", {"idx"}, {"idxf"}, {AttrInt("to", 1)});
  b.Node("Add", {"x", "idxf"}, {"y"});
  b.Output("y");
  auto artifact = testing::CompileOnnxBytes(b.Bytes(), "nonzero", 0);
  ASSERT_TRUE(artifact.ok()) << artifact.status().message();
  EXPECT_EQ(testing::RunArtifact(std::move(*artifact), {10, 20, 30, 40, 50, 60}),
            (std::vector<float>{10, 20, 31, 40, 52, 61}));
}

TEST(NonZero, ARuntimeInputIsRefusedNamingTheNode) {
  OnnxBuilder b(13);
  b.Input("x", {2, 3});
  b.Node("NonZero", {"x"}, {"idx"});
  b.Output("idx");
  auto artifact = testing::CompileOnnxBytes(b.Bytes(), "nonzero");
  ASSERT_FALSE(artifact.ok());
  const std::string& m = artifact.status().message();
  EXPECT_NE(m.find("NonZero"), std::string::npos) << m;
  EXPECT_NE(m.find("depends on the values of 'x', which are known only at run time"), std::string::npos) << m;
  EXPECT_NE(m.find("NonZero needs a constant input"), std::string::npos) << m;
}

}  // namespace
}  // namespace tunefarm
