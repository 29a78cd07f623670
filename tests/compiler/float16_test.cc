// Graphs that compute in float16 (issue 48): tunefarm computes them in float32 and rounds where the
// graph casts. A Cast to float16 or bfloat16 rounds exactly as the runtime's conversions do (round
// half to even, subnormals, overflow to infinity), when lowered (host and GPU, emulated) and when
// folded; and a float16 converter's export, its node list unsorted, matches ONNX Runtime.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "common/compile_onnx.h"
#include "common/onnx_builder.h"
#include "common/run_artifact.h"
#include "tunefarm/compiler/compile.h"
#include "tunefarm/runtime/element_convert.h"
#include "tunefarm/runtime/executor.h"
#include "tunefarm/runtime/npy.h"

namespace tunefarm::compiler {
namespace {

using testing::AttrInt;
using testing::OnnxBuilder;

// Ties, subnormals of both types, values either side of float16's largest, both signs, infinities.
const std::vector<float> kValues = {1.0f,
                                    1.00048828125f /* a float16 tie: to even, 1 */,
                                    1.00146484375f /* a tie: up */,
                                    -2.5f,
                                    3.14159265f,
                                    1e-5f /* a float16 subnormal */,
                                    6e-8f /* below float16's smallest: 2^-24 or 0 */,
                                    65504.0f,
                                    65519.0f /* rounds down to 65504 */,
                                    65520.0f /* the tie past the largest: infinity */,
                                    -70000.0f,
                                    1e30f,
                                    1.0e-39f /* a float32 subnormal */,
                                    0.0f,
                                    std::numeric_limits<float>::infinity(),
                                    0.333333333f};

float Expected(float v, int32_t to) {
  return to == onnx::TensorProto::FLOAT16 ? runtime::HalfToFloat(runtime::FloatToHalf(v))
                                          : runtime::BFloat16ToFloat(runtime::FloatToBFloat16(v));
}

// y = Cast(Cast(x, to), float) + Cast(Cast(c, to), float) * 0: the first term lowered, and with
// `folded` the same through a constant c (x times 0 plus the folded term).
std::string RoundTripModel(int32_t to, bool folded) {
  OnnxBuilder b(13);
  const int64_t n = int64_t(kValues.size());
  b.Input("x", {n});
  if (folded) {
    b.Floats("c", {n}, kValues);
    b.Floats("zero", {}, {0.0f});
    b.Node("Mul", {"x", "zero"}, {"x0"});
    b.Node("Cast", {"c"}, {"narrow"}, {AttrInt("to", to)});
    b.Node("Cast", {"narrow"}, {"wide"}, {AttrInt("to", onnx::TensorProto::FLOAT)});
    b.Node("Add", {"x0", "wide"}, {"y"});
  } else {
    b.Node("Cast", {"x"}, {"narrow"}, {AttrInt("to", to)});
    b.Node("Cast", {"narrow"}, {"y"}, {AttrInt("to", onnx::TensorProto::FLOAT)});
  }
  b.Output("y");
  return b.Bytes();
}

TEST(Float16Graphs, CastsRoundToTheTypeAsItsConversionDoes) {
  std::vector<float> ones(kValues.size(), 1.0f);  // the folded model's x (finite: x * 0 is 0)
  for (int32_t to : {onnx::TensorProto::FLOAT16, onnx::TensorProto::BFLOAT16}) {
    const std::string type = to == onnx::TensorProto::FLOAT16 ? "float16" : "bfloat16";
    for (bool folded : {false, true}) {
      for (bool gpu : {false, true}) {
        auto artifact = testing::CompileOnnxBytes(RoundTripModel(to, folded), "cast", 3, gpu);
        ASSERT_TRUE(artifact.ok()) << artifact.status().ToString();
        const std::vector<float> y = testing::RunArtifact(std::move(*artifact), folded ? ones : kValues);
        ASSERT_EQ(y.size(), kValues.size());
        for (size_t i = 0; i < y.size(); ++i) {
          EXPECT_EQ(y[i], Expected(kValues[i], to))
              << type << (folded ? " folded" : " lowered") << (gpu ? " (GPU, emulated)" : "") << ": " << kValues[i];
        }
      }
    }
  }
  // The cases the list is for.
  EXPECT_EQ(Expected(65519.0f, onnx::TensorProto::FLOAT16), 65504.0f);
  EXPECT_TRUE(std::isinf(Expected(65520.0f, onnx::TensorProto::FLOAT16)));
  EXPECT_EQ(Expected(1.00048828125f, onnx::TensorProto::FLOAT16), 1.0f);
}

// tests/data/float16/float16_unsorted (tools/quantized_models/export_quantized.py): Cast to
// float16, Conv, Relu, MatMul, Add in float16, the node list reversed; ONNX Runtime's output.
TEST(Float16Graphs, AnUnsortedFloat16ExportMatchesOnnxRuntime) {
  const char* src = std::getenv("TUNEFARM_SOURCE_DIR");
  ASSERT_NE(src, nullptr) << "TUNEFARM_SOURCE_DIR is set by CTest";
  const std::string dir = std::string(src) + "/tests/data/float16/float16_unsorted";
  CompileOptions options;
  options.warn = [](const std::string&) {};
  auto artifact = CompileModel(dir + "/model.onnx", HostTarget(), options);
  ASSERT_TRUE(artifact.ok()) << artifact.status().ToString();
  auto input = runtime::ReadNpy(dir + "/input.npy");
  auto ref = runtime::ReadNpy(dir + "/output.npy");
  ASSERT_TRUE(input.ok() && ref.ok());
  std::vector<float> x(input->data.size() / 4), want(ref->data.size() / 4);
  std::memcpy(x.data(), input->data.data(), input->data.size());
  std::memcpy(want.data(), ref->data.data(), ref->data.size());
  const std::vector<float> y = testing::RunArtifact(std::move(*artifact), x);
  ASSERT_EQ(y.size(), want.size());
  double largest = 0, magnitude = 0;
  for (size_t i = 0; i < y.size(); ++i) {
    largest = std::max(largest, std::fabs(double(y[i]) - double(want[i])));
    magnitude = std::max(magnitude, std::fabs(double(want[i])));
  }
  std::printf("float16_unsorted vs ONNX Runtime: max |y - y_ref| = %.3g of max |y_ref| (float16's ulp: 9.8e-4)\n",
              largest / magnitude);
  // ONNX Runtime computes these operators in float16 (or rounds each result to it); tunefarm in
  // float32, rounding at the casts: they differ by float16 roundings, a few of its ulps at most.
  EXPECT_LE(largest / magnitude, 4e-3);
}

}  // namespace
}  // namespace tunefarm::compiler
