// PRelu after a convolution or a dense layer is the kernel's epilogue (model/passes/fuse_epilogues.cc,
// Activation::kPRelu): per-channel slopes as torch writes them ([C, 1, 1] after a conv, [N] after
// a MatMul) and a single slope ([1]) fuse, on the host and lowered for sm_90 (emulated), and the
// outputs match a naive convolution / product followed by PRelu.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "common/compile_onnx.h"
#include "common/onnx_builder.h"
#include "common/run_artifact.h"

namespace tunefarm {
namespace {

std::vector<float> Random(size_t n, std::mt19937& rng) {
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& f : v) f = dist(rng);
  return v;
}

float PRelu(double v, float slope) { return float(v < 0 ? v * slope : v); }

// The artifact computes PRelu inside the tunable kernel: no kernel of its own.
void ExpectFused(const runtime::Artifact& a, const std::string& template_prefix) {
  bool fused = false;
  for (const auto& k : a.kernels) {
    EXPECT_EQ(k.op.find("PRelu"), std::string::npos) << "a PRelu kernel of its own: " << k.op;
    fused = fused || (k.op.rfind(template_prefix, 0) == 0 && k.op.find("+prelu") != std::string::npos);
  }
  EXPECT_TRUE(fused) << "no " << template_prefix << " kernel with a +prelu epilogue";
}

TEST(PReluEpilogue, FusesIntoAConvWithPerChannelOrOneSlope) {
  const int64_t c = 3, k = 16, h = 6, w = 7;
  std::mt19937 rng(11);
  const auto x = Random(size_t(c * h * w), rng), wt = Random(size_t(k * c * 9), rng), bias = Random(size_t(k), rng);
  for (int64_t slopes : {k, int64_t(1)}) {
    const auto slope = Random(size_t(slopes), rng);
    testing::OnnxBuilder b(13);
    b.Input("x", {1, c, h, w});
    b.Floats("w", {k, c, 3, 3}, wt);
    b.Floats("b", {k}, bias);
    b.Floats("slope", slopes == 1 ? std::vector<int64_t>{1} : std::vector<int64_t>{k, 1, 1}, slope);
    b.Node("Conv", {"x", "w", "b"}, {"conv"}, {testing::AttrInts("pads", {1, 1, 1, 1})});
    b.Node("PRelu", {"conv", "slope"}, {"y"});
    b.Output("y");
    for (bool gpu : {false, true}) {
      SCOPED_TRACE(std::to_string(slopes) + " slope(s)" + (gpu ? " on sm_90 (emulated)" : " on the host"));
      auto artifact = testing::CompileOnnxBytes(b.Bytes(), "conv_prelu", 3, gpu);
      ASSERT_TRUE(artifact.ok()) << artifact.status().message();
      ExpectFused(*artifact, gpu ? "conv2d" : "conv2d_nchwc");
      const std::vector<float> y = testing::RunArtifact(std::move(*artifact), x);
      ASSERT_EQ(y.size(), size_t(k * h * w));
      for (int64_t o = 0; o < k; ++o) {
        for (int64_t r = 0; r < h; ++r) {
          for (int64_t q = 0; q < w; ++q) {
            double acc = bias[size_t(o)];
            for (int64_t ci = 0; ci < c; ++ci) {
              for (int64_t dr = 0; dr < 3; ++dr) {
                for (int64_t dq = 0; dq < 3; ++dq) {
                  const int64_t ir = r + dr - 1, iq = q + dq - 1;
                  if (ir < 0 || ir >= h || iq < 0 || iq >= w) continue;
                  acc += double(x[size_t((ci * h + ir) * w + iq)]) * wt[size_t(((o * c + ci) * 3 + dr) * 3 + dq)];
                }
              }
            }
            ASSERT_NEAR(y[size_t((o * h + r) * w + q)], PRelu(acc, slope[slopes == 1 ? 0 : size_t(o)]), 1e-4)
                << "channel " << o << " at " << r << "," << q;
          }
        }
      }
    }
  }
}

TEST(PReluEpilogue, FusesIntoADenseLayerAlongItsLastAxis) {
  const int64_t rows = 5, in = 12, out = 20;
  std::mt19937 rng(12);
  const auto x = Random(size_t(rows * in), rng), wt = Random(size_t(in * out), rng), slope = Random(size_t(out), rng);
  testing::OnnxBuilder b(13);
  b.Input("x", {rows, in});
  b.Floats("w", {in, out}, wt);
  b.Floats("slope", {out}, slope);
  b.Node("MatMul", {"x", "w"}, {"xw"});
  b.Node("PRelu", {"xw", "slope"}, {"y"});
  b.Output("y");
  for (bool gpu : {false, true}) {
    SCOPED_TRACE(gpu ? "on sm_90 (emulated)" : "on the host");
    auto artifact = testing::CompileOnnxBytes(b.Bytes(), "dense_prelu", 3, gpu);
    ASSERT_TRUE(artifact.ok()) << artifact.status().message();
    ExpectFused(*artifact, "dense");
    const std::vector<float> y = testing::RunArtifact(std::move(*artifact), x);
    ASSERT_EQ(y.size(), size_t(rows * out));
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t j = 0; j < out; ++j) {
        double acc = 0;
        for (int64_t i = 0; i < in; ++i) acc += double(x[size_t(r * in + i)]) * wt[size_t(i * out + j)];
        ASSERT_NEAR(y[size_t(r * out + j)], PRelu(acc, slope[size_t(j)]), 1e-4) << "row " << r << " column " << j;
      }
    }
  }
}

}  // namespace
}  // namespace tunefarm
