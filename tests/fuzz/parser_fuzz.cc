// Fuzz target for tunefarm's text and binary parsers of user input: target strings, workload keys,
// config JSON, kernel metadata JSON and kernel case files. None may crash, hang or trip a
// sanitizer on any input; each either parses or returns a Status.
//
// libFuzzer:  clang++ -fsanitize=fuzzer,address ... (see tests/fuzz/README.md)
// Always:     tests/fuzz/standalone_driver.cc runs it on mutated seeds in CTest (ASan build too).
#include <cstddef>
#include <cstdint>
#include <string>

#include "tunefarm/compiler/config_space.h"
#include "tunefarm/compiler/kernel.h"
#include "tunefarm/compiler/target.h"
#include "tunefarm/compiler/workload.h"
#include "tunefarm/testing/kernel_cases.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace tc = tunefarm::compiler;
  std::string text(reinterpret_cast<const char*>(data), size);
  (void)tc::ParseTarget(text);
  auto workload = tc::Workload::FromKey(text);
  if (workload.ok()) {
    // A parsed key must describe a workload the templates either accept or reject cleanly.
    static const tc::Target host = tc::HostTarget();
    auto space = tc::GetConfigSpace(*workload, host);
    (void)space;
  }
  static tc::ConfigSpace space = [] {
    tc::ConfigSpace s("fuzz");
    s.DefineSplit("tile", 12, 2, tc::SplitPolicy::kVerbose);
    s.DefineAnnotate("ann", {"a", "b"});
    s.DefineOther("o", {1, 2, 3});
    return s;
  }();
  (void)space.FromJson(text);
  (void)tc::KernelInfo::FromJson(text);

  (void)tunefarm::runtime::ParseKernelCases(text, "fuzz input");
  return 0;
}
