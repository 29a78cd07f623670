// Quantized models in the three forms exporters write (QDQ, QOperator, dynamic) compile with no
// records and match ONNX Runtime: the mean |y - y_ref| at most 1% of max |y_ref| and the largest at
// most 5% (a float reduction order may flip a rounding by one quantization step, which then moves
// a dequantized value by a scale). Each model's figures are printed.
//
// tests/data/quantized holds the small ones (a QOperator CNN, two dynamic transformer blocks, a
// dynamic CNN, a QAT-style fake-quant CNN), so they run everywhere, also lowered for sm_90 and
// emulated; every model also compiles for AVX2 alone where the host's int8 form is another; TUNEFARM_QUANTIZED_DIR
// names the whole set (torchvision's ResNet-18 and MobileNetV2 quantized by PyTorch, tens of MB:
// tools/quantized_models/README.md), which runs when it is set.
#include <dirent.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "common/test_files.h"
#include "tunefarm/compiler/compile.h"
#include "tunefarm/runtime/executor.h"
#include "tunefarm/runtime/npy.h"

namespace tunefarm::compiler {
namespace {

using tunefarm::testing::ListDir;

struct Agreement {
  double mean = 0, max = 0;  // |y - y_ref| over max |y_ref|
  double exact = 0;          // the share of outputs equal to the reference
};

// Compiles dir/model.onnx with no records (fallback configs) for `target`, runs it on input.npy.
Result<Agreement> CompileAndCompare(const std::string& dir, const Target& target) {
  CompileOptions options;
  options.warn = [](const std::string&) {};
  TUNEFARM_ASSIGN_OR_RETURN(runtime::Artifact artifact, CompileModel(dir + "/model.onnx", target, options));
  TUNEFARM_ASSIGN_OR_RETURN(auto input, runtime::ReadNpy(dir + "/input.npy"));
  TUNEFARM_ASSIGN_OR_RETURN(auto ref, runtime::ReadNpy(dir + "/output.npy"));
  TUNEFARM_ASSIGN_OR_RETURN(auto ex, runtime::Executor::Load(std::move(artifact)));
  TUNEFARM_RETURN_IF_ERROR(ex->SetInput(0, input.data.data(), input.data.size()));
  TUNEFARM_RETURN_IF_ERROR(ex->Run());
  if (ex->outputs()[0].bytes() != int64_t(ref.data.size())) {
    return Status::Internal("the output has " + std::to_string(ex->outputs()[0].bytes()) + " bytes, ONNX Runtime's " +
                            std::to_string(ref.data.size()));
  }
  const float* y = static_cast<const float*>(ex->Output(0));
  const auto* r = reinterpret_cast<const float*>(ref.data.data());
  const size_t n = ref.data.size() / 4;
  double sum = 0, largest = 0, magnitude = 0, equal = 0;
  for (size_t i = 0; i < n; ++i) {
    if (std::isnan(y[i])) return Status::Internal("NaN in the output");
    const double d = std::fabs(double(y[i]) - double(r[i]));
    sum += d;
    largest = std::max(largest, d);
    magnitude = std::max(magnitude, std::fabs(double(r[i])));
    equal += d == 0 ? 1 : 0;
  }
  if (magnitude == 0) return Status::Internal("ONNX Runtime's output is all zeros: the model checks nothing");
  return Agreement{sum / double(n) / magnitude, largest / magnitude, equal / double(n)};
}

void CheckModels(const std::string& root, bool also_gpu) {
  const std::vector<std::string> models = ListDir(root);
  ASSERT_FALSE(models.empty()) << "no models under " << root;
  runtime::Executor::SetNumThreads(2);
  std::vector<std::pair<std::string, Target>> targets = {{"host", HostTarget()}};
  // The AVX2 form (vpmaddwd pairs, Zen 3) where the host has another: every x86 kind runs it.
  if (!HostTarget().is_arm()) {
    const Target avx2 = *ParseTarget("llvm -mcpu=znver3");
    if (HostTarget().int8_products != avx2.int8_products) targets.emplace_back("avx2", avx2);
  }
  if (also_gpu) targets.emplace_back("sm_90 emulated", *ParseTarget("cuda -arch=sm_90 -emulate=host"));
  for (const std::string& model : models) {
    for (const auto& [what, target] : targets) {
      auto a = CompileAndCompare(root + "/" + model, target);
      ASSERT_TRUE(a.ok()) << model << " (" << what << "): " << a.status().ToString();
      std::printf("%-26s %-15s mean %.2g%%  max %.2g%% of max|ref|, %.1f%% of outputs exact\n", model.c_str(),
                  what.c_str(), 100 * a->mean, 100 * a->max, 100 * a->exact);
      EXPECT_LE(a->mean, 0.01) << model << " (" << what << ")";
      EXPECT_LE(a->max, 0.05) << model << " (" << what << ")";
    }
  }
}

TEST(QuantizedModels, TheSmallSetMatchesOnnxRuntimeOnTheHostAndLoweredForTheGpu) {
  const char* src = std::getenv("TUNEFARM_SOURCE_DIR");
  ASSERT_NE(src, nullptr) << "TUNEFARM_SOURCE_DIR is set by CTest";
  CheckModels(std::string(src) + "/tests/data/quantized", /*also_gpu=*/true);
}

TEST(QuantizedModels, TheWholeSetMatchesOnnxRuntime) {
  const char* root = std::getenv("TUNEFARM_QUANTIZED_DIR");
  if (!root) GTEST_SKIP() << "TUNEFARM_QUANTIZED_DIR not set (the set: tools/quantized_models/README.md)";
  CheckModels(root, /*also_gpu=*/false);
}

}  // namespace
}  // namespace tunefarm::compiler
