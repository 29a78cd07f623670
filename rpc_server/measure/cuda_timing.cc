// The child side of a CUDA measurement (measurement.h, MeasureCudaInProcess).
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <thread>

#include "rpc_server/measure/arguments.h"
#include "tunefarm/rpc_server/measurement.h"
#include "tunefarm/runtime/atomic_file.h"
#include "tunefarm/runtime/cuda_device.h"

namespace tunefarm::rpc_server {
namespace {

using Clock = std::chrono::steady_clock;

MeasureOutcome Fail(OutcomeKind kind, const std::string& message) {
  MeasureOutcome o;
  o.kind = kind;
  o.message = message;
  return o;
}

// A launch failure as an outcome: out of resources is the config's fault (never measurable);
// anything else is a crash of this kernel.
MeasureOutcome LaunchFailure(const Status& s) {
  const bool resources = s.message().find("CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES") != std::string::npos;
  return Fail(resources ? OutcomeKind::kInstantiation : OutcomeKind::kRuntimeCrash, s.message());
}

// The device, opened once per process and kept: a worker measuring many kernels keeps its CUDA
// context (creating one costs 0.1-0.3 s) -- until an error poisons it and the process is replaced.
Result<CudaDevice*> SharedDevice(int ordinal) {
  static std::map<int, std::unique_ptr<CudaDevice>> devices;
  auto it = devices.find(ordinal);
  if (it != devices.end()) return it->second.get();
  TUNEFARM_ASSIGN_OR_RETURN(auto device, CudaDevice::Open(ordinal));
  CudaDevice* raw = device.get();
  devices.emplace(ordinal, std::move(device));
  return raw;
}

}  // namespace

void WarmUpCudaDevice(int ordinal) { (void)SharedDevice(ordinal); }

MeasureOutcome MeasureCudaInProcess(const std::string& ptx_path, const MeasureSpec& spec,
                                    const std::string& loaded_marker) {
  const auto start = Clock::now();
  auto ptx = ReadFile(ptx_path);
  if (!ptx.ok()) return Fail(OutcomeKind::kCompile, ptx.status().message());
  auto device = SharedDevice(spec.gpu.ordinal);
  if (!device.ok()) return Fail(OutcomeKind::kRuntimeCrash, "cannot open the GPU: " + device.status().message());
  CudaDevice& gpu = **device;
  auto module = gpu.LoadPtx(*ptx, spec.symbol);
  if (!module.ok()) return Fail(OutcomeKind::kCompile, module.status().message());
  auto kernel = (*module)->Kernel(spec.symbol);
  if (!kernel.ok()) return Fail(OutcomeKind::kCompile, kernel.status().message());
  CudaLaunchDims dims;
  for (int d = 0; d < 3; ++d) {
    dims.grid[size_t(d)] = unsigned(spec.gpu.grid[d]);
    dims.block[size_t(d)] = unsigned(spec.gpu.block[d]);
  }
  // TVM never checks registers: its users' launches fail. Here it is an instantiation error.
  if (Status s = gpu.CheckLaunch(*kernel, dims); !s.ok()) return Fail(OutcomeKind::kInstantiation, s.message());
  const double load_ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  if (!loaded_marker.empty()) {
    if (FILE* f = std::fopen(loaded_marker.c_str(), "w")) std::fclose(f);
  }

  ArgumentStream rng(spec.seed);
  std::vector<std::vector<float>> host;
  std::vector<CudaBuffer> buffers;
  std::vector<CudaDevicePtr> args;
  for (const ArgSpec& a : spec.args) {
    host.emplace_back(size_t(a.num_elements()));
    SeedArgument(a, host.back().data(), rng);
    auto buffer = gpu.Alloc(host.back().size() * 4);
    if (!buffer.ok()) return Fail(OutcomeKind::kRuntimeCrash, buffer.status().message());
    if (Status s = gpu.Upload(*buffer, host.back().data(), host.back().size() * 4); !s.ok()) {
      return Fail(OutcomeKind::kRuntimeCrash, s.message());
    }
    args.push_back(buffer->ptr());
    buffers.push_back(std::move(*buffer));
  }
  // Warm-up (its outputs are the ones checked). An illegal address surfaces at the synchronize.
  Status warm = gpu.Synchronize("uploads");
  if (warm.ok()) warm = gpu.Launch(*kernel, dims, args);
  if (warm.ok()) warm = gpu.Synchronize(spec.symbol);
  if (!warm.ok()) return LaunchFailure(warm);
  if (!spec.expected_outputs.empty()) {
    std::vector<const float*> outputs;
    for (size_t i = 0; i < spec.args.size(); ++i) {
      if (spec.args[i].role != "output") continue;
      if (Status s = gpu.Download(host[i].data(), buffers[i], host[i].size() * 4); !s.ok()) {
        return Fail(OutcomeKind::kRuntimeCrash, s.message());
      }
      outputs.push_back(host[i].data());
    }
    if (Status wrong = CompareOutputs(spec, outputs); !wrong.ok())
      return Fail(OutcomeKind::kWrongAnswer, wrong.message());
  }

  CudaBuffer scratch;
  if (spec.timing.flush_cache) {
    auto s = gpu.Alloc(size_t(std::max(gpu.info().l2_cache_bytes, 1 << 20)) * 2);
    if (!s.ok()) return Fail(OutcomeKind::kRuntimeCrash, s.status().message());
    scratch = std::move(*s);
  }
  const TimingParams& t = spec.timing;
  auto round = [&](int number) -> Result<double> {
    return gpu.TimeLaunches(*kernel, dims, args, number, spec.timing.flush_cache ? &scratch : nullptr);
  };
  MeasureOutcome out;
  // The sizing round starts from one launch, not `number`: a candidate whose launch takes a second
  // costs one second here instead of `number` (and its timeout) before the growth rule sizes it.
  int number = t.min_repeat_ms > 0 ? 1 : t.number;
  Result<double> per_launch = round(number);
  // That one launch (after the warm-up, so warm as the timed ones) sizes the rounds to last
  // min_repeat_ms: no second sizing round, which cost as much as a timed one. A launch between two
  // events reads a little long, so a round can fall short of min_repeat_ms, never far.
  if (per_launch.ok() && *per_launch < t.min_repeat_ms) {
    number = int(std::min<double>(1000000, std::ceil(t.min_repeat_ms * 1.1 / std::max(*per_launch, 1e-4))));
  }
  for (int r = 0; r < t.repeat && per_launch.ok(); ++r) {
    if (r > 0 && t.cooldown_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(t.cooldown_ms));
    per_launch = round(number);
    if (per_launch.ok()) out.costs_ms.push_back(*per_launch);
  }
  if (!per_launch.ok()) return LaunchFailure(per_launch.status());
  out.number = number;
  out.threads = 1;
  out.load_ms = load_ms;
  out.run_ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  return out;
}

}  // namespace tunefarm::rpc_server
