// CodeGenNVPTX: LLVM code generation for NVIDIA GPUs (target kind "cuda"), PTX text out.
//
// Each bound kernel (passes/bind_gpu_threads.h) becomes an entry function NAME(ptr, ...) taking
// the buffers' device pointers in argument order, marked as a kernel in !nvvm.annotations with
// launch bounds (maxntid x/y/z = the block it is compiled for). blockIdx/threadIdx read the PTX
// special registers; shared arrays are module globals in address space 3 (LLVM's address-space
// inference turns the generic accesses into ld/st.shared); local arrays are allocas that SROA
// promotes to registers once unrolled; barriers are bar.sync 0.
//
// No CUDA-toolkit file is needed: exp, log and tanh arrive as plain arithmetic
// (passes/lower_gpu_math.h, no libdevice); sqrt, fabs and floor lower natively.
//
// After PTX is generated, ptxas -v (when the toolkit is present: TUNEFARM_PTXAS, then
// /usr/local/cuda/bin/ptxas, then PATH) reports each kernel's registers; a kernel whose registers
// x threads exceed the register file, or whose registers exceed a thread's limit, is an
// InvalidArgument: launching it would fail with CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES. Without
// ptxas the server checks CU_FUNC_ATTRIBUTE_NUM_REGS after loading.
#ifndef TUNEFARM_COMPILER_CODEGEN_CODEGEN_NVPTX_H_
#define TUNEFARM_COMPILER_CODEGEN_CODEGEN_NVPTX_H_

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "compiler/codegen/codegen_llvm.h"
#include "compiler/codegen/object_emitter.h"

namespace tunefarm::compiler {

namespace codegen {
class CodeGenLLVM;
}
std::unique_ptr<codegen::CodeGenLLVM> MakeCodeGenNVPTX(llvm::LLVMContext* ctx, llvm::Module* module,
                                                       const Target& target);

// The NVPTX triple every CUDA kernel is compiled for.
inline constexpr const char* kNvptxTriple = "nvptx64-nvidia-cuda";

// PTX assembly of the kernels (all GPU-lowered) for target.arch.
Result<std::string> EmitPtx(const std::vector<KernelSource>& kernels, const Target& target);

// What ptxas says one kernel uses.
struct PtxasKernelReport {
  int registers = 0;
  int64_t spill_store_bytes = 0, spill_load_bytes = 0;
  int64_t shared_bytes = 0;
  int64_t stack_frame_bytes = 0;
};
// The ptxas this machine has, or empty when none (no CUDA toolkit).
std::string FindPtxas();
// Assembles ptx for arch with `ptxas -v` and reports per kernel name; *cubin (when given) receives
// the machine code ptxas wrote (an ELF cubin the driver loads without its JIT).
Result<std::map<std::string, PtxasKernelReport>> RunPtxas(const std::string& ptxas, const std::string& ptx,
                                                          const std::string& arch, std::string* cubin = nullptr,
                                                          const ToolLimits& limits = {});

// The register check TVM never makes: assembles ptx with this machine's ptxas and checks, for each
// kernel (symbol -> threads per block), registers x threads (allocated per warp) against the
// target's register file and registers against a thread's limit. Returns each kernel's registers;
// empty when there is no ptxas (the server checks after loading). InvalidArgument names the kernel.
// *cubin (when given) receives ptxas's machine code for target.arch; left empty without ptxas.
// limits bound ptxas's run (a tuner's candidate build).
Result<std::map<std::string, int>> CheckPtxRegisters(const std::string& ptx, const Target& target,
                                                     const std::map<std::string, int64_t>& threads_per_block,
                                                     std::string* cubin = nullptr, const ToolLimits& limits = {});

}  // namespace tunefarm::compiler

#endif  // TUNEFARM_COMPILER_CODEGEN_CODEGEN_NVPTX_H_
