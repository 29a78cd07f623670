// tunefarm-measure-child DIR: the isolated process rpc_server starts for each kernel. Reads
// DIR/spec.txt, limits its own address space, measures DIR/kernel.so, writes DIR/outcome.txt.
// A crash or a kill leaves no outcome: the parent reports it (measurement.h).
#include <sys/resource.h>

#include <csignal>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "tunefarm/rpc_server/measurement.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: tunefarm-measure-child DIR (started by rpc_server)\n");
    return 2;
  }
  // A kernel that crashes must kill this process with its signal, which the parent reports
  // (RUNTIME_CRASH, signal N): no handler of ours or of a sanitizer runtime may turn it into an exit.
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) std::signal(sig, SIG_DFL);
  const std::string dir = argv[1];
  std::ifstream in(dir + "/spec.txt");
  std::stringstream ss;
  ss << in.rdbuf();
  auto spec = tunefarm::rpc_server::ParseSpec(ss.str());
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
    if (limit_memory) {
      // Before the kernel's library is even loaded: its allocations count against the limit.
      rlimit lim{rlim_t(spec->timing.memory_limit_bytes), rlim_t(spec->timing.memory_limit_bytes)};
      setrlimit(RLIMIT_AS, &lim);
    }
    outcome = tunefarm::rpc_server::MeasureInProcess(dir + "/kernel.so", *spec, dir + "/loaded");
  }
  std::ofstream out(dir + "/outcome.txt", std::ios::trunc);
  out << tunefarm::rpc_server::SerializeOutcome(outcome);
  return out ? 0 : 1;
}
