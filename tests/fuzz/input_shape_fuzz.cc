// Fuzz target: `--input-shape NAME:D0xD1x...` as a user types it (compile, tasks, tune and the
// daemon's job spec): a shape or a Status naming the part that is wrong, and a parsed shape
// prints back to text that parses to the same shape.
#include "fuzz/fuzz_target.h"
#include "tunefarm/compiler/input_shape.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto shape = tunefarm::compiler::ParseInputShape(std::string(reinterpret_cast<const char*>(data), size));
  if (shape.ok()) {
    auto again = tunefarm::compiler::ParseInputShape(shape->ToString());
    if (!again.ok() || again->ToString() != shape->ToString()) __builtin_trap();
  }
  return 0;
}

namespace tunefarm::fuzz {

std::vector<std::string> Seeds() {
  return {"data:1x3x224x224",
          "input_1:0:1x3x4x4",
          "x:-1",
          "x:0",
          "x:9223372036854775808",
          "x:1X3",
          "x:\xef\xbc\x91",
          ":1x2",
          "x:",
          "x:1xx2",
          "a=b:1"};
}

}  // namespace tunefarm::fuzz
