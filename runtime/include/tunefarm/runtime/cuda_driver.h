// CudaDriver: NVIDIA's CUDA driver API, loaded at run time with dlopen("libcuda.so.1"), so every
// tunefarm binary builds and runs -- and every CPU test passes -- on a machine with neither a GPU
// nor the CUDA toolkit. No CUDA header is needed: the few types used are declared here as the
// driver API defines them (cuda.h, CUDA 13).
//
// Contract:
//  - Load() opens the driver once per process and resolves the entry points by their versioned
//    names (CUDA 13 headers map cuMemAlloc to cuMemAlloc_v2, cuDeviceTotalMem to
//    cuDeviceTotalMem_v2, ...); then cuInit(0). Without a driver: FailedPrecondition "no CUDA
//    driver: libcuda.so.1 cannot be loaded (<dlerror>)"; a driver without a needed entry point:
//    FailedPrecondition naming it; cuInit failing (no device, driver/kernel mismatch): the CUDA
//    error as below. The result (success or failure) is cached.
//  - Every CUDA error becomes a Status "<call>: CUDA_ERROR_<NAME> (<code>): <driver's text>",
//    with `what` naming the call and its object ("cuModuleLoadData(conv2d_3)").
// Thread safety: Load() may be called from any thread; the driver API is thread-safe.
#ifndef TUNEFARM_RUNTIME_CUDA_DRIVER_H_
#define TUNEFARM_RUNTIME_CUDA_DRIVER_H_

#include <cstddef>
#include <string>
#include <string_view>

#include "tunefarm/runtime/result.h"

namespace tunefarm {

using CudaDevicePtr = unsigned long long;  // NOLINT(google-runtime-int): CUdeviceptr, the driver's ABI

struct CudaDeviceInfo {
  int ordinal = 0;
  std::string name;  // "NVIDIA H200"
  size_t memory_bytes = 0;
  int sm_count = 0;
  int compute_major = 0, compute_minor = 0;  // 9, 0 for sm_90
  int max_threads_per_block = 0;
  int max_shared_memory_per_block = 0;  // bytes, without the opt-in
  int max_registers_per_block = 0;
  int warp_size = 0;
  int driver_version = 0;  // 13000 for CUDA 13.0
  int l2_cache_bytes = 0;
  std::string arch() const { return "sm_" + std::to_string(compute_major * 10 + compute_minor); }
};

class CudaDriver {
 public:
  using Result_t = int;  // CUresult
  static Result<const CudaDriver*> Load();

  // OK for CUDA_SUCCESS, else the error as in the contract.
  Status Check(Result_t result, std::string_view what) const;
  Result<int> DeviceCount() const;
  Result<CudaDeviceInfo> Describe(int ordinal) const;

  // Entry points (CUDA driver API signatures, opaque handles as void*).
  Result_t (*cuInit)(unsigned int) = nullptr;
  Result_t (*cuDriverGetVersion)(int*) = nullptr;
  Result_t (*cuDeviceGetCount)(int*) = nullptr;
  Result_t (*cuDeviceGet)(int*, int) = nullptr;
  Result_t (*cuDeviceGetName)(char*, int, int) = nullptr;
  Result_t (*cuDeviceTotalMem)(size_t*, int) = nullptr;
  Result_t (*cuDeviceGetAttribute)(int*, int, int) = nullptr;
  Result_t (*cuGetErrorName)(Result_t, const char**) = nullptr;
  Result_t (*cuGetErrorString)(Result_t, const char**) = nullptr;
  // Contexts, streams, memory, modules, launches, events (cuda_device.h uses them). Device
  // pointers are CudaDevicePtr (CUdeviceptr); contexts, streams, modules, functions and events
  // are opaque pointers.
  Result_t (*cuDevicePrimaryCtxRetain)(void**, int) = nullptr;
  Result_t (*cuDevicePrimaryCtxRelease)(int) = nullptr;
  Result_t (*cuCtxSetCurrent)(void*) = nullptr;
  Result_t (*cuStreamCreate)(void**, unsigned int) = nullptr;
  Result_t (*cuStreamDestroy)(void*) = nullptr;
  Result_t (*cuStreamSynchronize)(void*) = nullptr;
  Result_t (*cuMemAlloc)(CudaDevicePtr*, size_t) = nullptr;
  Result_t (*cuMemFree)(CudaDevicePtr) = nullptr;
  Result_t (*cuMemcpyHtoD)(CudaDevicePtr, const void*, size_t) = nullptr;
  Result_t (*cuMemcpyDtoH)(void*, CudaDevicePtr, size_t) = nullptr;
  Result_t (*cuMemcpyHtoDAsync)(CudaDevicePtr, const void*, size_t, void*) = nullptr;
  Result_t (*cuMemcpyDtoHAsync)(void*, CudaDevicePtr, size_t, void*) = nullptr;
  Result_t (*cuMemsetD8Async)(CudaDevicePtr, unsigned char, size_t, void*) = nullptr;
  Result_t (*cuModuleLoadDataEx)(void**, const void*, unsigned int, int*, void**) = nullptr;
  Result_t (*cuModuleUnload)(void*) = nullptr;
  Result_t (*cuModuleGetFunction)(void**, void*, const char*) = nullptr;
  Result_t (*cuFuncGetAttribute)(int*, int, void*) = nullptr;
  Result_t (*cuLaunchKernel)(void*, unsigned int, unsigned int, unsigned int, unsigned int, unsigned int, unsigned int,
                             unsigned int, void*, void**, void**) = nullptr;
  Result_t (*cuEventCreate)(void**, unsigned int) = nullptr;
  Result_t (*cuEventDestroy)(void*) = nullptr;
  Result_t (*cuEventRecord)(void*, void*) = nullptr;
  Result_t (*cuEventSynchronize)(void*) = nullptr;
  Result_t (*cuEventElapsedTime)(float*, void*, void*) = nullptr;
  // CUDA graphs: optional (null where the driver lacks them; callers launch directly then).
  Result_t (*cuStreamBeginCapture)(void*, int) = nullptr;
  Result_t (*cuStreamEndCapture)(void*, void**) = nullptr;
  // NOLINTNEXTLINE(google-runtime-int): the flags' type in the driver's ABI
  Result_t (*cuGraphInstantiateWithFlags)(void**, void*, unsigned long long) = nullptr;
  Result_t (*cuGraphLaunch)(void*, void*) = nullptr;
  Result_t (*cuGraphExecDestroy)(void*) = nullptr;
  Result_t (*cuGraphDestroy)(void*) = nullptr;
  bool has_graphs() const {
    return cuStreamBeginCapture && cuStreamEndCapture && cuGraphInstantiateWithFlags && cuGraphLaunch &&
           cuGraphExecDestroy && cuGraphDestroy;
  }

 private:
  CudaDriver() = default;
  void* handle_ = nullptr;
};

// The library name the driver is loaded from; TUNEFARM_LIBCUDA overrides it (a driver installed
// outside the loader's path).
std::string CudaDriverLibraryName();

// What this machine offers CUDA work, with the three ways it can fall short told apart (a GPU
// check must not read "the driver loads but cuInit fails" as "no driver", nor either as a pass):
//   kNoDriver    "no CUDA driver: libcuda.so.1 cannot be loaded (<dlerror>); ..."
//   kInitFailed  "the CUDA driver (libcuda.so.1) loads but cannot be used: cuInit: CUDA_ERROR_<NAME> (<code>): ..."
//                (also a driver without an entry point tunefarm needs)
//   kNoDevice    "the CUDA driver works but shows no device (CUDA_VISIBLE_DEVICES=...)"
enum class CudaAvailability { kReady, kNoDriver, kInitFailed, kNoDevice };
struct CudaProbe {
  CudaAvailability availability = CudaAvailability::kNoDriver;
  int device_count = 0;
  std::string message;  // why CUDA work cannot run here; empty when kReady
};
CudaProbe ProbeCuda();

}  // namespace tunefarm

#endif  // TUNEFARM_RUNTIME_CUDA_DRIVER_H_
