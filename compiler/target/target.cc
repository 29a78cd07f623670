// The Target value's own methods (no LLVM: the kernel IR and schedules use targets too);
// parsing and host detection, which ask LLVM, are in target_parser.cc.
#include "tunefarm/compiler/target.h"

namespace tunefarm::compiler {

const char* TargetKindName(TargetKind kind) {
  switch (kind) {
    case TargetKind::kLlvm:
      return "llvm";
    case TargetKind::kCuda:
      return "cuda";
  }
  return "llvm";
}

bool Target::is_arm() const {
  // LLVM's isARM() || isAArch64() on a normalized triple: arm*, thumb*, aarch64*.
  for (const char* prefix : {"arm", "thumb", "aarch64"}) {
    if (triple.rfind(prefix, 0) == 0) return true;
  }
  return false;
}

std::string Target::ToString() const {
  if (kind == TargetKind::kCuda) {
    return "cuda -arch=" + arch + (model.empty() ? "" : " -model=" + model) + (emulated ? " -emulate=host" : "");
  }
  std::string s = "llvm -mtriple=" + triple + " -mcpu=" + cpu;
  if (!features.empty() && !detected_features) s += " -mattr=" + features;
  if (!model.empty()) s += " -model=" + model;
  return s;
}

}  // namespace tunefarm::compiler
