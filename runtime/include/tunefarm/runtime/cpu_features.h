// What an artifact's machine code needs from the CPU, and whether this machine has it.
// Contract: the compiler records, per artifact, the target triple and those of the target's enabled
// features that the runtime can detect (CheckableCpuFeatures, LLVM's names); CheckRunsOnHost then
// refuses an artifact built for another architecture or OS, or one needing a feature this CPU lacks,
// with a message naming both sides -- before any of its code is mapped. Features this runtime cannot
// detect are not recorded, so an older runtime never refuses an artifact for a name it does not know.
#ifndef TUNEFARM_RUNTIME_CPU_FEATURES_H_
#define TUNEFARM_RUNTIME_CPU_FEATURES_H_

#include <string>
#include <vector>

#include "tunefarm/runtime/status.h"

namespace tunefarm::runtime {

enum class CpuArch { kX86_64, kAArch64, kArm, kOther };

CpuArch ArchOfTriple(const std::string& triple);  // x86_64-*, aarch64-*/arm64-*, arm*/thumb*
CpuArch HostArch();                               // the architecture this runtime was built for
const char* ArchName(CpuArch arch);

std::vector<std::string> CheckableCpuFeatures(CpuArch arch);
// The features of CheckableCpuFeatures(HostArch()) this CPU has.
std::vector<std::string> HostCpuFeatures();

// `triple`/`cpu` as the artifact names them (cpu only for the message); `features` in LLVM's names.
Status CheckRunsOnHost(const std::string& triple, const std::string& cpu, const std::vector<std::string>& features);

}  // namespace tunefarm::runtime

#endif  // TUNEFARM_RUNTIME_CPU_FEATURES_H_
