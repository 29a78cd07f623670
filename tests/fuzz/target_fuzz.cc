// Fuzz target: target strings, workload keys and config JSON -- the text a user types or a
// records database hands back. Each parses or returns a Status; a parsed key's config space is
// built or refused cleanly.
#include "fuzz/fuzz_target.h"
#include "tunefarm/compiler/config_space.h"
#include "tunefarm/compiler/kernel.h"
#include "tunefarm/compiler/target.h"
#include "tunefarm/compiler/workload.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace tc = tunefarm::compiler;
  const std::string text(reinterpret_cast<const char*>(data), size);
  (void)tc::ParseTarget(text);
  auto workload = tc::Workload::FromKey(text);
  if (workload.ok()) {
    static const tc::Target host = tc::HostTarget();
    (void)tc::GetConfigSpace(*workload, host);
  }
  static tc::ConfigSpace space = [] {
    tc::ConfigSpace s("fuzz");
    s.DefineSplit("tile", 12, 2, tc::SplitPolicy::kVerbose);
    s.DefineAnnotate("ann", {"a", "b"});
    s.DefineOther("o", {1, 2, 3});
    return s;
  }();
  (void)space.FromJson(text);
  return 0;
}

namespace tunefarm::fuzz {

std::vector<std::string> Seeds() {
  return {"native",
          "llvm -mtriple=aarch64-linux-gnu -mcpu=cortex-a72 -mattr=+neon",
          "rasp3b",
          "cuda -arch=sm_90",
          "llvm -mcpu=skylake-avx512 -mattr=+avx512f,-avx2 -model=x -keys=cpu",
          "llvm -model=caf\xe9",                   // Latin-1 model name (used to abort in JSON)
          "llvm -mtriple=x86_64-pc-windows-msvc",  // a triple the runtime can never load
          "llvm -mtriple=aarch64-linux-gnu",       // a cross triple without -mcpu
          "conv2d|N1_C64_H56_W56|K64_R3x3_S1x1_P1_1_1_1_D1x1_G1|NCHW|float32",
          "conv2d|N1_C1_H4_W4|K1_R1x1_S1x1_P1099511627776_0_0_0_D1x1_G1|NCHW|float32",  // pads 2^40
          "conv2d|N1_C8_H9_W9|K8_R3x3_S2x2_P1_1_1_1_D1x1_G8|NCHW|float32",
          "dense|N1_I512|O1000|NC|float32",
          R"({"index":3,"knobs":{"tile":[3,4],"ann":"b","o":[2]}})"};
}

}  // namespace tunefarm::fuzz
