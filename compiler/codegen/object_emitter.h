// Machine code out of kernel modules: object files for any target, shared libraries linked with
// the host or Debian cross toolchain, and in-process JIT for the host.
#ifndef TUNEFARM_COMPILER_CODEGEN_OBJECT_EMITTER_H_
#define TUNEFARM_COMPILER_CODEGEN_OBJECT_EMITTER_H_

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "compiler/codegen/codegen_llvm.h"
#include "tunefarm/compiler/kernel.h"
#include "tunefarm/runtime/kernel_abi.h"

namespace tunefarm::compiler {

// Generates, optimizes and assembles the kernels into one ELF object for target.
Result<std::string> EmitObject(const std::vector<KernelSource>& kernels, const Target& target);
// The same code as assembly text: which instructions a kernel's intrinsics became (tests).
Result<std::string> EmitAssembly(const std::vector<KernelSource>& kernels, const Target& target);

// Bounds on one tool's run. A tuner's candidate can be too large to assemble in any useful time
// (ptxas on a reduction unrolled thousands of steps deep), and a tuner that stops must not wait
// for it: the tool is killed (SIGKILL) once it has run timeout_ms (> 0), or as soon as *cancel is
// set.
struct ToolLimits {
  double timeout_ms = 0;
  const std::atomic<bool>* cancel = nullptr;
};

// The C compiler driver that links shared libraries for target: cc on the host,
// aarch64-linux-gnu-gcc / arm-linux-gnueabihf-gcc for the boards.
Result<std::string> LinkerDriverFor(const Target& target);

// Links object files into a shared library at out_path (overwritten) with the target's binutils
// ld (ld, aarch64-linux-gnu-ld, arm-linux-gnueabihf-ld), or through its gcc driver when
// use_toolchain_driver is set.
Status LinkSharedLibrary(const std::vector<std::string>& object_paths, const Target& target,
                         const std::string& out_path, bool use_toolchain_driver = false, const ToolLimits& limits = {});

// Runs a tool (found on PATH when argv[0] has no slash) and returns what it printed (stdout and
// stderr); an error carries the output when it exits non-zero, FailedPrecondition when it cannot
// start, DeadlineExceeded when it ran past limits.timeout_ms, Cancelled when limits.cancel was set.
Result<std::string> RunTool(const std::vector<std::string>& argv, const std::string& what,
                            const ToolLimits& limits = {});

// JIT-compiles kernels for the host; FailedPrecondition if the target is not runnable here.
Result<std::unique_ptr<JitModule>> JitCompile(const std::vector<KernelSource>& kernels, const Target& target);

}  // namespace tunefarm::compiler

#endif  // TUNEFARM_COMPILER_CODEGEN_OBJECT_EMITTER_H_
