// The CUDA driver loaded at run time: on a machine without a driver (CI), a clear error naming
// the library; on a GPU host, the device described from the driver's own attributes.
#include "tunefarm/runtime/cuda_driver.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <string>

#include "common/gpu_test.h"

namespace tunefarm {
namespace {

TEST(CudaDriver, WithoutADriverLoadSaysSoClearly) {
  TUNEFARM_NEED_NO_DRIVER();
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
  TUNEFARM_NEED_GPU();
  auto d = CudaDriver::Load();
  ASSERT_TRUE(d.ok()) << d.status().ToString();
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
  std::printf("CUDA device 0: %s, %s, %d SMs, %zu MiB, driver %d\n", info->name.c_str(), info->arch().c_str(),
              info->sm_count, info->memory_bytes >> 20, info->driver_version);
  auto missing = (*d)->Describe(*count);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().message(),
            "no CUDA device " + std::to_string(*count) + " (this machine has " + std::to_string(*count) + ")");
  // A driver error reads as the call, the error's name and the driver's text.
  Status bad = (*d)->Check(1, "cuModuleLoadData(conv2d_3)");
  EXPECT_EQ(bad.message().rfind("cuModuleLoadData(conv2d_3): CUDA_ERROR_INVALID_VALUE (1): ", 0), 0u) << bad.message();
}

// The probe's three failures read apart; here, without a driver, the first.
TEST(CudaDriver, TheProbeSaysWhichOfTheThreeWaysCudaIsMissing) {
  const CudaProbe probe = ProbeCuda();
  switch (probe.availability) {
    case CudaAvailability::kReady:
      EXPECT_TRUE(probe.message.empty()) << probe.message;
      EXPECT_GT(probe.device_count, 0);
      break;
    case CudaAvailability::kNoDriver:
      EXPECT_EQ(probe.message.rfind("no CUDA driver: " + CudaDriverLibraryName() + " cannot be loaded (", 0), 0u)
          << probe.message;
      break;
    case CudaAvailability::kInitFailed:
      EXPECT_EQ(probe.message.rfind("the CUDA driver (" + CudaDriverLibraryName() + ") loads but cannot be used: ", 0),
                0u)
          << probe.message;
      EXPECT_NE(probe.message.find("CUDA_ERROR_"), std::string::npos) << probe.message;
      break;
    case CudaAvailability::kNoDevice:
      EXPECT_EQ(probe.message.rfind("the CUDA driver works but shows no device (CUDA_VISIBLE_DEVICES=", 0), 0u)
          << probe.message;
      break;
  }
}

// TUNEFARM_REQUIRE_GPU=1 turns a GPU test's skip into a failure that names the reason: this binary
// runs its own GPU test again in a child with the variable set.
TEST(CudaDriver, RequiringAGpuTurnsTheSkipIntoAFailure) {
  const CudaProbe probe = ProbeCuda();
  if (probe.availability == CudaAvailability::kReady) GTEST_SKIP() << "a GPU is usable here: nothing would be skipped";
  std::array<char, 4096> self{};
  const ssize_t n = readlink("/proc/self/exe", self.data(), self.size() - 1);
  ASSERT_GT(n, 0);
  const std::string command = "TUNEFARM_REQUIRE_GPU=1 '" + std::string(self.data(), size_t(n)) +
                              "' --gtest_filter=CudaDriver.OnAGpuHostDescribesTheDevice 2>&1";
  FILE* child = popen(command.c_str(), "r");
  ASSERT_NE(child, nullptr);
  std::string output;
  std::array<char, 4096> chunk{};
  for (size_t got; (got = fread(chunk.data(), 1, chunk.size(), child)) > 0;) output.append(chunk.data(), got);
  const int status = pclose(child);
  EXPECT_NE(status, 0) << output;
  EXPECT_NE(output.find("TUNEFARM_REQUIRE_GPU=1: " + probe.message), std::string::npos) << output;
  EXPECT_NE(output.find("[  FAILED  ] CudaDriver.OnAGpuHostDescribesTheDevice"), std::string::npos) << output;
}

}  // namespace
}  // namespace tunefarm
