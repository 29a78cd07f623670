#include "compiler/codegen/llvm_init.h"

#include <algorithm>
#include <mutex>

#include "compiler/codegen/llvm_headers.h"

namespace tunefarm::compiler {

// The targets tunefarm generates code for, and only those: a statically linked LLVM then carries
// these four back ends (TUNEFARM_STATIC_LLVM, the GPU check kit), not every one Debian builds.
// NVPTX has no assembly parser.
extern "C" {
#define TUNEFARM_LLVM_TARGET(T)         \
  void LLVMInitialize##T##TargetInfo(); \
  void LLVMInitialize##T##Target();     \
  void LLVMInitialize##T##TargetMC();   \
  void LLVMInitialize##T##AsmPrinter();
TUNEFARM_LLVM_TARGET(X86)
TUNEFARM_LLVM_TARGET(AArch64)
TUNEFARM_LLVM_TARGET(ARM)
TUNEFARM_LLVM_TARGET(NVPTX)
#undef TUNEFARM_LLVM_TARGET
void LLVMInitializeX86AsmParser();
void LLVMInitializeAArch64AsmParser();
void LLVMInitializeARMAsmParser();
}

void InitializeLLVM() {
  static std::once_flag once;
  std::call_once(once, [] {
#define TUNEFARM_LLVM_TARGET(T)    \
  LLVMInitialize##T##TargetInfo(); \
  LLVMInitialize##T##Target();     \
  LLVMInitialize##T##TargetMC();   \
  LLVMInitialize##T##AsmPrinter();
    TUNEFARM_LLVM_TARGET(X86)
    TUNEFARM_LLVM_TARGET(AArch64)
    TUNEFARM_LLVM_TARGET(ARM)
    TUNEFARM_LLVM_TARGET(NVPTX)
#undef TUNEFARM_LLVM_TARGET
    LLVMInitializeX86AsmParser();
    LLVMInitializeAArch64AsmParser();
    LLVMInitializeARMAsmParser();
  });
}

Result<std::unique_ptr<llvm::TargetMachine>> CreateTargetMachine(const std::string& triple, const std::string& cpu,
                                                                 const std::string& features) {
  InitializeLLVM();
  std::string error;
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target) return Status::InvalidArgument("unknown target triple '" + triple + "': " + error);
  // Validate CPU and features against a generic subtarget first: LLVM itself only prints a
  // warning to stderr for unknown names and carries on.
  std::unique_ptr<llvm::MCSubtargetInfo> generic(target->createMCSubtargetInfo(triple, "", ""));
  if (!generic) return Status::InvalidArgument("LLVM has no subtarget information for " + triple);
  if (!cpu.empty() && cpu != "generic" && !generic->isCPUStringValid(cpu)) {
    return Status::InvalidArgument("unknown CPU '" + cpu + "' for triple " + triple);
  }
  auto known = generic->getAllProcessorFeatures();
  llvm::SmallVector<llvm::StringRef, 16> parts;
  llvm::StringRef(features).split(parts, ',', -1, false);
  for (llvm::StringRef f : parts) {
    if (f[0] != '+' && f[0] != '-') {
      return Status::InvalidArgument("feature '" + f.str() + "' must start with + or - (e.g. -mattr=+avx2)");
    }
    llvm::StringRef name = f.drop_front();
    bool found = std::any_of(known.begin(), known.end(), [&](const auto& kv) { return name == kv.Key; });
    if (!found) return Status::InvalidArgument("unknown feature '" + name.str() + "' for triple " + triple);
  }
  llvm::TargetOptions options;
  auto* tm = target->createTargetMachine(triple, cpu, features, options, llvm::Reloc::PIC_, std::nullopt,
                                         llvm::CodeGenOptLevel::Aggressive);
  if (!tm) return Status::InvalidArgument("LLVM cannot create a target machine for " + triple);
  return std::unique_ptr<llvm::TargetMachine>(tm);
}

}  // namespace tunefarm::compiler
