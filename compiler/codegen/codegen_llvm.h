// CodeGenLLVM: translates lowered kernels into one LLVM module, then optimizes it at O3 with the
// new pass manager for the target's TargetMachine.
//
// Emitted per kernel NAME (the ABI of tunefarm/runtime/kernel_abi.h):
//   i32 NAME(ptr args)              loads each buffer pointer and calls NAME.impl
//   i32 NAME.impl(ptr noalias ...)  the loop nest; parallel loops are outlined into
//                                   NAME.par.K(i64 begin, i64 end, ptr closure) and launched
//                                   through the module's __tunefarm_parallel_for slot
//   [N x i8] NAME__metadata         the kernel's metadata JSON
// Allocations up to kStackAllocBytes live on the stack (entry block, so SROA can promote register
// tiles); larger ones use malloc/free.
#ifndef TUNEFARM_COMPILER_CODEGEN_CODEGEN_LLVM_H_
#define TUNEFARM_COMPILER_CODEGEN_CODEGEN_LLVM_H_

#include <functional>
#include <memory>
#include <string>

#include "compiler/passes/lower.h"
#include "tunefarm/compiler/target.h"
#include "tunefarm/runtime/result.h"

namespace llvm {
class LLVMContext;
class Module;
class TargetMachine;
}  // namespace llvm

namespace tunefarm::compiler {

constexpr int64_t kStackAllocBytes = 64 * 1024;

struct KernelSource {
  passes::LoweredFunc func;
  std::string metadata_json;
};

namespace codegen {
class CodeGenLLVM;
}
// A code generator for one module (MakeCodeGenCPU, MakeCodeGenNVPTX): the caller, which knows
// what it emits (an object file, PTX), names it.
using MakeCodeGen = std::unique_ptr<codegen::CodeGenLLVM> (*)(llvm::LLVMContext* ctx, llvm::Module* module,
                                                              const Target& target);

// Builds the module for a set of kernels (one shared library's worth) with make_codegen's code
// generator and runs O3 on it.
Result<std::unique_ptr<llvm::Module>> GenerateModule(const std::vector<KernelSource>& kernels, const Target& target,
                                                     llvm::TargetMachine* tm, llvm::LLVMContext* context,
                                                     MakeCodeGen make_codegen);

}  // namespace tunefarm::compiler

#endif  // TUNEFARM_COMPILER_CODEGEN_CODEGEN_LLVM_H_
