#include "tunefarm/runtime/cuda_driver.h"

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>

namespace tunefarm {
namespace {

// cuDeviceGetAttribute attribute numbers (CUdevice_attribute in cuda.h).
constexpr int kMaxThreadsPerBlock = 1;
constexpr int kMaxSharedMemoryPerBlock = 8;
constexpr int kWarpSize = 10;
constexpr int kMaxRegistersPerBlock = 12;
constexpr int kMultiprocessorCount = 16;
constexpr int kComputeCapabilityMajor = 75;
constexpr int kComputeCapabilityMinor = 76;
constexpr int kL2CacheSize = 38;

template <class F>
Status Resolve(void* handle, const char* symbol, F* out) {
  void* p = dlsym(handle, symbol);
  if (!p) return Status::FailedPrecondition(std::string("the CUDA driver lacks ") + symbol + " (driver too old?)");
  *out = reinterpret_cast<F>(p);
  return Status::OK();
}

// The entry points past the ones Load() needs to describe devices: the versioned names CUDA 13's
// cuda.h maps the plain ones to (same signatures).
template <class F>
Status ResolveFirst(void* handle, std::initializer_list<const char*> symbols, F* out) {
  for (const char* symbol : symbols) {
    if (void* p = dlsym(handle, symbol)) {
      *out = reinterpret_cast<F>(p);
      return Status::OK();
    }
  }
  return Status::FailedPrecondition(std::string("the CUDA driver lacks ") + *symbols.begin() + " (driver too old?)");
}

}  // namespace

std::string CudaDriverLibraryName() {
  const char* env = std::getenv("TUNEFARM_LIBCUDA");
  return env && *env ? env : "libcuda.so.1";
}

Result<const CudaDriver*> CudaDriver::Load() {
  static std::once_flag once;
  static Result<const CudaDriver*> loaded = Status::Internal("not loaded");
  std::call_once(once, [] {
    const std::string name = CudaDriverLibraryName();
    void* handle = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      const char* why = dlerror();
      loaded = Status::FailedPrecondition("no CUDA driver: " + name + " cannot be loaded (" + (why ? why : "unknown") +
                                          "); install the NVIDIA driver, or run CUDA work on a GPU host");
      return;
    }
    auto* d = new CudaDriver();  // lives for the process, as the driver does
    d->handle_ = handle;
    Status s = Resolve(handle, "cuInit", &d->cuInit);
    if (s.ok()) s = Resolve(handle, "cuDriverGetVersion", &d->cuDriverGetVersion);
    if (s.ok()) s = Resolve(handle, "cuDeviceGetCount", &d->cuDeviceGetCount);
    if (s.ok()) s = Resolve(handle, "cuDeviceGet", &d->cuDeviceGet);
    if (s.ok()) s = Resolve(handle, "cuDeviceGetName", &d->cuDeviceGetName);
    if (s.ok()) s = Resolve(handle, "cuDeviceTotalMem_v2", &d->cuDeviceTotalMem);
    if (s.ok()) s = Resolve(handle, "cuDeviceGetAttribute", &d->cuDeviceGetAttribute);
    if (s.ok()) s = Resolve(handle, "cuGetErrorName", &d->cuGetErrorName);
    if (s.ok()) s = Resolve(handle, "cuGetErrorString", &d->cuGetErrorString);
    if (s.ok()) s = Resolve(handle, "cuDevicePrimaryCtxRetain", &d->cuDevicePrimaryCtxRetain);
    if (s.ok()) {
      s = ResolveFirst(handle, {"cuDevicePrimaryCtxRelease_v2", "cuDevicePrimaryCtxRelease"},
                       &d->cuDevicePrimaryCtxRelease);
    }
    if (s.ok()) s = Resolve(handle, "cuCtxSetCurrent", &d->cuCtxSetCurrent);
    if (s.ok()) s = Resolve(handle, "cuStreamCreate", &d->cuStreamCreate);
    if (s.ok()) s = ResolveFirst(handle, {"cuStreamDestroy_v2", "cuStreamDestroy"}, &d->cuStreamDestroy);
    if (s.ok()) s = Resolve(handle, "cuStreamSynchronize", &d->cuStreamSynchronize);
    if (s.ok()) s = Resolve(handle, "cuMemAlloc_v2", &d->cuMemAlloc);
    if (s.ok()) s = Resolve(handle, "cuMemFree_v2", &d->cuMemFree);
    if (s.ok()) s = Resolve(handle, "cuMemcpyHtoD_v2", &d->cuMemcpyHtoD);
    if (s.ok()) s = Resolve(handle, "cuMemcpyDtoH_v2", &d->cuMemcpyDtoH);
    if (s.ok()) s = Resolve(handle, "cuMemcpyHtoDAsync_v2", &d->cuMemcpyHtoDAsync);
    if (s.ok()) s = Resolve(handle, "cuMemcpyDtoHAsync_v2", &d->cuMemcpyDtoHAsync);
    if (s.ok()) s = Resolve(handle, "cuMemsetD8Async", &d->cuMemsetD8Async);
    if (s.ok()) s = Resolve(handle, "cuModuleLoadDataEx", &d->cuModuleLoadDataEx);
    if (s.ok()) s = Resolve(handle, "cuModuleUnload", &d->cuModuleUnload);
    if (s.ok()) s = Resolve(handle, "cuModuleGetFunction", &d->cuModuleGetFunction);
    if (s.ok()) s = Resolve(handle, "cuFuncGetAttribute", &d->cuFuncGetAttribute);
    if (s.ok()) s = Resolve(handle, "cuLaunchKernel", &d->cuLaunchKernel);
    if (s.ok()) s = Resolve(handle, "cuEventCreate", &d->cuEventCreate);
    if (s.ok()) s = ResolveFirst(handle, {"cuEventDestroy_v2", "cuEventDestroy"}, &d->cuEventDestroy);
    if (s.ok()) s = Resolve(handle, "cuEventRecord", &d->cuEventRecord);
    if (s.ok()) s = Resolve(handle, "cuEventSynchronize", &d->cuEventSynchronize);
    if (s.ok()) s = ResolveFirst(handle, {"cuEventElapsedTime_v2", "cuEventElapsedTime"}, &d->cuEventElapsedTime);
    if (s.ok()) {  // optional: CUDA graphs
      (void)Resolve(handle, "cuStreamBeginCapture_v2", &d->cuStreamBeginCapture);
      (void)Resolve(handle, "cuStreamEndCapture", &d->cuStreamEndCapture);
      (void)Resolve(handle, "cuGraphInstantiateWithFlags", &d->cuGraphInstantiateWithFlags);
      (void)Resolve(handle, "cuGraphLaunch", &d->cuGraphLaunch);
      (void)Resolve(handle, "cuGraphExecDestroy", &d->cuGraphExecDestroy);
      (void)Resolve(handle, "cuGraphDestroy", &d->cuGraphDestroy);
    }
    if (s.ok()) s = d->Check(d->cuInit(0), "cuInit");
    if (!s.ok()) {
      loaded = s;
      return;
    }
    loaded = static_cast<const CudaDriver*>(d);
  });
  return loaded;
}

Status CudaDriver::Check(Result_t result, std::string_view what) const {
  if (result == 0) return Status::OK();
  const char* name = nullptr;
  const char* text = nullptr;
  if (cuGetErrorName) cuGetErrorName(result, &name);
  if (cuGetErrorString) cuGetErrorString(result, &text);
  return Status::FailedPrecondition(std::string(what) + ": " + (name ? name : "CUDA_ERROR_UNKNOWN") + " (" +
                                    std::to_string(result) + ")" + (text ? std::string(": ") + text : ""));
}

Result<int> CudaDriver::DeviceCount() const {
  int n = 0;
  TUNEFARM_RETURN_IF_ERROR(Check(cuDeviceGetCount(&n), "cuDeviceGetCount"));
  return n;
}

Result<CudaDeviceInfo> CudaDriver::Describe(int ordinal) const {
  TUNEFARM_ASSIGN_OR_RETURN(int count, DeviceCount());
  if (ordinal < 0 || ordinal >= count) {
    return Status::InvalidArgument("no CUDA device " + std::to_string(ordinal) + " (this machine has " +
                                   std::to_string(count) + ")");
  }
  int device = 0;
  TUNEFARM_RETURN_IF_ERROR(Check(cuDeviceGet(&device, ordinal), "cuDeviceGet"));
  CudaDeviceInfo info;
  info.ordinal = ordinal;
  char name[256] = {};
  TUNEFARM_RETURN_IF_ERROR(Check(cuDeviceGetName(name, sizeof(name) - 1, device), "cuDeviceGetName"));
  info.name = name;
  TUNEFARM_RETURN_IF_ERROR(Check(cuDeviceTotalMem(&info.memory_bytes, device), "cuDeviceTotalMem"));
  const std::pair<int, int*> attributes[] = {
      {kMultiprocessorCount, &info.sm_count},
      {kComputeCapabilityMajor, &info.compute_major},
      {kComputeCapabilityMinor, &info.compute_minor},
      {kMaxThreadsPerBlock, &info.max_threads_per_block},
      {kMaxSharedMemoryPerBlock, &info.max_shared_memory_per_block},
      {kMaxRegistersPerBlock, &info.max_registers_per_block},
      {kWarpSize, &info.warp_size},
      {kL2CacheSize, &info.l2_cache_bytes},
  };
  for (const auto& [attribute, out] : attributes) {
    TUNEFARM_RETURN_IF_ERROR(
        Check(cuDeviceGetAttribute(out, attribute, device), "cuDeviceGetAttribute(" + std::to_string(attribute) + ")"));
  }
  TUNEFARM_RETURN_IF_ERROR(Check(cuDriverGetVersion(&info.driver_version), "cuDriverGetVersion"));
  return info;
}

CudaProbe ProbeCuda() {
  CudaProbe probe;
  const std::string name = CudaDriverLibraryName();
  auto driver = CudaDriver::Load();
  if (!driver.ok()) {
    // Load() fails the same way for a missing library and a failing cuInit: ask the loader.
    void* handle = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      probe.availability = CudaAvailability::kNoDriver;
      probe.message = driver.status().message();
      return probe;
    }
    dlclose(handle);
    probe.availability = CudaAvailability::kInitFailed;
    probe.message = "the CUDA driver (" + name + ") loads but cannot be used: " + driver.status().message();
    return probe;
  }
  auto count = (*driver)->DeviceCount();
  if (!count.ok()) {
    probe.availability = CudaAvailability::kInitFailed;
    probe.message = "the CUDA driver (" + name + ") loads but cannot be used: " + count.status().message();
    return probe;
  }
  probe.device_count = *count;
  if (*count == 0) {
    const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
    probe.availability = CudaAvailability::kNoDevice;
    probe.message =
        "the CUDA driver works but shows no device (CUDA_VISIBLE_DEVICES=" + std::string(visible ? visible : "unset") +
        ")";
    return probe;
  }
  probe.availability = CudaAvailability::kReady;
  return probe;
}

}  // namespace tunefarm
