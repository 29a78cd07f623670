// Fuzz target: kernel metadata JSON (KernelInfo, what a build reports and a records row keeps) and
// kernel case files (what kernel_check replays on a board).
#include "fuzz/fuzz_target.h"
#include "tunefarm/compiler/kernel.h"
#include "tunefarm/testing/kernel_cases.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  (void)tunefarm::compiler::KernelInfo::FromJson(text);
  (void)tunefarm::runtime::ParseKernelCases(text, "fuzz input");
  return 0;
}

namespace tunefarm::fuzz {

std::vector<std::string> Seeds() {
  // A valid kernel case file: one case "k" with one input buffer of two floats.
  const unsigned char case_file[] = {'T', 'F', 'K', 'C', 1, 0, 0, 0, 1, 0, 0, 0, 1, 0,   0,  0, 'k', 1, 0,
                                     0,   0,   0,   2,   0, 0, 0, 0, 0, 0, 0, 0, 0, 128, 63, 0, 0,   0, 64};
  return {R"({"symbol":"k","buffers":[{"name":"a","role":"input","shape":[1,2],"dtype":"float32"}],"flops":2})",
          R"({"symbol":"k","buffers":[],"flops":"2"})",  // a mistyped field (used to throw)
          R"({"symbol":"k","buffers":[{"name":"a","shape":[-1]}]})",
          std::string(reinterpret_cast<const char*>(case_file), sizeof(case_file))};
}

}  // namespace tunefarm::fuzz
