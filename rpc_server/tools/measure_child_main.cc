// tunefarm-measure-child DIR: the isolated process rpc_server starts for each kernel. Reads
// DIR/spec.pb, limits its own address space, measures DIR/kernel.so, writes DIR/outcome.pb.
// A crash or a kill leaves no outcome: the parent reports it (measurement.h).
// tunefarm-measure-child --check: prints that it is ready (rpc_server's start check).
// tunefarm-measure-child --worker: the same for one work directory per line read on fd 3,
// answering "done" on fd 4 after each (MeasureWorker); exits after a CUDA error that poisons its
// context.
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>

#include "tunefarm/rpc_server/measurement.h"
#include "tunefarm/runtime/atomic_file.h"
#include "tunefarm/runtime/cuda_device.h"

namespace {

// Measures the kernel of one work directory into DIR/outcome.pb; false when it could not be
// written. *outcome_out receives the outcome.
bool MeasureDir(const std::string& dir, bool* limited, tunefarm::rpc_server::MeasureOutcome* outcome_out) {
  // A spec that cannot be read is an empty one: ParseSpec names what is missing.
  auto spec = tunefarm::rpc_server::ParseSpec(tunefarm::ReadFile(dir + "/spec.pb").value_or(""));
  tunefarm::rpc_server::MeasureOutcome outcome;
  if (!spec.ok()) {
    outcome.kind = tunefarm::rpc_server::OutcomeKind::kBadRequest;
    outcome.message = spec.status().message();
  } else {
#if defined(__SANITIZE_ADDRESS__)
    // An ASan build reserves terabytes of shadow memory up front: an address-space limit would
    // make every later allocation fail, so sanitizer builds (tests only) measure without it.
    const bool limit_memory = false;
#else
    // The CUDA driver reserves far more address space than it uses: GPU children run unlimited
    // (device memory is the GPU's, bounded by the card).
    const bool limit_memory = spec->timing.memory_limit_bytes > 0 && !spec->gpu.enabled;
#endif
    if (limit_memory && !*limited) {
      // Before the kernel's library is even loaded: its allocations count against the limit.
      rlimit lim{rlim_t(spec->timing.memory_limit_bytes), rlim_t(spec->timing.memory_limit_bytes)};
      setrlimit(RLIMIT_AS, &lim);
      *limited = true;
    }
    double warmup_ms = 0;
    if (spec->gpu.enabled) {
      // A fresh one-shot child opens the GPU first and says so (device_ready holds the time it
      // took): the parent starts the kernel's timeout only then (isolated_runner.cc). In a worker the
      // device is open already ("warm N") and this costs nothing.
      const auto start = std::chrono::steady_clock::now();
      tunefarm::rpc_server::WarmUpCudaDevice(spec->gpu.ordinal);
      warmup_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
      std::ofstream(dir + "/device_ready") << warmup_ms << "\n";
    }
    outcome = tunefarm::rpc_server::MeasureInProcess(dir + "/kernel.so", *spec, dir + "/loaded");
    outcome.device_warmup_ms = warmup_ms;
  }
  std::ofstream out(dir + "/outcome.pb", std::ios::binary | std::ios::trunc);
  out << tunefarm::rpc_server::SerializeOutcome(outcome);
  *outcome_out = outcome;
  return bool(out);
}

int ServeRequests() {
  FILE* requests = fdopen(3, "r");
  if (!requests) {
    std::fprintf(stderr, "tunefarm-measure-child --worker: no request pipe on fd 3 (started by rpc_server)\n");
    return 2;
  }
  bool limited = false;
  char line[4096];
  while (std::fgets(line, sizeof(line), requests)) {
    std::string dir(line);
    while (!dir.empty() && (dir.back() == '\n' || dir.back() == '\r')) dir.pop_back();
    if (dir.rfind("warm ", 0) == 0) {  // open the GPU now, before any kernel's clock starts
      tunefarm::rpc_server::WarmUpCudaDevice(std::atoi(dir.c_str() + 5));
      if (write(4, "ready\n", 6) != 6) return 1;
      continue;
    }
    tunefarm::rpc_server::MeasureOutcome outcome;
    MeasureDir(dir, &limited, &outcome);
    if (write(4, "done\n", 5) != 5) return 1;
    // An illegal address poisons the CUDA context: this process cannot measure again.
    if (tunefarm::IsStickyCudaError(tunefarm::Status::Internal(outcome.message))) return 3;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: tunefarm-measure-child DIR | --worker | --check (started by rpc_server)\n");
    return 2;
  }
  if (std::string(argv[1]) == "--check") {
    std::printf("%s\n", tunefarm::rpc_server::kMeasureChildReady);
    return 0;
  }
  // A kernel that crashes must kill this process with its signal, which the parent reports
  // (RUNTIME_CRASH, signal N): no handler of ours or of a sanitizer runtime may turn it into an exit.
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) std::signal(sig, SIG_DFL);
  if (std::string(argv[1]) == "--worker") return ServeRequests();
  bool limited = false;
  tunefarm::rpc_server::MeasureOutcome outcome;
  return MeasureDir(argv[1], &limited, &outcome) ? 0 : 1;
}
