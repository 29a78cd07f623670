// What every fuzz target in this directory defines: libFuzzer's entry point, and the seeds its
// corpus starts from -- the hostile inputs of issue 15 among them. fuzz_main.cc runs a target
// without libFuzzer (the CTest smoke run); with libFuzzer, `NAME_smoke --write-seeds DIR` writes
// the seeds as the starting corpus (tests/fuzz/README.md).
#ifndef TUNEFARM_TESTS_FUZZ_FUZZ_TARGET_H_
#define TUNEFARM_TESTS_FUZZ_FUZZ_TARGET_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace tunefarm::fuzz {

std::vector<std::string> Seeds();

}  // namespace tunefarm::fuzz

#endif  // TUNEFARM_TESTS_FUZZ_FUZZ_TARGET_H_
