// The child side: load the kernel, seed its inputs, check it, and time it (measurement.h).
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <thread>

#include "rpc_server/measure/arguments.h"
#include "tunefarm/rpc_server/measurement.h"
#include "tunefarm/runtime/kernel_abi.h"
#include "tunefarm/runtime/kernel_library.h"

namespace tunefarm::rpc_server {
namespace {

using Clock = std::chrono::steady_clock;

// Untimed calls after the checked one when no minimum round length asks for a sizing round: until
// kWarmUpMs of kernel time, at least kMinWarmUpCalls and at most kMaxWarmUpCalls.
constexpr int kMinWarmUpCalls = 2, kMaxWarmUpCalls = 10;
constexpr double kWarmUpMs = 10;

double MsSince(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

struct FreeDeleter {
  void operator()(void* p) const { std::free(p); }
};

// Evicts a buffer from the data caches (flush_cache): clflush on x86; elsewhere, streaming through
// a buffer larger than the last-level cache.
void FlushFromCaches(const void* data, size_t bytes) {
#if defined(__x86_64__)
  const char* p = static_cast<const char*>(data);
  for (size_t off = 0; off < bytes; off += 64) __builtin_ia32_clflush(p + off);
  __builtin_ia32_mfence();
#else
  static std::vector<char> scratch(size_t(32) << 20, 1);
  volatile char sink = 0;
  for (size_t i = 0; i < scratch.size(); i += 64) {
    scratch[i] = char(scratch[i] + 1);
    sink = char(sink + scratch[i]);
  }
  (void)data;
  (void)bytes;
#endif
}

}  // namespace

MeasureOutcome MeasureInProcess(const std::string& library_path, const MeasureSpec& spec,
                                const std::string& loaded_marker) {
  if (spec.gpu.enabled) return MeasureCudaInProcess(library_path, spec, loaded_marker);
  MeasureOutcome out;
  out.threads = spec.threads;
  const auto start = Clock::now();
  TunefarmSetNumThreads(spec.threads);
  auto lib = runtime::KernelLibrary::Open(library_path);
  if (!lib.ok()) {
    out.kind = OutcomeKind::kCompile;
    out.message = lib.status().message();
    return out;
  }
  auto fn = (*lib)->Lookup(spec.symbol);
  if (!fn.ok()) {
    out.kind = OutcomeKind::kCompile;
    out.message = "the library exports no kernel '" + spec.symbol + "'";
    return out;
  }
  const double load_ms = MsSince(start);
  if (!loaded_marker.empty()) {
    // Tells the parent that a crash from here on is the kernel's, not the loader's.
    if (FILE* f = std::fopen(loaded_marker.c_str(), "w")) std::fclose(f);
  }
  std::vector<std::unique_ptr<float, FreeDeleter>> buffers;
  std::vector<void*> args;
  ArgumentStream rng(spec.seed);
  for (const ArgSpec& a : spec.args) {
    const size_t n = size_t(a.num_elements());
    void* p = nullptr;
    if (posix_memalign(&p, 64, std::max<size_t>(n * 4, 64)) != 0 || !p) {
      out.kind = OutcomeKind::kRuntimeCrash;
      out.message = "cannot allocate " + std::to_string(n * 4) + " bytes for the arguments (memory limit)";
      return out;
    }
    float* f = static_cast<float*>(p);
    SeedArgument(a, f, rng);
    buffers.emplace_back(f);
    args.push_back(f);
  }
  const TunefarmKernelFn kernel = *fn;
  // Warm-up; its outputs are the ones checked.
  int32_t rc = kernel(args.data());
  if (rc != 0) {
    out.kind = OutcomeKind::kRuntimeCrash;
    out.message = "the kernel returned error code " + std::to_string(rc);
    return out;
  }
  if (!spec.expected_outputs.empty()) {
    std::vector<const float*> outputs;
    for (size_t i = 0; i < spec.args.size(); ++i) {
      if (spec.args[i].role == "output") outputs.push_back(buffers[i].get());
    }
    if (Status wrong = CompareOutputs(spec, outputs); !wrong.ok()) {
      out.kind = OutcomeKind::kWrongAnswer;
      out.message = wrong.message();
      return out;
    }
  }
  const TimingParams& t = spec.timing;
  // One round of `number` calls; ms per call.
  auto round = [&](int number) {
    double total = 0;
    if (t.flush_cache) {
      for (int r = 0; r < number; ++r) {
        for (size_t i = 1; i < args.size(); ++i) FlushFromCaches(args[i], size_t(spec.args[i].num_elements()) * 4);
        auto t0 = Clock::now();
        rc |= kernel(args.data());
        total += MsSince(t0);
      }
    } else {
      auto t0 = Clock::now();
      for (int r = 0; r < number; ++r) rc |= kernel(args.data());
      total = MsSince(t0);
    }
    return total;
  };
  int number = t.number;
  // Grow `number` until one round lasts min_repeat_ms (TVM's rule, with a margin). Without a
  // minimum there is nothing to size, but the calls still warm up what the timed rounds run on: the
  // core's clock (the child has just started) and a kernel's heap workspace (the allocator settles
  // after the first free). Fewer than 10 warm calls read resnet-18's kernels 8% slower on median
  // than its steady state; as much time as 10 calls of a 1 ms kernel does it without paying 10
  // calls of a 5 ms one (bench/RESULTS.md, issue 50).
  double ms = 0;
  if (t.min_repeat_ms > 0) {
    ms = round(number);
  } else {
    double warm_ms = 0;
    for (int calls = 0; calls < kMaxWarmUpCalls && (calls < kMinWarmUpCalls || warm_ms < kWarmUpMs); ++calls) {
      warm_ms += round(1);
    }
  }
  while (ms < t.min_repeat_ms && number < 1000000) {
    number = int(std::min<double>(
        1000000, std::max(number * 2.0, std::ceil(number * t.min_repeat_ms * 1.1 / std::max(ms, 1e-3)))));
    ms = round(number);
  }
  for (int r = 0; r < t.repeat; ++r) {
    if (r > 0 && t.cooldown_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(t.cooldown_ms));
    out.costs_ms.push_back(round(number) / number);
  }
  if (rc != 0) {
    out.kind = OutcomeKind::kRuntimeCrash;
    out.costs_ms.clear();
    out.message = "the kernel returned an error code while being timed";
    return out;
  }
  out.number = number;
  out.load_ms = load_ms;
  out.run_ms = MsSince(start);
  return out;
}

}  // namespace tunefarm::rpc_server
