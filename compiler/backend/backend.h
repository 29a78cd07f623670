// A target kind's code path, chosen once per target: BackendFor(target). Whatever differs between a
// CPU (LLVM's x86-64, AArch64 and ARM back ends), a CUDA GPU (NVPTX, then ptxas) and CUDA emulated
// on the host (GPU lowering, host code) is a method here. Outside the backends only the target
// parser and the lowering's ordered step list (passes::Lower: CPU or GPU steps) look at a
// target's kind; adding a kind means a new Backend and nothing else (docs/adding_a_target_kind.md).
//
// Contract: BackendFor never fails (every Target has one of TargetKind's kinds). Backends are
// stateless singletons, safe to use from any thread. Errors are Status values naming the target.
#ifndef TUNEFARM_COMPILER_BACKEND_BACKEND_H_
#define TUNEFARM_COMPILER_BACKEND_BACKEND_H_

#include <memory>
#include <string>
#include <vector>

#include "compiler/codegen/codegen_llvm.h"
#include "tunefarm/compiler/kernel.h"
#include "tunefarm/compiler/target.h"

namespace tunefarm::compiler {

struct LibraryOptions {
  bool toolchain_linker = false;  // link through the toolchain's gcc driver (CompileOptions)
};
struct LibraryStats {
  double codegen_ms = 0, link_ms = 0;  // LLVM; the linker or ptxas
};

class Backend {
 public:
  virtual ~Backend() = default;
  // For messages: "llvm", "cuda", "cuda emulated on the host".
  virtual const char* name() const = 0;

  // ---- lowering
  // Kernels are lowered for a GPU launch: block and thread loops bound, a 0-d result computed as
  // [1], an operator no template covers scheduled by compute::ScheduleGenericGpu.
  virtual bool gpu_kernels() const = 0;
  // Where loop-nest features are read (LoopNestFeatures): before unrolling, and on GPUs before
  // thread binding, while block and thread loops are still loops.
  virtual const char* features_after() const = 0;

  // ---- model plans
  // Whether a model compiled at opt_level plans NCHW[x]c activation layouts between the CPU
  // templates (compile and task extraction ask here, so their tasks agree).
  virtual bool PlansLayouts(int opt_level) const = 0;

  // ---- machine code
  // What the code is generated for and runs on: the target itself, or the host for emulated CUDA.
  virtual Target CodeTarget(const Target& target) const { return target; }
  // The device an artifact of this target runs on (runtime::Artifact::device): "cpu" or "cuda".
  virtual const char* artifact_device() const = 0;
  // A model's kernels as the artifact's library: a shared object, or one PTX module.
  virtual Result<std::string> EmitLibrary(std::vector<KernelSource> sources, const Target& target,
                                          const LibraryOptions& options, LibraryStats* stats) const = 0;
  // Kernels compiled into this process (BuildJit); FailedPrecondition where they cannot run here.
  virtual Result<std::unique_ptr<JitModule>> Jit(const std::vector<KernelSource>& sources,
                                                 const Target& target) const = 0;
  // One tuning candidate as a measurer loads it (BuildCandidate).
  virtual Result<Candidate> BuildCandidate(const KernelSpec& spec, const std::string& tmp_dir,
                                           const BuildOptions& options) const = 0;
};

const Backend& BackendFor(const Target& target);

// The kinds' backends (BackendFor picks one; BuildPtx asks for CudaBackend's targets).
const Backend& CpuBackend();           // TargetKind::kLlvm (cpu_backend.cc)
const Backend& CudaBackend();          // TargetKind::kCuda (cuda_backend.cc)
const Backend& EmulatedCudaBackend();  // TargetKind::kCuda with -emulate=host (cuda_backend.cc)

}  // namespace tunefarm::compiler

#endif  // TUNEFARM_COMPILER_BACKEND_BACKEND_H_
