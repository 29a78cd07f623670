// A target kind's code path, chosen once per target: BackendFor(target). Whatever differs between a
// CPU (LLVM's x86-64, AArch64 and ARM back ends), a CUDA GPU (NVPTX, then ptxas) and CUDA emulated
// on the host (GPU lowering, host code) is a decision here, a method named for what it decides
// (which lowering steps, which generic schedule, whether an If's branches both run...), never a
// "is this a GPU" flag for callers to branch on. Outside the backends only the target parser looks
// at a target's kind (Backend.NothingElseAsksATargetItsKind scans compiler/, tuner/ and tools/);
// docs/adding_a_target_kind.md lists what a new kind touches.
//
// Contract: BackendFor never fails (every Target has one of TargetKind's kinds). Backends are
// stateless singletons, safe to use from any thread. Errors are Status values naming the target.
#ifndef TUNEFARM_COMPILER_BACKEND_BACKEND_H_
#define TUNEFARM_COMPILER_BACKEND_BACKEND_H_

#include <memory>
#include <string>
#include <vector>

#include "compiler/codegen/codegen_llvm.h"
#include "compiler/passes/lower.h"
#include "compiler/te/schedule.h"
#include "tunefarm/compiler/kernel.h"
#include "tunefarm/compiler/target.h"
#include "tunefarm/runtime/artifact.h"

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
  // The kernels' lowering steps (passes::Lower): a host loop nest, a GPU thread program, or one
  // emulated on the host.
  virtual passes::StepList lowering_steps() const = 0;
  // Where loop-nest features are read (LoopNestFeatures), a step of lowering_steps(): before
  // unrolling, and on GPUs before thread binding, while block and thread loops are still loops.
  virtual const char* features_after() const = 0;
  // The schedule of an operator no template covers (compute::ScheduleGeneric on CPUs,
  // ScheduleGenericGpu on GPUs). May replace *out: a GPU computes a 0-d result as [1], a loop to
  // bind its threads to (the same single element of the same buffer).
  virtual std::unique_ptr<te::Schedule> GenericSchedule(ir::Tensor* out, const Target& target) const = 0;
  // Whether a config its space's filter refuses is still lowered, for the launch verifier to name
  // the limit it breaks (GPUs); otherwise the filter's refusal is the error.
  virtual bool VerifiesRefusedConfigs() const = 0;

  // ---- model lowering
  // Whether a runtime If runs both branches, its kernels selecting by the condition (GPUs: reading
  // the condition would cost a device sync and break graph replay), rather than guarding each
  // branch's kernels so only the taken one runs.
  virtual bool RunsBothIfBranches() const = 0;
  // Whether chains of injective kernels become one kernel (GPUs: a launch costs more than the
  // memory traffic of a small element-wise kernel).
  virtual bool FusesInjectiveChains() const = 0;

  // ---- model plans
  // Whether a model compiled at opt_level plans NCHW[x]c activation layouts between the CPU
  // templates (compile and task extraction ask here, so their tasks agree).
  virtual bool PlansLayouts(int opt_level) const = 0;

  // ---- machine code
  // What the code is generated for and runs on: the target itself, or the host for emulated CUDA.
  virtual Target CodeTarget(const Target& target) const { return target; }
  // Writes what an artifact says of its code (runtime::Artifact's target, device and, for host
  // code, the triple, CPU and the CPU features it needs).
  virtual void DescribeCode(const Target& target, runtime::Artifact* artifact) const = 0;
  // A model's kernels as the artifact's library: a shared object, or one PTX module.
  virtual Result<std::string> EmitLibrary(std::vector<KernelSource> sources, const Target& target,
                                          const LibraryOptions& options, LibraryStats* stats) const = 0;
  // Kernels compiled into this process (BuildJit); FailedPrecondition where they cannot run here.
  virtual Result<std::unique_ptr<JitModule>> Jit(const std::vector<KernelSource>& sources,
                                                 const Target& target) const = 0;
  // One tuning candidate as a measurer loads it (BuildCandidate).
  virtual Result<Candidate> BuildCandidate(const KernelSpec& spec, const std::string& tmp_dir,
                                           const BuildOptions& options) const = 0;

  // ---- measurement (MeasuresWhileBuilding and CheckMeasurableHere of tunefarm/compiler/kernel.h)
  // Whether the tuner measures a batch's candidates as they are built (a GPU's timing does not
  // compete with the host's build jobs) rather than after every build of the batch (CPU timings).
  virtual bool MeasuresWhileBuilding() const = 0;
  // OK where this machine can measure the target itself; else why, and how to measure it instead.
  virtual Status CheckMeasurableHere(const Target& target) const = 0;
};

const Backend& BackendFor(const Target& target);
// DescribeCode for host code (the CPU backend's, and emulated CUDA's).
void DescribeHostCode(const Target& target, runtime::Artifact* artifact);

// The kinds' backends (BackendFor picks one; BuildPtx asks for CudaBackend's targets).
const Backend& CpuBackend();           // TargetKind::kLlvm (cpu_backend.cc)
const Backend& CudaBackend();          // TargetKind::kCuda (cuda_backend.cc)
const Backend& EmulatedCudaBackend();  // TargetKind::kCuda with -emulate=host (cuda_backend.cc)

}  // namespace tunefarm::compiler

#endif  // TUNEFARM_COMPILER_BACKEND_BACKEND_H_
