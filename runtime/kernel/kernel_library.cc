#include "tunefarm/runtime/kernel_library.h"

#include <dlfcn.h>

namespace tunefarm::runtime {

Result<std::unique_ptr<KernelLibrary>> KernelLibrary::Open(const std::string& path) {
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* err = dlerror();
    return Status::InvalidArgument("cannot load kernel library " + path + ": " + (err ? err : "unknown error"));
  }
  if (void* slot = dlsym(handle, TUNEFARM_PARALLEL_SLOT)) {
    *static_cast<TunefarmParallelForFn*>(slot) = &TunefarmParallelFor;
  }
  return std::unique_ptr<KernelLibrary>(new KernelLibrary(handle, path));
}

KernelLibrary::~KernelLibrary() { dlclose(handle_); }

Result<TunefarmKernelFn> KernelLibrary::Lookup(const std::string& kernel_name) const {
  void* sym = dlsym(handle_, kernel_name.c_str());
  if (!sym) return Status::NotFound("no kernel '" + kernel_name + "' in " + path_);
  return reinterpret_cast<TunefarmKernelFn>(sym);
}

Result<std::string> KernelLibrary::Metadata(const std::string& kernel_name) const {
  std::string symbol = kernel_name + TUNEFARM_METADATA_SUFFIX;
  void* sym = dlsym(handle_, symbol.c_str());
  if (!sym) return Status::NotFound("no metadata '" + symbol + "' in " + path_);
  return std::string(static_cast<const char*>(sym));
}

}  // namespace tunefarm::runtime
