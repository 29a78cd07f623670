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

template <class F>
Status Resolve(void* handle, const char* symbol, F* out) {
  void* p = dlsym(handle, symbol);
  if (!p) return Status::FailedPrecondition(std::string("the CUDA driver lacks ") + symbol + " (driver too old?)");
  *out = reinterpret_cast<F>(p);
  return Status::OK();
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
    return Status::InvalidArgument("no CUDA device " + std::to_string(ordinal) + " (this machine has " + std::to_string(count) + ")");
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
  };
  for (const auto& [attribute, out] : attributes) {
    TUNEFARM_RETURN_IF_ERROR(Check(cuDeviceGetAttribute(out, attribute, device),
                                   "cuDeviceGetAttribute(" + std::to_string(attribute) + ")"));
  }
  TUNEFARM_RETURN_IF_ERROR(Check(cuDriverGetVersion(&info.driver_version), "cuDriverGetVersion"));
  return info;
}

}  // namespace tunefarm
