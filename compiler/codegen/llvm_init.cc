#include "compiler/codegen/llvm_init.h"

#include <mutex>

#include "compiler/codegen/llvm_headers.h"

namespace tunefarm::compiler {

void InitializeLLVM() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeAllTargetInfos();
    llvm::InitializeAllTargets();
    llvm::InitializeAllTargetMCs();
    llvm::InitializeAllAsmPrinters();
    llvm::InitializeAllAsmParsers();
  });
}

Result<std::unique_ptr<llvm::TargetMachine>> CreateTargetMachine(const std::string& triple, const std::string& cpu,
                                                                 const std::string& features) {
  InitializeLLVM();
  std::string error;
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target) return Status::InvalidArgument("unknown target triple '" + triple + "': " + error);
  llvm::TargetOptions options;
  auto* tm = target->createTargetMachine(triple, cpu, features, options, llvm::Reloc::PIC_, std::nullopt,
                                         llvm::CodeGenOptLevel::Aggressive);
  if (!tm) return Status::InvalidArgument("LLVM cannot create a target machine for " + triple);
  if (!cpu.empty() && cpu != "generic" && !tm->getMCSubtargetInfo()->isCPUStringValid(cpu)) {
    delete tm;
    return Status::InvalidArgument("unknown CPU '" + cpu + "' for triple " + triple);
  }
  return std::unique_ptr<llvm::TargetMachine>(tm);
}

}  // namespace tunefarm::compiler
