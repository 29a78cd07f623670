// LLVM initialization and TargetMachine creation shared by the target parser, the code generator
// and the JIT. Forward declarations only: LLVM types stay out of non-codegen code.
#ifndef TUNEFARM_COMPILER_CODEGEN_LLVM_INIT_H_
#define TUNEFARM_COMPILER_CODEGEN_LLVM_INIT_H_

#include <memory>
#include <string>

#include "tunefarm/compiler/target.h"
#include "tunefarm/runtime/result.h"

namespace llvm {
class TargetMachine;
}  // namespace llvm

namespace tunefarm::compiler {

// Registers every LLVM target once (thread-safe).
void InitializeLLVM();

// A TargetMachine for (triple, cpu, features), PIC, optimizing for speed. InvalidArgument if LLVM
// does not know the triple or the CPU.
Result<std::unique_ptr<llvm::TargetMachine>> CreateTargetMachine(const std::string& triple, const std::string& cpu,
                                                                 const std::string& features);

}  // namespace tunefarm::compiler

#endif  // TUNEFARM_COMPILER_CODEGEN_LLVM_INIT_H_
