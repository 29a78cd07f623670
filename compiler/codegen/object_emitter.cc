#include "compiler/codegen/object_emitter.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>

#include "compiler/codegen/llvm_headers.h"
#include "compiler/codegen/llvm_init.h"

namespace tunefarm::compiler {

Result<std::string> EmitObject(const std::vector<KernelSource>& kernels, const Target& target) {
  if (target.kind != "llvm") {
    return Status::Unimplemented("code generation for target kind '" + target.kind + "' is not available yet");
  }
  TUNEFARM_ASSIGN_OR_RETURN(auto tm, CreateTargetMachine(target.triple, target.cpu, target.features));
  llvm::LLVMContext context;
  TUNEFARM_ASSIGN_OR_RETURN(auto module, GenerateModule(kernels, target, tm.get(), &context));
  llvm::SmallVector<char, 0> buffer;
  llvm::raw_svector_ostream os(buffer);
  llvm::legacy::PassManager codegen_pm;
  if (tm->addPassesToEmitFile(codegen_pm, os, nullptr, llvm::CodeGenFileType::ObjectFile)) {
    return Status::Internal("LLVM cannot emit object files for " + target.triple);
  }
  codegen_pm.run(*module);
  return std::string(buffer.begin(), buffer.end());
}

Result<std::string> LinkerDriverFor(const Target& target) {
  llvm::Triple triple(target.triple);
  if (target.is_host || triple.getArch() == llvm::Triple(llvm::sys::getProcessTriple()).getArch()) return std::string("cc");
  if (triple.isAArch64()) return std::string("aarch64-linux-gnu-gcc");
  if (triple.isARM()) return std::string("arm-linux-gnueabihf-gcc");
  return Status::Unimplemented("no linker known for triple " + target.triple);
}

Status LinkSharedLibrary(const std::vector<std::string>& object_paths, const Target& target,
                         const std::string& out_path) {
  TUNEFARM_ASSIGN_OR_RETURN(std::string driver, LinkerDriverFor(target));
  std::vector<std::string> argv = {driver, "-shared", "-o", out_path};
  argv.insert(argv.end(), object_paths.begin(), object_paths.end());
  argv.push_back("-lm");
  std::vector<char*> cargv;
  for (auto& a : argv) cargv.push_back(a.data());
  cargv.push_back(nullptr);

  int err_pipe[2];
  if (pipe(err_pipe) != 0) return Status::IOError("pipe failed while linking " + out_path);
  pid_t pid = fork();
  if (pid < 0) return Status::IOError("fork failed while linking " + out_path);
  if (pid == 0) {
    dup2(err_pipe[1], 2);
    dup2(err_pipe[1], 1);
    close(err_pipe[0]);
    execvp(cargv[0], cargv.data());
    std::fprintf(stderr, "cannot run %s", cargv[0]);
    _exit(127);
  }
  close(err_pipe[1]);
  std::string output;
  char buf[512];
  for (ssize_t n; (n = read(err_pipe[0], buf, sizeof(buf))) > 0;) output.append(buf, size_t(n));
  close(err_pipe[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return Status::Internal("linking " + out_path + " with " + driver + " failed: " + output);
  }
  return Status::OK();
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
    return Status::FailedPrecondition("target '" + target.ToString() + "' cannot run in this process; build a shared library and run it on the device");
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
