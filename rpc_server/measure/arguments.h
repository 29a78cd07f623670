// The argument values every measurement uses, CPU or GPU: float32 inputs uniform in [-1, 1)
// (requantization scales in [1e-4, 1e-2)), int32 ones in [-1024, 1024], 8-bit ones any byte, drawn
// in argument order from the spec's seed; outputs zero. Clients compute expected outputs from the
// same stream, so a check means the same thing on every server.
#ifndef TUNEFARM_RPC_SERVER_MEASURE_ARGUMENTS_H_
#define TUNEFARM_RPC_SERVER_MEASURE_ARGUMENTS_H_

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "tunefarm/rpc_server/measurement.h"

namespace tunefarm::rpc_server {

inline void SeedArgument(const ArgSpec& a, float* data, std::mt19937_64& rng) {
  const size_t n = size_t(a.num_elements());
  if (a.role == "output") {
    std::memset(data, 0, n * 4);
    return;
  }
  if (a.dtype == "float32") {
    // Requantization multipliers are small positive numbers, as a model's are.
    std::uniform_real_distribution<float> dist(a.role == "scale" ? 1e-4f : -1.0f, a.role == "scale" ? 1e-2f : 1.0f);
    for (size_t i = 0; i < n; ++i) data[i] = dist(rng);
    return;
  }
  if (a.dtype == "int32") {  // int8 kernels' biases: of the size a model's are
    std::uniform_int_distribution<int32_t> dist(-1024, 1024);
    auto* v = reinterpret_cast<int32_t*>(data);
    for (size_t i = 0; i < n; ++i) v[i] = dist(rng);
    return;
  }
  // uint8 and int8: any byte.
  std::uniform_int_distribution<int> dist(0, 255);
  auto* bytes = reinterpret_cast<unsigned char*>(data);
  for (size_t i = 0; i < n; ++i) bytes[i] = static_cast<unsigned char>(dist(rng));
}

// OK when the outputs (in argument order, concatenated) match expected within tolerance, else
// InvalidArgument with the WRONG_ANSWER message.
inline Status CompareOutputs(const MeasureSpec& spec, const std::vector<const float*>& outputs) {
  double diff = 0, mag = 0;
  size_t k = 0, o = 0;
  for (const ArgSpec& a : spec.args) {
    if (a.role != "output") continue;
    const float* y = outputs[o++];
    for (int64_t j = 0; j < a.num_elements(); ++j, ++k) {
      diff = std::max(diff, std::fabs(double(y[j]) - double(spec.expected_outputs[k])));
      mag = std::max(mag, std::fabs(double(spec.expected_outputs[k])));
    }
  }
  const double rel = mag > 0 ? diff / mag : diff;
  if (rel <= spec.tolerance) return Status::OK();
  return Status::InvalidArgument("outputs differ from the expected ones: max relative error " + std::to_string(rel) +
                                 " > tolerance " + std::to_string(spec.tolerance));
}

}  // namespace tunefarm::rpc_server

#endif  // TUNEFARM_RPC_SERVER_MEASURE_ARGUMENTS_H_
