// Runs LLVMFuzzerTestOneInput without libFuzzer: every seed, then random mutations of them
// (byte flips, insertions, deletions, splices), deterministically. A crash or sanitizer report
// fails the test. Usage: parser_fuzz_smoke [ITERATIONS]
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

int main(int argc, char** argv) {
  const long iterations = argc > 1 ? std::atol(argv[1]) : 20000;
  std::vector<std::string> seeds = {
      "native", "llvm -mtriple=aarch64-linux-gnu -mcpu=cortex-a72 -mattr=+neon", "rasp3b", "cuda -arch=sm_90",
      "llvm -mcpu=skylake-avx512 -mattr=+avx512f,-avx2 -model=x -keys=cpu",
      "conv2d_nchwc|N1_C64_H56_W56|K64_R3x3_S1x1_P1_1_1_1_D1x1_G1|NCHW|float32",
      "depthwise_conv2d_nchwc|N1_C8_H9_W9|K8_R3x3_S2x2_P1_1_1_1_D1x1_G8|NCHW|float32",
      "dense_pack|N1_I512|O1000|NC|float32",
      R"({"index":3,"knobs":{"tile":[3,4],"ann":"b","o":[2]}})",
      R"({"symbol":"k","buffers":[{"name":"a","role":"input","shape":[1,2],"dtype":"float32"}],"flops":2})",
  };
  // A valid kernel case file: one case "k" with one input buffer of two floats.
  const unsigned char case_file[] = {'T', 'F', 'K', 'C', 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 'k', 1, 0, 0, 0,
                                     0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 128, 63, 0, 0, 0, 64};
  seeds.emplace_back(reinterpret_cast<const char*>(case_file), sizeof(case_file));
  std::mt19937_64 rng(12345);
  long runs = 0;
  for (const auto& s : seeds) {
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(s.data()), s.size());
    ++runs;
  }
  for (long i = 0; i < iterations; ++i) {
    std::string s = seeds[rng() % seeds.size()];
    int edits = 1 + int(rng() % 4);
    for (int e = 0; e < edits; ++e) {
      size_t pos = s.empty() ? 0 : rng() % (s.size() + 1);
      switch (rng() % 4) {
        case 0:
          if (!s.empty() && pos < s.size()) s[pos] = char(rng());
          break;
        case 1: s.insert(pos, 1, char(rng())); break;
        case 2:
          if (pos < s.size()) s.erase(pos, 1 + rng() % 8);
          break;
        case 3: {
          const std::string& other = seeds[rng() % seeds.size()];
          size_t from = rng() % (other.size() + 1);
          s.insert(pos, other.substr(from, rng() % 16));
          break;
        }
      }
    }
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(s.data()), s.size());
    ++runs;
  }
  std::printf("parser_fuzz_smoke: %ld inputs, no crash\n", runs);
  return 0;
}
