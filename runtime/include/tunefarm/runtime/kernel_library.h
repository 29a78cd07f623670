// KernelLibrary: a shared library of compiled kernels, loaded with dlopen (see kernel_abi.h).
//
// Contract: Open binds the library's parallel-for slot to the runtime's thread pool before any
// kernel runs; Lookup returns the kernel entry or NotFound naming the symbol and the library. The
// library stays loaded for the object's lifetime; function pointers die with it.
// Thread safety: Lookup may be called concurrently; kernels themselves are reentrant.
#ifndef TUNEFARM_RUNTIME_KERNEL_LIBRARY_H_
#define TUNEFARM_RUNTIME_KERNEL_LIBRARY_H_

#include <memory>
#include <string>

#include "tunefarm/runtime/kernel_abi.h"
#include "tunefarm/runtime/result.h"

namespace tunefarm::runtime {

class KernelLibrary {
 public:
  static Result<std::unique_ptr<KernelLibrary>> Open(const std::string& path);
  ~KernelLibrary();
  KernelLibrary(const KernelLibrary&) = delete;
  KernelLibrary& operator=(const KernelLibrary&) = delete;

  Result<TunefarmKernelFn> Lookup(const std::string& kernel_name) const;
  // The kernel's metadata JSON (NotFound if the library does not carry it).
  Result<std::string> Metadata(const std::string& kernel_name) const;
  const std::string& path() const { return path_; }

 private:
  KernelLibrary(void* handle, std::string path) : handle_(handle), path_(std::move(path)) {}
  void* handle_;
  std::string path_;
};

}  // namespace tunefarm::runtime

#endif  // TUNEFARM_RUNTIME_KERNEL_LIBRARY_H_
