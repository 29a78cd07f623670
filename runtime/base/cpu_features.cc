#include "tunefarm/runtime/cpu_features.h"

#include <algorithm>
#include <cstdint>

#if defined(__x86_64__)
#include <cpuid.h>
#elif defined(__aarch64__) || defined(__arm__)
#include <sys/auxv.h>
#endif

namespace tunefarm::runtime {
namespace {

// One row per detectable feature. x86: the CPUID leaf/subleaf, register (0 eax .. 3 edx) and bit;
// ARM: the AT_HWCAP bit (Linux's asm/hwcap.h). Names are LLVM's, as the compiler enables them.
struct FeatureProbe {
  CpuArch arch;
  const char* name;
  unsigned leaf, subleaf, reg, bit;
};

constexpr FeatureProbe kProbes[] = {
    {CpuArch::kX86_64, "sse4.1", 1, 0, 2, 19},
    {CpuArch::kX86_64, "sse4.2", 1, 0, 2, 20},
    {CpuArch::kX86_64, "fma", 1, 0, 2, 12},
    {CpuArch::kX86_64, "avx", 1, 0, 2, 28},
    {CpuArch::kX86_64, "f16c", 1, 0, 2, 29},
    {CpuArch::kX86_64, "avx2", 7, 0, 1, 5},
    {CpuArch::kX86_64, "avx512f", 7, 0, 1, 16},
    {CpuArch::kX86_64, "avx512dq", 7, 0, 1, 17},
    {CpuArch::kX86_64, "avx512cd", 7, 0, 1, 28},
    {CpuArch::kX86_64, "avx512bw", 7, 0, 1, 30},
    {CpuArch::kX86_64, "avx512vl", 7, 0, 1, 31},
    {CpuArch::kX86_64, "avx512vnni", 7, 0, 2, 11},
    {CpuArch::kX86_64, "avx512fp16", 7, 0, 3, 23},
    {CpuArch::kX86_64, "avxvnni", 7, 1, 0, 4},
    {CpuArch::kX86_64, "avx512bf16", 7, 1, 0, 5},
    // AArch64 (AT_HWCAP): asimd 1, crc32 7, asimdhp 10, asimddp 20, sve 22.
    {CpuArch::kAArch64, "neon", 0, 0, 0, 1},
    {CpuArch::kAArch64, "crc", 0, 0, 0, 7},
    {CpuArch::kAArch64, "fullfp16", 0, 0, 0, 10},
    {CpuArch::kAArch64, "dotprod", 0, 0, 0, 20},
    {CpuArch::kAArch64, "sve", 0, 0, 0, 22},
    // 32-bit ARM (AT_HWCAP): neon 12, vfpv4 16.
    {CpuArch::kArm, "neon", 0, 0, 0, 12},
    {CpuArch::kArm, "vfp4", 0, 0, 0, 16},
};

bool HostHas(const FeatureProbe& p) {
  if (p.arch != HostArch()) return false;
#if defined(__x86_64__)
  unsigned r[4] = {0, 0, 0, 0};
  if (unsigned(__get_cpuid_max(0, nullptr)) < p.leaf) return false;  // int in clang's cpuid.h, unsigned in GCC's
  __cpuid_count(p.leaf, p.subleaf, r[0], r[1], r[2], r[3]);
  return (r[p.reg] >> p.bit) & 1;
#elif defined(__aarch64__) || defined(__arm__)
  return (getauxval(AT_HWCAP) >> p.bit) & 1;
#else
  return false;
#endif
}

std::string Join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ",") + x;
  return s;
}

}  // namespace

CpuArch ArchOfTriple(const std::string& triple) {
  auto starts = [&](const char* p) { return triple.rfind(p, 0) == 0; };
  if (starts("x86_64")) return CpuArch::kX86_64;
  if (starts("aarch64") || starts("arm64")) return CpuArch::kAArch64;
  if (starts("arm") || starts("thumb")) return CpuArch::kArm;
  return CpuArch::kOther;
}

CpuArch HostArch() {
#if defined(__x86_64__)
  return CpuArch::kX86_64;
#elif defined(__aarch64__)
  return CpuArch::kAArch64;
#elif defined(__arm__)
  return CpuArch::kArm;
#else
  return CpuArch::kOther;
#endif
}

const char* ArchName(CpuArch arch) {
  switch (arch) {
    case CpuArch::kX86_64:
      return "x86_64";
    case CpuArch::kAArch64:
      return "aarch64";
    case CpuArch::kArm:
      return "32-bit arm";
    case CpuArch::kOther:
      return "an architecture tunefarm does not run on";
  }
  return "?";
}

std::vector<std::string> CheckableCpuFeatures(CpuArch arch) {
  std::vector<std::string> names;
  for (const auto& p : kProbes) {
    if (p.arch == arch) names.push_back(p.name);
  }
  return names;
}

std::vector<std::string> HostCpuFeatures() {
  std::vector<std::string> names;
  for (const auto& p : kProbes) {
    if (HostHas(p)) names.push_back(p.name);
  }
  return names;
}

Status CheckRunsOnHost(const std::string& triple, const std::string& cpu, const std::vector<std::string>& features) {
  const std::string built_for = triple + (cpu.empty() ? "" : " (" + cpu + ")");
  const CpuArch arch = ArchOfTriple(triple);
  if (arch != HostArch()) {
    return Status::FailedPrecondition("the artifact was compiled for " + built_for + ", " + ArchName(arch) +
                                      " code, but this machine is " + ArchName(HostArch()) +
                                      ": compile it for this machine's target or run it where it belongs");
  }
  if (triple.find("linux") == std::string::npos) {
    return Status::FailedPrecondition("the artifact was compiled for " + built_for +
                                      ", not for Linux: the tunefarm runtime loads Linux shared libraries only");
  }
  const std::vector<std::string> host = HostCpuFeatures();
  const std::vector<std::string> known = CheckableCpuFeatures(HostArch());
  std::vector<std::string> missing;
  for (const auto& f : features) {
    // A name this runtime cannot detect (a newer compiler's) is not held against the artifact.
    const bool detectable = std::find(known.begin(), known.end(), f) != known.end();
    if (detectable && std::find(host.begin(), host.end(), f) == host.end()) missing.push_back(f);
  }
  if (!missing.empty()) {
    return Status::FailedPrecondition("the artifact was compiled for " + built_for + " and needs CPU features " +
                                      Join(missing) + " that this " + ArchName(HostArch()) + " CPU lacks (it has " +
                                      Join(host) + "): compile it with this machine's target (e.g. -target llvm)");
  }
  return Status::OK();
}

}  // namespace tunefarm::runtime
