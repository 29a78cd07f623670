// The CPU backend: LLVM's x86-64, AArch64 and ARM back ends; shared libraries linked with the
// host's or the Debian cross toolchain's binutils.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <thread>

#include "compiler/backend/backend.h"
#include "compiler/codegen/object_emitter.h"
#include "compiler/compute/ops.h"
#include "tunefarm/runtime/atomic_file.h"

namespace tunefarm::compiler {
namespace {

double MsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

class LlvmCpuBackend : public Backend {
 public:
  const char* name() const override { return "llvm"; }
  passes::StepList lowering_steps() const override { return passes::StepList::kCpu; }
  const char* features_after() const override { return "partition_loops"; }
  std::unique_ptr<te::Schedule> GenericSchedule(ir::Tensor* out, const Target& target) const override {
    return compute::ScheduleGeneric({*out}, target);
  }
  bool VerifiesRefusedConfigs() const override { return false; }
  bool RunsBothIfBranches() const override { return false; }
  bool FusesInjectiveChains() const override { return false; }
  bool PlansLayouts(int opt_level) const override { return opt_level >= 3; }
  void DescribeCode(const Target& target, runtime::Artifact* artifact) const override {
    DescribeHostCode(target, artifact);
  }

  // The kernels split across the machine's cores (each LLVM context is independent), one object
  // each, linked into one shared library.
  Result<std::string> EmitLibrary(std::vector<KernelSource> sources, const Target& target,
                                  const LibraryOptions& options, LibraryStats* stats) const override {
    auto t0 = std::chrono::steady_clock::now();
    const size_t parts =
        std::min<size_t>(sources.size(), std::max(1u, std::min(4u, std::thread::hardware_concurrency())));
    std::vector<std::vector<KernelSource>> chunks(parts);
    for (size_t i = 0; i < sources.size(); ++i) chunks[i % parts].push_back(std::move(sources[i]));
    std::vector<Result<std::string>> objects(parts, Status::Internal("not built"));
    std::vector<std::thread> workers;
    for (size_t p = 0; p < parts; ++p) {
      workers.emplace_back([&, p] { objects[p] = EmitObject(chunks[p], target); });
    }
    for (auto& w : workers) w.join();
    stats->codegen_ms = MsSince(t0);

    t0 = std::chrono::steady_clock::now();
    static std::atomic<int> counter{0};
    const char* tmpdir = std::getenv("TMPDIR");
    const std::string base = std::string(tmpdir ? tmpdir : "/tmp") + "/tunefarm-compile-" + std::to_string(getpid()) +
                             "-" + std::to_string(counter++);
    std::vector<std::string> paths;
    Status status = Status::OK();
    for (size_t p = 0; p < parts && status.ok(); ++p) {
      if (!objects[p].ok()) {
        status = objects[p].status();
        break;
      }
      paths.push_back(base + "-" + std::to_string(p) + ".o");
      std::ofstream out(paths.back(), std::ios::binary);
      out.write(objects[p]->data(), std::streamsize(objects[p]->size()));
      if (!out) status = Status::IOError("cannot write " + paths.back());
    }
    const std::string so_path = base + ".so";
    if (status.ok()) status = LinkSharedLibrary(paths, target, so_path, options.toolchain_linker);
    Result<std::string> library = status.ok() ? ReadFile(so_path) : Result<std::string>(status);
    for (const auto& p : paths) std::remove(p.c_str());
    std::remove(so_path.c_str());
    stats->link_ms = MsSince(t0);
    return library;
  }

  Result<std::unique_ptr<JitModule>> Jit(const std::vector<KernelSource>& sources,
                                         const Target& target) const override {
    return JitCompile(sources, target);
  }

  Result<Candidate> BuildCandidate(const KernelSpec& spec, const std::string& tmp_dir,
                                   const BuildOptions& options) const override {
    static std::atomic<int> counter{0};
    const std::string path =
        tmp_dir + "/tunefarm-cand-" + std::to_string(getpid()) + "-" + std::to_string(counter++) + ".so";
    std::vector<KernelInfo> infos;
    Status s = BuildSharedLibrary({spec}, path, &infos, options);
    Result<std::string> bytes = s.ok() ? ReadFile(path) : Result<std::string>(s);
    std::remove(path.c_str());
    TUNEFARM_RETURN_IF_ERROR(bytes.status());
    return Candidate{std::move(*bytes), "", infos[0]};
  }

  bool MeasuresWhileBuilding() const override { return false; }
  Status CheckMeasurableHere(const Target& target) const override {
    if (target.is_host) return Status::OK();
    return Status::FailedPrecondition("target " + target.ToString() +
                                      " does not run on this machine; measure it through the farm (--tracker "
                                      "HOST:PORT --key KEY)");
  }
};

}  // namespace

void DescribeHostCode(const Target& target, runtime::Artifact* artifact) {
  artifact->target = target.ToString();
  artifact->device = "cpu";
  artifact->triple = target.triple;
  artifact->cpu = target.cpu;
  artifact->cpu_features = RequiredCpuFeatures(target);
}

const Backend& CpuBackend() {
  static const LlvmCpuBackend backend;
  return backend;
}

}  // namespace tunefarm::compiler
