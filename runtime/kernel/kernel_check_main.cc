// kernel_check LIBRARY CASES [--tolerance T] [--threads N]
// Runs every case of a kernel case file against a kernel library and prints one line per failure
// and a summary "kernel_check: P/N passed". Exit status 0 only when all pass.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "tunefarm/command_line/command_line.h"
#include "tunefarm/runtime/kernel_library.h"
#include "tunefarm/testing/kernel_cases.h"

int main(int argc, char** argv) {
  std::string library, case_file;
  double tolerance = 1e-4;
  int threads = 1;
  CLI::App app{
      "kernel_check: runs every case of a kernel case file against a kernel library; exit 0 only when all pass",
      "kernel_check"};
  app.add_option("LIBRARY", library, "the kernel library (.so)")->required();
  app.add_option("CASES", case_file, "the kernel case file (inputs and expected outputs)")->required();
  app.add_option("--tolerance", tolerance, "largest relative error accepted (default 1e-4)")
      ->check(CLI::PositiveNumber);
  tunefarm::AddIntFlag(app, "--threads", &threads, 1, 1024, "threads the kernels run on (default 1)");
  if (auto exit_code = tunefarm::ParseCommandLine(app, argc, argv)) return *exit_code;
  TunefarmSetNumThreads(threads);
  auto lib = tunefarm::runtime::KernelLibrary::Open(library);
  if (!lib.ok()) {
    std::fprintf(stderr, "kernel_check: %s\n", lib.status().ToString().c_str());
    return 1;
  }
  auto cases = tunefarm::runtime::ReadKernelCases(case_file);
  if (!cases.ok()) {
    std::fprintf(stderr, "kernel_check: %s\n", cases.status().ToString().c_str());
    return 1;
  }
  int passed = 0;
  for (auto& c : *cases) {
    auto fn = (*lib)->Lookup(c.kernel_name);
    if (!fn.ok()) {
      std::printf("FAIL %s: %s\n", c.kernel_name.c_str(), fn.status().ToString().c_str());
      continue;
    }
    std::vector<std::vector<float>> args;
    std::vector<void*> ptrs;
    args.reserve(c.buffers.size());
    ptrs.reserve(c.buffers.size());
    for (auto& b : c.buffers) {
      args.push_back(b.is_output ? std::vector<float>(b.data.size(), -12345.0f) : b.data);
    }
    for (auto& a : args) ptrs.push_back(a.data());
    int rc = (*fn)(ptrs.data());
    double worst = 0;
    for (size_t i = 0; i < c.buffers.size(); ++i) {
      if (c.buffers[i].is_output) {
        double e = tunefarm::runtime::MaxRelativeError(args[i], c.buffers[i].data);
        if (e > worst) worst = e;
      }
    }
    if (rc == 0 && worst <= tolerance) {
      ++passed;
    } else {
      std::printf("FAIL %s: rc=%d max relative error %.3g\n", c.kernel_name.c_str(), rc, worst);
    }
  }
  std::printf("kernel_check: %d/%zu passed\n", passed, cases->size());
  return passed == int(cases->size()) ? 0 : 1;
}
