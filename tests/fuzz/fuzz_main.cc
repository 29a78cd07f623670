// Runs a fuzz target without libFuzzer: every seed, then deterministic random mutations of them
// (byte flips, insertions, deletions, splices). A crash or a sanitizer report fails the run.
// Usage: NAME_smoke [ITERATIONS]      NAME_smoke --write-seeds DIR
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <string>

#include "fuzz/fuzz_target.h"

namespace {

void Run(const std::string& s) { LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(s.data()), s.size()); }

std::string Mutate(std::string s, const std::vector<std::string>& seeds, std::mt19937_64& rng) {
  const int edits = 1 + int(rng() % 4);
  for (int e = 0; e < edits; ++e) {
    const size_t pos = s.empty() ? 0 : rng() % (s.size() + 1);
    switch (rng() % 4) {
      case 0:
        if (pos < s.size()) s[pos] = char(s[pos] ^ (1 << (rng() % 8)));
        break;
      case 1:
        s.insert(pos, 1, char(rng()));
        break;
      case 2:
        if (pos < s.size()) s.erase(pos, 1 + rng() % 8);
        break;
      default: {
        const std::string& other = seeds[rng() % seeds.size()];
        const size_t from = rng() % (other.size() + 1);
        s.insert(pos, other.substr(from, rng() % 16));
      }
    }
  }
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> seeds = tunefarm::fuzz::Seeds();
  if (argc == 3 && std::string(argv[1]) == "--write-seeds") {
    for (size_t i = 0; i < seeds.size(); ++i) {
      std::ofstream(std::string(argv[2]) + "/seed" + std::to_string(i), std::ios::binary) << seeds[i];
    }
    std::printf("%zu seeds written to %s\n", seeds.size(), argv[2]);
    return 0;
  }
  const long iterations = argc > 1 ? std::atol(argv[1]) : 20000;
  std::mt19937_64 rng(12345);
  for (const auto& s : seeds) Run(s);
  for (long i = 0; i < iterations; ++i) Run(Mutate(seeds[rng() % seeds.size()], seeds, rng));
  std::printf("%s: %zu seeds and %ld mutations, no crash\n", argv[0], seeds.size(), iterations);
  return 0;
}
