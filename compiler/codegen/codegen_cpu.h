// CodeGenCPU: LLVM code generation for CPU targets (x86-64, aarch64, armv7): each kernel becomes
// NAME.impl (the loop nest) and the packed C-ABI entry NAME (tunefarm/runtime/kernel_abi.h);
// parallel loops are outlined into NAME.par.K and launched through the module's
// __tunefarm_parallel_for slot; allocations up to kStackAllocBytes live on the stack, larger ones
// on the heap; functions carry the target's CPU, features and vector width.
#ifndef TUNEFARM_COMPILER_CODEGEN_CODEGEN_CPU_H_
#define TUNEFARM_COMPILER_CODEGEN_CODEGEN_CPU_H_

#include <memory>

#include "compiler/codegen/codegen_llvm.h"

namespace tunefarm::compiler {

namespace codegen {
class CodeGenLLVM;
}
std::unique_ptr<codegen::CodeGenLLVM> MakeCodeGenCPU(llvm::LLVMContext* ctx, llvm::Module* module,
                                                     const Target& target);

}  // namespace tunefarm::compiler

#endif  // TUNEFARM_COMPILER_CODEGEN_CODEGEN_CPU_H_
