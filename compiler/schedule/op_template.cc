#include "compiler/schedule/op_template.h"

namespace tunefarm::compiler {

const char* BufferRoleName(BufferRole role) {
  switch (role) {
    case BufferRole::kInput:
      return "input";
    case BufferRole::kWeight:
      return "weight";
    case BufferRole::kBias:
      return "bias";
    case BufferRole::kResidual:
      return "residual";
    case BufferRole::kSlope:
      return "slope";
    case BufferRole::kScale:
      return "scale";
    case BufferRole::kZeroPoint:
      return "zero_point";
    case BufferRole::kCompensation:
      return "compensation";
    case BufferRole::kOutput:
      return "output";
    case BufferRole::kSize:
      return "size";
  }
  return "?";
}

int MaxAccumulators(const Target& t) {
  // Leave room for the weight vectors and the broadcast input.
  if (t.triple.rfind("x86_64", 0) == 0) return t.vector_lanes == 16 ? 28 : 12;
  if (t.triple.rfind("aarch64", 0) == 0) return 24;
  return 12;  // ARMv7 NEON: 16 q registers
}

}  // namespace tunefarm::compiler
