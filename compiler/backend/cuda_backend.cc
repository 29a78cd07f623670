// The CUDA backends: NVPTX kernels checked and assembled by ptxas where it is here, and the same
// GPU lowering emulated on the host (-emulate=host: block and thread loops run as host loops, for
// checking results on a machine without a GPU).
#include <chrono>
#include <map>

#include "compiler/backend/backend.h"
#include "compiler/codegen/codegen_nvptx.h"
#include "compiler/codegen/object_emitter.h"
#include "compiler/compute/ops.h"
#include "tunefarm/runtime/cuda_driver.h"

namespace tunefarm::compiler {

namespace {

double MsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

class NvptxBackend : public Backend {
 public:
  const char* name() const override { return "cuda"; }
  passes::StepList lowering_steps() const override { return passes::StepList::kGpu; }
  const char* features_after() const override { return "simplify_flat"; }
  std::unique_ptr<te::Schedule> GenericSchedule(ir::Tensor* out, const Target& target) const override {
    if ((*out)->shape.empty()) {  // a loop to bind the threads to: [1], the same element of the same buffer
      const ir::Tensor scalar = *out;
      *out = te::Compute(scalar->name, {1}, [&](const std::vector<ir::Expr>&) { return te::Read(scalar, {}); });
    }
    return compute::ScheduleGenericGpu(*out, target);
  }
  bool VerifiesRefusedConfigs() const override { return true; }
  bool RunsBothIfBranches() const override { return true; }
  bool FusesInjectiveChains() const override { return true; }
  // GPU templates read NCHW; no layout planning.
  bool PlansLayouts(int) const override { return false; }
  void DescribeCode(const Target& target, runtime::Artifact* artifact) const override {
    artifact->target = target.ToString();
    artifact->device = "cuda";
  }

  // One PTX module; ptxas (when the toolkit is here) checks every kernel against the register file.
  Result<std::string> EmitLibrary(std::vector<KernelSource> sources, const Target& target, const LibraryOptions&,
                                  LibraryStats* stats) const override {
    auto t0 = std::chrono::steady_clock::now();
    std::map<std::string, int64_t> threads;
    for (const KernelSource& src : sources) threads[src.func.name] = src.func.launch.threads_per_block();
    TUNEFARM_ASSIGN_OR_RETURN(std::string ptx, EmitPtx(sources, target));
    stats->codegen_ms = MsSince(t0);
    t0 = std::chrono::steady_clock::now();
    TUNEFARM_RETURN_IF_ERROR(CheckPtxRegisters(ptx, target, threads).status());
    stats->link_ms = MsSince(t0);
    return ptx;
  }

  Result<std::unique_ptr<JitModule>> Jit(const std::vector<KernelSource>&, const Target&) const override {
    return Status::FailedPrecondition(
        "CUDA kernels run on a GPU: build PTX (BuildPtx) and load it there, or emulate the target (-emulate=host) "
        "to run them on this CPU");
  }

  Result<Candidate> BuildCandidate(const KernelSpec& spec, const std::string&,
                                   const BuildOptions& options) const override {
    // With ptxas here (it checks the registers), the candidate also carries ptxas's cubin for the
    // target's arch: a server with that GPU skips the driver's JIT, a 0.1-1 s serial step per
    // candidate on the GPU host, done here in parallel by the tuner's build jobs.
    Candidate c;
    BuildOptions with_cubin = options;
    with_cubin.cubin = &c.cubin;
    std::vector<KernelInfo> infos;
    TUNEFARM_ASSIGN_OR_RETURN(c.library, BuildPtx({spec}, &infos, with_cubin));
    c.info = infos[0];
    return c;
  }

  // Timing on the GPU does not compete with the host's build jobs.
  bool MeasuresWhileBuilding() const override { return true; }
  // Measured here on this machine's first GPU (rpc_server --device cuda does the same for the farm).
  Status CheckMeasurableHere(const Target& target) const override {
    auto driver = CudaDriver::Load();
    Result<int> count = driver.ok() ? (*driver)->DeviceCount() : Result<int>(driver.status());
    if (count.ok() && *count > 0) return Status::OK();
    return Status::FailedPrecondition(
        "--local with target " + target.ToString() + " measures on this machine's GPU, and " +
        (count.ok() ? std::string("it has none") : count.status().message()) +
        "; measure it through the farm instead (--tracker HOST:PORT --key KEY, rpc_server --device cuda on the GPU "
        "host)");
  }
};

// GPU lowering, host code: what the CPU backend emits, from kernels lowered for a launch.
class HostEmulatedCudaBackend : public NvptxBackend {
 public:
  const char* name() const override { return "cuda emulated on the host"; }
  passes::StepList lowering_steps() const override { return passes::StepList::kGpuOnHost; }
  Target CodeTarget(const Target&) const override { return HostTarget(); }
  void DescribeCode(const Target& target, runtime::Artifact* artifact) const override {
    DescribeHostCode(target, artifact);
  }
  Result<std::string> EmitLibrary(std::vector<KernelSource> sources, const Target&, const LibraryOptions& options,
                                  LibraryStats* stats) const override {
    return CpuBackend().EmitLibrary(std::move(sources), HostTarget(), options, stats);
  }
  Result<std::unique_ptr<JitModule>> Jit(const std::vector<KernelSource>& sources, const Target&) const override {
    return JitCompile(sources, HostTarget());  // the emulated kernels are host loop nests now
  }
  Result<Candidate> BuildCandidate(const KernelSpec& spec, const std::string&, const BuildOptions&) const override {
    return Status::FailedPrecondition("target '" + spec.target.ToString() +
                                      "' emulates CUDA on the host to check results; a tuning candidate is timed on "
                                      "the GPU: tune for the GPU's target (drop -emulate=host)");
  }
  Status CheckMeasurableHere(const Target& target) const override {
    return Status::FailedPrecondition("target '" + target.ToString() +
                                      "' emulates CUDA on the host to check results and is not tuned: tune for the "
                                      "GPU's target (drop -emulate=host)");
  }
};

}  // namespace

const Backend& CudaBackend() {
  static const NvptxBackend backend;
  return backend;
}

const Backend& EmulatedCudaBackend() {
  static const HostEmulatedCudaBackend backend;
  return backend;
}

}  // namespace tunefarm::compiler
