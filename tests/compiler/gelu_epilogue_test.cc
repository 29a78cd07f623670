// GELU after a dense layer is the kernel's epilogue: the Div/Erf/Add/Mul/Mul chain exporters
// before opset 20 write (model/passes/recognize_gelu.h, in both of its arrangements) and the
// opset-20 Gelu operator in its erf and tanh forms fold into dense_pack's epilogue (`+gelu`,
// `+gelu_tanh`), on the host and for sm_90 (emulated); a chain whose intermediate another node
// reads stays as it is. Outputs against a naive product and GELU in double precision.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "common/compile_onnx.h"
#include "common/onnx_builder.h"
#include "common/run_artifact.h"

namespace tunefarm {
namespace {

using testing::AttrString;
using testing::OnnxBuilder;

constexpr int64_t kRows = 6, kIn = 12, kOut = 20;

enum class Form { kChainDiv, kChainHalfFirst, kOpErf, kOpTanh };

struct Case {
  std::vector<float> x, w, b;
};

Case RandomCase() {
  std::mt19937 rng(21);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  Case c{std::vector<float>(kRows * kIn), std::vector<float>(kIn * kOut), std::vector<float>(kOut)};
  for (auto* v : {&c.x, &c.w, &c.b}) {
    for (float& f : *v) f = 2.0f * dist(rng);
  }
  return c;
}

// x [6, 12] -> MatMul(w) -> Add(b) -> GELU in `form` -> y. `extra_output`: Erf's output is a
// graph output too (the chain must then stay).
std::string Model(const Case& c, Form form, bool extra_output = false) {
  OnnxBuilder b(form == Form::kOpErf || form == Form::kOpTanh ? 20 : 13);
  b.Input("x", {kRows, kIn});
  b.Floats("w", {kIn, kOut}, c.w);
  b.Floats("b", {kOut}, c.b);
  b.Node("MatMul", {"x", "w"}, {"xw"});
  b.Node("Add", {"xw", "b"}, {"h"});
  switch (form) {
    case Form::kChainDiv:  // torch.onnx's nn.GELU: ((erf(h / sqrt 2) + 1) * h) * 0.5
      b.Floats("sqrt2", {}, {1.4142135f});
      b.Floats("one", {}, {1.0f});
      b.Floats("half", {}, {0.5f});
      b.Node("Div", {"h", "sqrt2"}, {"s"});
      b.Node("Erf", {"s"}, {"e"});
      b.Node("Add", {"e", "one"}, {"e1"});
      b.Node("Mul", {"h", "e1"}, {"p"});
      b.Node("Mul", {"p", "half"}, {"y"});
      break;
    case Form::kChainHalfFirst:  // (0.5 * h) * (1 + erf(h * (1 / sqrt 2)))
      b.Floats("rsqrt2", {}, {0.70710678f});
      b.Floats("one", {}, {1.0f});
      b.Floats("half", {}, {0.5f});
      b.Node("Mul", {"rsqrt2", "h"}, {"s"});
      b.Node("Erf", {"s"}, {"e"});
      b.Node("Add", {"one", "e"}, {"e1"});
      b.Node("Mul", {"half", "h"}, {"hh"});
      b.Node("Mul", {"e1", "hh"}, {"y"});
      break;
    case Form::kOpErf:
      b.Node("Gelu", {"h"}, {"y"});
      break;
    case Form::kOpTanh:
      b.Node("Gelu", {"h"}, {"y"}, {AttrString("approximate", "tanh")});
      break;
  }
  b.Output("y");
  if (extra_output) b.Output("e");
  return b.Bytes();
}

double Gelu(double v, bool tanh_form) {
  if (tanh_form) return 0.5 * v * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (v + 0.044715 * v * v * v)));
  return 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0)));
}

void Check(Form form, const std::string& epilogue, bool extra_output = false) {
  const Case c = RandomCase();
  for (bool gpu : {false, true}) {
    SCOPED_TRACE(epilogue + (extra_output ? " (Erf read elsewhere)" : "") +
                 (gpu ? " on sm_90 (emulated)" : " on the host"));
    auto artifact = testing::CompileOnnxBytes(Model(c, form, extra_output), "gelu", 3, gpu);
    ASSERT_TRUE(artifact.ok()) << artifact.status().message();
    std::string ops;
    for (const auto& k : artifact->kernels) ops += k.op + " ";
    if (extra_output) {
      EXPECT_NE(ops.find("Erf"), std::string::npos) << ops;
      EXPECT_EQ(ops.find("gelu"), std::string::npos) << ops;
    } else {
      EXPECT_NE(ops.find("+bias" + epilogue + " "), std::string::npos) << ops;
      EXPECT_EQ(ops.find("Erf"), std::string::npos) << ops;
      EXPECT_EQ(artifact->kernels.size(), 1u) << ops;
    }
    const std::vector<float> y = testing::RunArtifact(std::move(*artifact), c.x);
    ASSERT_GE(y.size(), size_t(kRows * kOut));
    for (int64_t r = 0; r < kRows; ++r) {
      for (int64_t j = 0; j < kOut; ++j) {
        double h = c.b[size_t(j)];
        for (int64_t i = 0; i < kIn; ++i) h += double(c.x[size_t(r * kIn + i)]) * c.w[size_t(i * kOut + j)];
        ASSERT_NEAR(y[size_t(r * kOut + j)], Gelu(h, form == Form::kOpTanh), 2e-5 * (1 + std::fabs(h)))
            << r << "," << j;
      }
    }
  }
}

TEST(GeluEpilogue, TheExportersErfChainFusesIntoTheDenseLayer) {
  Check(Form::kChainDiv, "+gelu");
  Check(Form::kChainHalfFirst, "+gelu");
}

TEST(GeluEpilogue, TheGeluOperatorFusesInBothForms) {
  Check(Form::kOpErf, "+gelu");
  Check(Form::kOpTanh, "+gelu_tanh");
}

TEST(GeluEpilogue, AChainWhoseIntermediateIsReadElsewhereStays) {
  Check(Form::kChainDiv, "+gelu", /*extra_output=*/true);
}

}  // namespace
}  // namespace tunefarm
