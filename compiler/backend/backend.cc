// BackendFor: the one place a target's kind picks its code path (backend.h).
#include "compiler/backend/backend.h"

namespace tunefarm::compiler {

const Backend& BackendFor(const Target& target) {
  switch (target.kind) {
    case TargetKind::kLlvm:
      return CpuBackend();
    case TargetKind::kCuda:
      return target.emulated ? EmulatedCudaBackend() : CudaBackend();
  }
  return CpuBackend();
}

}  // namespace tunefarm::compiler
