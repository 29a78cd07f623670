// RecognizeLayerNorm (model/passes/recognize_layer_norm.h): the decomposed layer normalization of
// pre-opset-17 exporters compiles to one LayerNormalization kernel, with the axes as an attribute
// (opset 13) or an input (opset 18), with and without gamma/beta, on the host and for sm_90
// (emulated), and matches a naive reference; a chain whose deviation another node reads stays.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "common/compile_onnx.h"
#include "common/onnx_builder.h"
#include "common/run_artifact.h"

namespace tunefarm {
namespace {

using testing::AttrInts;
using testing::OnnxBuilder;

constexpr int64_t kRows = 5, kCols = 24;
constexpr float kEps = 1e-5f;

std::vector<float> Pattern(size_t n, float scale, float offset) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = offset + scale * float((i * 13) % 31);
  return v;
}

struct Form {
  int64_t opset = 13;
  bool affine = true;
  bool deviation_read_elsewhere = false;
};

std::string Model(const Form& f, const std::vector<float>& gamma, const std::vector<float>& beta) {
  OnnxBuilder b(f.opset);
  b.Input("x", {kRows, kCols});
  b.Floats("two", {}, {2.0f});
  b.Floats("eps", {}, {kEps});
  auto mean = [&](const std::string& in, const std::string& out) {
    if (f.opset >= 18) {
      b.Node("ReduceMean", {in, "axes"}, {out});
    } else {
      b.Node("ReduceMean", {in}, {out}, {AttrInts("axes", {-1})});
    }
  };
  if (f.opset >= 18) b.Ints("axes", {1});
  mean("x", "m");
  b.Node("Sub", {"x", "m"}, {"d"});
  b.Node("Pow", {"d", "two"}, {"d2"});
  mean("d2", "v");
  b.Node("Add", {"v", "eps"}, {"ve"});
  b.Node("Sqrt", {"ve"}, {"sd"});
  b.Node("Div", {"d", "sd"}, {"n"});
  std::string y = "n";
  if (f.affine) {
    b.Floats("gamma", {kCols}, gamma);
    b.Floats("beta", {kCols}, beta);
    b.Node("Mul", {"n", "gamma"}, {"g"});
    b.Node("Add", {"g", "beta"}, {"y"});
    y = "y";
  }
  if (f.deviation_read_elsewhere) {
    b.Node("Add", {y, "d"}, {"yd"});
    y = "yd";
  }
  b.Output(y);
  return b.Bytes();
}

void Check(const Form& f) {
  const std::vector<float> x = Pattern(size_t(kRows * kCols), 0.21f, -3.0f);
  const std::vector<float> gamma = Pattern(kCols, 0.1f, 0.5f), beta = Pattern(kCols, -0.07f, 0.3f);
  std::vector<double> ref;
  for (int64_t r = 0; r < kRows; ++r) {
    double mean = 0, var = 0;
    for (int64_t c = 0; c < kCols; ++c) mean += x[size_t(r * kCols + c)];
    mean /= kCols;
    for (int64_t c = 0; c < kCols; ++c) var += (x[size_t(r * kCols + c)] - mean) * (x[size_t(r * kCols + c)] - mean);
    var /= kCols;
    for (int64_t c = 0; c < kCols; ++c) {
      const double d = x[size_t(r * kCols + c)] - mean;
      double y = d / std::sqrt(var + kEps);
      if (f.affine) y = y * gamma[size_t(c)] + beta[size_t(c)];
      if (f.deviation_read_elsewhere) y += d;
      ref.push_back(y);
    }
  }
  for (bool gpu : {false, true}) {
    SCOPED_TRACE("opset " + std::to_string(f.opset) + (f.affine ? " affine" : "") +
                 (f.deviation_read_elsewhere ? " deviation read elsewhere" : "") +
                 (gpu ? " on sm_90 (emulated)" : " on the host"));
    auto artifact = testing::CompileOnnxBytes(Model(f, gamma, beta), "ln", 3, gpu);
    ASSERT_TRUE(artifact.ok()) << artifact.status().message();
    std::string ops;
    for (const auto& k : artifact->kernels) ops += k.op + " ";
    if (f.deviation_read_elsewhere) {
      EXPECT_EQ(ops.find("LayerNormalization"), std::string::npos) << ops;
    } else {
      EXPECT_EQ(ops, "LayerNormalization ");
    }
    const std::vector<float> y = testing::RunArtifact(std::move(*artifact), x);
    ASSERT_EQ(y.size(), ref.size());
    for (size_t i = 0; i < y.size(); ++i) ASSERT_NEAR(y[i], ref[i], 1e-5 * (1 + std::fabs(ref[i]))) << "element " << i;
  }
}

TEST(RecognizeLayerNorm, TheDecomposedFormIsOneKernel) {
  Check({13, true, false});
  Check({13, false, false});
  Check({18, true, false});
}

TEST(RecognizeLayerNorm, AChainWhoseDeviationIsReadElsewhereStays) { Check({13, true, true}); }

}  // namespace
}  // namespace tunefarm
