// Building kernels: (workload, epilogue, config, target) -> lowered IR -> machine code.
//
// The entry points every later stage uses: the tuner asks for a config space and builds
// candidates; the model compiler builds the kernels of a graph into one shared library; the bench
// and tests JIT host kernels. A KernelSpec names its config by index in the workload's config
// space (-1: the template's fallback config), so a spec means the same kernel on every machine.
//
// Thread safety: every function here may be called concurrently (each build has its own LLVM
// context); a JitModule's kernels may be called from any thread.
#ifndef TUNEFARM_COMPILER_KERNEL_H_
#define TUNEFARM_COMPILER_KERNEL_H_

#include <atomic>
#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "tunefarm/compiler/config_space.h"
#include "tunefarm/compiler/target.h"
#include "tunefarm/compiler/workload.h"
#include "tunefarm/runtime/kernel_abi.h"
#include "tunefarm/runtime/result.h"

namespace tunefarm::compiler {

struct KernelSpec {
  Workload workload;
  Epilogue epilogue;
  Target target;
  int64_t config_index = -1;  // -1: the fallback config
  std::string symbol;         // exported name; empty: derived from the workload
};

struct KernelBufferInfo {
  std::string name;
  std::string role;  // input, weight, bias, residual, output
  std::vector<int64_t> shape;
  std::string dtype;
  int64_t num_elements() const;
};

// Everything a caller needs to run a kernel it did not build: the kernel's metadata.
struct KernelInfo {
  std::string symbol;
  std::string workload_key;    // Workload::Key(), target-neutral
  std::string implementation;  // the template that computes it
  std::string epilogue;
  std::string target;
  int64_t config_index = 0;
  std::string config_json;
  double flops = 0;
  std::vector<KernelBufferInfo> buffers;  // in argument order
  // GPU kernels (target kind cuda): how to launch them. The kernel's parameters are the buffers'
  // device pointers in argument order.
  bool gpu = false;
  int64_t grid[3] = {1, 1, 1};
  int64_t block[3] = {1, 1, 1};
  int64_t shared_bytes = 0;
  int registers = 0;  // per thread, from ptxas when it ran (0: unknown)
  std::string ToJson() const;
  static Result<KernelInfo> FromJson(const std::string& json);
};

// The config space of a workload on a target; InvalidArgument when the workload is unsupported.
Result<ConfigSpace> GetConfigSpace(const Workload& workload, const Target& target);
// The template's heuristic config (index into GetConfigSpace's space).
Result<int64_t> FallbackConfigIndex(const Workload& workload, const Target& target);
// Whether a config reads and writes activations in the layouts the model compiler plans for
// untuned models (channel blocks chosen from the channel count alone), so using it next to
// untuned neighbours adds no layout transform. ModelLayoutFilter is the same test with the
// workload's blocks computed once (a search's `accept` predicate).
bool KeepsModelLayout(const Workload& workload, const Target& target, const Config& config);
std::function<bool(const Config&)> ModelLayoutFilter(const Workload& workload, const Target& target);
// Whether a config's parallel loop has work for every core (OpTemplate::FeedsEveryCore): the tuner
// proposes no other, since a config that wins at one thread may run on one core of many. Records
// of such configs stay valid and apply (they were tuned before this rule, or by hand).
std::function<bool(const Config&)> ParallelismFilter(const Workload& workload);

struct BuildOptions {
  // Dumps the lowered IR after the named pass ("all": every pass) to *dump.
  std::string dump_after;
  std::ostream* dump = nullptr;
  // When set, receives (pass name, milliseconds) for every lowering pass.
  std::vector<std::pair<std::string, double>>* pass_times = nullptr;
  // Shared libraries are linked with the target toolchain's binutils ld; this links through its
  // gcc driver instead (cc, aarch64-linux-gnu-gcc, arm-linux-gnueabihf-gcc), adding libm.
  bool toolchain_linker = false;
  // Stops lowering after the named pass (LoopNestFeatures; not for building).
  std::string stop_after;
  // BuildPtx: when set and this machine has ptxas (which checks the registers anyway), receives
  // the machine code ptxas assembled for the target's arch, a cubin the GPU's driver loads without
  // JIT-compiling the PTX again; left empty without ptxas. The tuner sends it in place of the PTX.
  std::string* cubin = nullptr;
  // When set, receives where a build's time went (added to what it holds): lowering the loop
  // nests, LLVM's code generation, and the external tool (ptxas for PTX, ld for a shared library).
  // The tuner sums them over its candidates to say what a slow build is waiting for.
  struct Times {
    double lower_ms = 0, codegen_ms = 0, tool_ms = 0;
  };
  Times* times = nullptr;
  // Bounds on the external tool (ptxas, ld): killed after tool_timeout_ms (> 0; a DeadlineExceeded
  // build) or once *cancel is set (a Cancelled one). The tuner's candidate builds set both.
  double tool_timeout_ms = 0;
  const std::atomic<bool>* cancel = nullptr;
};

// Lowers a spec (validating workload, config index and target) and describes it.
Result<KernelInfo> DescribeKernel(const KernelSpec& spec, const BuildOptions& options = {});
// The final lowered loop nest as text.
Result<std::string> LoweredIR(const KernelSpec& spec);

// The tuner's loop-nest features of a spec (compiler/features/loop_nest_features.h): a vector of
// LoopNestFeatureCount() floats, the same length for every kernel; the layout changes only with
// kLoopNestFeatureVersion. About 10x cheaper than a full lowering (it stops before unrolling).
inline constexpr int kLoopNestFeatureVersion = 2;
Result<std::vector<float>> LoopNestFeatures(const KernelSpec& spec);
int LoopNestFeatureCount();

// Kernels compiled into this process (host targets only).
class JitModule {
 public:
  ~JitModule();
  JitModule(const JitModule&) = delete;
  JitModule& operator=(const JitModule&) = delete;
  Result<TunefarmKernelFn> Lookup(const std::string& symbol) const;
  struct Impl;
  explicit JitModule(std::unique_ptr<Impl> impl);

 private:
  std::unique_ptr<Impl> impl_;
};

Result<std::unique_ptr<JitModule>> BuildJit(const std::vector<KernelSpec>& specs, std::vector<KernelInfo>* infos,
                                            const BuildOptions& options = {});
// An ELF object with every spec's kernel, for specs[0].target (all specs must share the target).
Result<std::string> BuildObject(const std::vector<KernelSpec>& specs, std::vector<KernelInfo>* infos,
                                const BuildOptions& options = {});
// PTX assembly with every spec's kernel, for a CUDA target (all specs share it). Kernels are
// `extern "C"` entry points named by their symbols; infos carry their launch dimensions.
Result<std::string> BuildPtx(const std::vector<KernelSpec>& specs, std::vector<KernelInfo>* infos,
                             const BuildOptions& options = {});
// Builds and links a shared library (host cc or the Debian cross toolchain for board targets).
Status BuildSharedLibrary(const std::vector<KernelSpec>& specs, const std::string& path,
                          std::vector<KernelInfo>* infos = nullptr, const BuildOptions& options = {});

// One tuning candidate, as a measurer loads it: a shared library for CPU targets (built in
// tmp_dir, read back and removed); PTX for CUDA, with ptxas's cubin for the target's arch where
// ptxas is here. An emulated CUDA target has no candidate a measurer could time
// (FailedPrecondition). InvalidArgument: the config cannot exist on the target.
struct Candidate {
  std::string library;  // bytes
  std::string cubin;    // CUDA with ptxas here; else empty
  KernelInfo info;
};
Result<Candidate> BuildCandidate(const KernelSpec& spec, const std::string& tmp_dir, const BuildOptions& options = {});

// How the target's candidates are measured, as its backend decides: whether a batch is measured
// as its candidates are built (a GPU's timing does not compete with the host's build jobs) or
// after every build of the batch (CPU timings would).
bool MeasuresWhileBuilding(const Target& target);
// OK where this machine can measure the target's candidates itself (a CPU target that runs here, a
// CUDA target with a GPU here); otherwise FailedPrecondition saying why and how to measure it.
Status CheckMeasurableHere(const Target& target);

}  // namespace tunefarm::compiler

#endif  // TUNEFARM_COMPILER_KERNEL_H_
