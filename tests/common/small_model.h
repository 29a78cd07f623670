// A small ONNX model for tuning tests: Conv 3x3 (16 -> 32 channels, 14x14) + Relu,
// GlobalAveragePool, Flatten, Gemm (32 -> 10) -- two tuning tasks (a conv2d and a dense) whose
// kernels take microseconds, so tests tune them end to end in seconds.
#ifndef TUNEFARM_TESTS_COMMON_SMALL_MODEL_H_
#define TUNEFARM_TESTS_COMMON_SMALL_MODEL_H_

#include <string>

namespace tunefarm::testing {

// Writes the model to path (random weights from a fixed seed); false when it cannot be written.
bool WriteSmallCnnOnnx(const std::string& path);

}  // namespace tunefarm::testing

#endif  // TUNEFARM_TESTS_COMMON_SMALL_MODEL_H_
