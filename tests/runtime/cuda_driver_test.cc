// The CUDA driver loaded at run time: on a machine without a driver (CI), a clear error naming
// the library; on a GPU host, the device described from the driver's own attributes.
#include <gtest/gtest.h>

#include <dlfcn.h>

#include "tunefarm/runtime/cuda_driver.h"

namespace tunefarm {
namespace {

bool DriverPresent() {
  void* h = dlopen(CudaDriverLibraryName().c_str(), RTLD_NOW | RTLD_LOCAL);
  if (h) dlclose(h);
  return h != nullptr;
}

TEST(CudaDriver, WithoutADriverLoadSaysSoClearly) {
  if (DriverPresent()) GTEST_SKIP() << "a CUDA driver is installed here: the no-driver message cannot be observed";
  auto d = CudaDriver::Load();
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.status().code(), StatusCode::kFailedPrecondition);
  const std::string& m = d.status().message();
  EXPECT_EQ(m.rfind("no CUDA driver: " + CudaDriverLibraryName() + " cannot be loaded (", 0), 0u) << m;
  EXPECT_NE(m.find("install the NVIDIA driver, or run CUDA work on a GPU host"), std::string::npos) << m;
  // Cached: the same answer, no second dlopen.
  EXPECT_EQ(CudaDriver::Load().status().message(), m);
}

TEST(CudaDriver, OnAGpuHostDescribesTheDevice) {
  if (!DriverPresent()) GTEST_SKIP() << "no CUDA driver (" << CudaDriverLibraryName() << ") on this machine";
  auto d = CudaDriver::Load();
  if (!d.ok()) GTEST_SKIP() << "the CUDA driver is present but unusable here: " << d.status().message();
  auto count = (*d)->DeviceCount();
  ASSERT_TRUE(count.ok()) << count.status().ToString();
  ASSERT_GT(*count, 0);
  auto info = (*d)->Describe(0);
  ASSERT_TRUE(info.ok()) << info.status().ToString();
  EXPECT_FALSE(info->name.empty());
  EXPECT_GT(info->memory_bytes, size_t(1) << 30);
  EXPECT_GE(info->compute_major, 7);
  EXPECT_EQ(info->warp_size, 32);
  EXPECT_GE(info->max_threads_per_block, 1024);
  EXPECT_GE(info->max_shared_memory_per_block, 48 << 10);
  EXPECT_GT(info->driver_version, 0);
  std::printf("CUDA device 0: %s, %s, %d SMs, %zu MiB, driver %d\n", info->name.c_str(), info->arch().c_str(), info->sm_count,
              info->memory_bytes >> 20, info->driver_version);
  auto missing = (*d)->Describe(*count);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().message(), "no CUDA device " + std::to_string(*count) + " (this machine has " + std::to_string(*count) + ")");
  // A driver error reads as the call, the error's name and the driver's text.
  Status bad = (*d)->Check(1, "cuModuleLoadData(conv2d_3)");
  EXPECT_EQ(bad.message().rfind("cuModuleLoadData(conv2d_3): CUDA_ERROR_INVALID_VALUE (1): ", 0), 0u) << bad.message();
}

}  // namespace
}  // namespace tunefarm
