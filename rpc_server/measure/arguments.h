// The argument values every measurement uses, CPU or GPU: float32 inputs uniform in [-1, 1)
// (requantization scales in [1e-4, 1e-2)), int32 ones in [-1024, 1024], 8-bit ones any byte, drawn
// in argument order from the spec's seed (ArgumentStream); outputs zero. Clients compute expected
// outputs from the same stream, so a check means the same thing on every server.
#ifndef TUNEFARM_RPC_SERVER_MEASURE_ARGUMENTS_H_
#define TUNEFARM_RPC_SERVER_MEASURE_ARGUMENTS_H_

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "tunefarm/rpc_server/measurement.h"

namespace tunefarm::rpc_server {

// The values' stream: SplitMix64 counting from the seed, one 64-bit draw per value. Why not
// uniform_real_distribution over mt19937_64: at 11 ns per value it took 26 ms to fill one
// 512x512x3x3 weight, more than timing the kernel that reads it (31 calls of 0.8 ms); this is
// about 1 ns, with 24 random bits per float.
class ArgumentStream {
 public:
  explicit ArgumentStream(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  // Uniform in [lo, hi).
  float Uniform(float lo, float hi) { return lo + (hi - lo) * (float(Next() >> 40) * 0x1p-24f); }

 private:
  uint64_t state_;
};

inline void SeedArgument(const ArgSpec& a, float* data, ArgumentStream& stream) {
  const size_t n = size_t(a.num_elements());
  if (a.role == "output") {
    std::memset(data, 0, n * 4);
    return;
  }
  if (a.dtype == "float32") {
    // Requantization multipliers are small positive numbers, as a model's are.
    const float lo = a.role == "scale" ? 1e-4f : -1.0f, hi = a.role == "scale" ? 1e-2f : 1.0f;
    for (size_t i = 0; i < n; ++i) data[i] = stream.Uniform(lo, hi);
    return;
  }
  if (a.dtype == "int32") {  // int8 kernels' biases: of the size a model's are
    auto* v = reinterpret_cast<int32_t*>(data);
    for (size_t i = 0; i < n; ++i) v[i] = int32_t(stream.Next() % 2049) - 1024;
    return;
  }
  // uint8 and int8: any byte.
  auto* bytes = reinterpret_cast<unsigned char*>(data);
  for (size_t i = 0; i < n; ++i) bytes[i] = static_cast<unsigned char>(stream.Next());
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
