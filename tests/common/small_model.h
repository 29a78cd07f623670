// A small ONNX model for tuning tests: Conv 3x3 (C -> K channels, 14x14; by default 16 -> 32) + Relu,
// GlobalAveragePool, Flatten, Gemm (K -> 10) -- two tuning tasks (a conv2d and a dense) whose
// kernels take microseconds, so tests tune them end to end in seconds.
#ifndef TUNEFARM_TESTS_COMMON_SMALL_MODEL_H_
#define TUNEFARM_TESTS_COMMON_SMALL_MODEL_H_

#include <string>

namespace tunefarm::testing {

// Writes the model to path (random weights from a fixed seed); false when it cannot be written.
// Other channel counts give other workloads (tests that need two models with distinct tasks).
bool WriteSmallCnnOnnx(const std::string& path, int in_channels = 16, int out_channels = 32);

}  // namespace tunefarm::testing

#endif  // TUNEFARM_TESTS_COMMON_SMALL_MODEL_H_
