#include "compiler/codegen/object_emitter.h"

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>

#include "compiler/codegen/codegen_cpu.h"
#include "compiler/codegen/llvm_headers.h"
#include "compiler/codegen/llvm_init.h"

namespace tunefarm::compiler {

namespace {

Result<std::string> EmitFile(const std::vector<KernelSource>& kernels, const Target& target,
                             llvm::CodeGenFileType file_type) {
  for (const KernelSource& k : kernels) {
    if (k.func.form != passes::KernelForm::kLoopNest) {
      return Status::InvalidArgument("kernel " + k.func.name + " is a GPU thread program: an object file holds host " +
                                     "loop nests (GPU kernels are PTX: BuildPtx)");
    }
  }
  TUNEFARM_ASSIGN_OR_RETURN(auto tm, CreateTargetMachine(target.triple, target.cpu, target.features));
  llvm::LLVMContext context;
  TUNEFARM_ASSIGN_OR_RETURN(auto module, GenerateModule(kernels, target, tm.get(), &context, MakeCodeGenCPU));
  llvm::SmallVector<char, 0> buffer;
  llvm::raw_svector_ostream os(buffer);
  llvm::legacy::PassManager codegen_pm;
  // The module was verified after IR generation; skip the verifier codegen would run again.
  if (tm->addPassesToEmitFile(codegen_pm, os, nullptr, file_type, /*DisableVerify=*/true)) {
    return Status::Internal("LLVM cannot emit code files for " + target.triple);
  }
  codegen_pm.run(*module);
  return std::string(buffer.begin(), buffer.end());
}

}  // namespace

Result<std::string> EmitObject(const std::vector<KernelSource>& kernels, const Target& target) {
  return EmitFile(kernels, target, llvm::CodeGenFileType::ObjectFile);
}

Result<std::string> EmitAssembly(const std::vector<KernelSource>& kernels, const Target& target) {
  return EmitFile(kernels, target, llvm::CodeGenFileType::AssemblyFile);
}

namespace {

// The toolchain prefix for a target: "" on the host, the Debian cross toolchain for the boards.
Result<std::string> ToolchainPrefix(const Target& target) {
  llvm::Triple triple(target.triple);
  if (target.is_host || triple.getArch() == llvm::Triple(llvm::sys::getProcessTriple()).getArch()) return std::string();
  if (triple.isAArch64()) return std::string("aarch64-linux-gnu-");
  if (triple.isARM()) return std::string("arm-linux-gnueabihf-");
  return Status::Unimplemented("no linker known for triple " + target.triple);
}

}  // namespace

// posix_spawn (vfork semantics) avoids copying this process's large address space, which a fork
// would pay for on every build.
Result<std::string> RunTool(const std::vector<std::string>& argv, const std::string& what, const ToolLimits& limits) {
  std::vector<char*> cargv;
  cargv.reserve(argv.size() + 1);
  for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  int out_pipe[2];
  // Close-on-exec: the tuner builds candidates on several threads at once, and a pipe another
  // thread's tool inherited would keep this read from seeing EOF until that tool exits -- every
  // parallel build (ld, ptxas) then waited for the others' and the build jobs ran one at a time.
  // (The dup2 onto the child's stdout and stderr clears the flag there.)
  if (pipe2(out_pipe, O_CLOEXEC) != 0) return Status::IOError("pipe failed while " + what);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out_pipe[1], 1);
  posix_spawn_file_actions_adddup2(&actions, out_pipe[1], 2);
  posix_spawn_file_actions_addclose(&actions, out_pipe[0]);
  pid_t pid = 0;
  int rc = posix_spawnp(&pid, cargv[0], &actions, nullptr, cargv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(out_pipe[1]);
  if (rc != 0) {
    close(out_pipe[0]);
    return Status::FailedPrecondition("cannot run " + argv[0] + " while " + what + ": " + std::strerror(rc) +
                                      " (install the toolchain: scripts/setup.sh)");
  }
  // Reads until the tool closes its output; with limits, in slices of at most 50 ms, so a tool
  // past its time or a cancelled build is killed within 50 ms.
  std::string output;
  char buf[512];
  const bool bounded = limits.timeout_ms > 0 || limits.cancel;
  const auto start = std::chrono::steady_clock::now();
  auto elapsed_ms = [&] {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  };
  enum class Stopped { kNo, kCancelled, kTimedOut } stopped = Stopped::kNo;
  for (;;) {
    if (bounded) {
      if (limits.cancel && limits.cancel->load()) stopped = Stopped::kCancelled;
      if (limits.timeout_ms > 0 && elapsed_ms() > limits.timeout_ms) stopped = Stopped::kTimedOut;
      if (stopped != Stopped::kNo) {
        kill(pid, SIGKILL);
        break;
      }
      pollfd p{out_pipe[0], POLLIN, 0};
      const int r = poll(&p, 1, 50);
      if (r < 0 && errno == EINTR) continue;
      if (r == 0) continue;
    }
    const ssize_t n = read(out_pipe[0], buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    output.append(buf, size_t(n));
  }
  close(out_pipe[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (stopped == Stopped::kCancelled)
    return Status(StatusCode::kCancelled, what + " with " + argv[0] + " was cancelled");
  if (stopped == Stopped::kTimedOut) {
    char limit[32];
    std::snprintf(limit, sizeof(limit), "%.3g s", limits.timeout_ms / 1e3);
    return Status::DeadlineExceeded(what + " with " + argv[0] + " ran past its " + limit + " limit and was stopped");
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    // A tool killed by a signal prints nothing: say how it ended, and why for the usual cause.
    std::string how = WIFEXITED(status)     ? "exited with status " + std::to_string(WEXITSTATUS(status))
                      : WIFSIGNALED(status) ? std::string("was killed by signal ") + std::to_string(WTERMSIG(status)) +
                                                  " (" + strsignal(WTERMSIG(status)) + ")"
                                            : std::string("ended abnormally");
    if (WIFSIGNALED(status) && WTERMSIG(status) == SIGXFSZ) how += ": a file size limit (ulimit -f) stopped it";
    while (!output.empty() && (output.back() == '\n' || output.back() == ' ')) output.pop_back();
    return Status::Internal(what + " with " + argv[0] + " failed: it " + how + (output.empty() ? "" : ": " + output));
  }
  return output;
}

Result<std::string> LinkerDriverFor(const Target& target) {
  TUNEFARM_ASSIGN_OR_RETURN(std::string prefix, ToolchainPrefix(target));
  return prefix.empty() ? std::string("cc") : prefix + "gcc";
}

Status LinkSharedLibrary(const std::vector<std::string>& object_paths, const Target& target,
                         const std::string& out_path, bool use_toolchain_driver, const ToolLimits& limits) {
  TUNEFARM_ASSIGN_OR_RETURN(std::string prefix, ToolchainPrefix(target));
  std::vector<std::string> argv;
  if (use_toolchain_driver) {
    argv = {prefix.empty() ? std::string("cc") : prefix + "gcc", "-shared", "-o", out_path};
    argv.insert(argv.end(), object_paths.begin(), object_paths.end());
    argv.push_back("-lm");
  } else {
    // binutils' ld directly: ~5 ms against ~35 ms through the gcc driver. Undefined symbols
    // (malloc, free, libm) resolve against the process that loads the library.
    argv = {prefix + "ld", "-shared", "--hash-style=gnu", "-o", out_path};
    argv.insert(argv.end(), object_paths.begin(), object_paths.end());
  }
  return RunTool(argv, "linking " + out_path, limits).status();
}

struct JitModule::Impl {
  std::unique_ptr<llvm::orc::LLJIT> jit;
};

JitModule::JitModule(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
JitModule::~JitModule() = default;

Result<TunefarmKernelFn> JitModule::Lookup(const std::string& kernel_name) const {
  auto sym = impl_->jit->lookup(kernel_name);
  if (!sym) {
    llvm::consumeError(sym.takeError());
    return Status::NotFound("no kernel '" + kernel_name + "' in JIT module");
  }
  return sym->toPtr<TunefarmKernelFn>();
}

Result<std::unique_ptr<JitModule>> JitCompile(const std::vector<KernelSource>& kernels, const Target& target) {
  if (!target.is_host) {
    return Status::FailedPrecondition("target '" + target.ToString() +
                                      "' cannot run in this process; build a shared library and run it on the device");
  }
  TUNEFARM_ASSIGN_OR_RETURN(std::string object, EmitObject(kernels, target));
  auto jit = llvm::orc::LLJITBuilder().create();
  if (!jit) return Status::Internal("cannot create LLVM JIT: " + llvm::toString(jit.takeError()));
  auto& dylib = (*jit)->getMainJITDylib();
  auto gen = llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess((*jit)->getDataLayout().getGlobalPrefix());
  if (!gen) return Status::Internal("JIT process symbols: " + llvm::toString(gen.takeError()));
  dylib.addGenerator(std::move(*gen));
  auto buffer = llvm::MemoryBuffer::getMemBufferCopy(object, "kernels.o");
  if (auto err = (*jit)->addObjectFile(std::move(buffer))) {
    return Status::Internal("JIT cannot load object: " + llvm::toString(std::move(err)));
  }
  auto slot = (*jit)->lookup(TUNEFARM_PARALLEL_SLOT);
  if (!slot) return Status::Internal("JIT module lacks " + std::string(TUNEFARM_PARALLEL_SLOT));
  *slot->toPtr<TunefarmParallelForFn*>() = &TunefarmParallelFor;
  auto impl = std::make_unique<JitModule::Impl>();
  impl->jit = std::move(*jit);
  return std::make_unique<JitModule>(std::move(impl));
}

}  // namespace tunefarm::compiler
