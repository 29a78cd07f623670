// How a GPU test decides whether it can run, in one place for every test binary.
//
//   TUNEFARM_NEED_GPU()        at the top of a test that needs a usable CUDA device: skips with the
//                              probe's message (no driver / driver loads but cuInit fails / no
//                              device, runtime/cuda_driver.h) -- or, with TUNEFARM_REQUIRE_GPU=1
//                              in the environment (the GPU check kit's runner sets it), fails with
//                              it, so a GPU run cannot come back green having run nothing.
//   TUNEFARM_NEED_NO_DRIVER()  at the top of a test of the no-driver message: runs only where the
//                              driver library is really absent (not where it loads and cuInit fails).
#ifndef TUNEFARM_TESTS_COMMON_GPU_TEST_H_
#define TUNEFARM_TESTS_COMMON_GPU_TEST_H_

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>

#include "tunefarm/runtime/cuda_driver.h"

namespace tunefarm::testing {

inline bool GpuRequired() {
  const char* v = std::getenv("TUNEFARM_REQUIRE_GPU");
  return v && std::strcmp(v, "1") == 0;
}

}  // namespace tunefarm::testing

#define TUNEFARM_NEED_GPU()                                                                                    \
  do {                                                                                                         \
    const ::tunefarm::CudaProbe tunefarm_probe_ = ::tunefarm::ProbeCuda();                                     \
    if (tunefarm_probe_.availability != ::tunefarm::CudaAvailability::kReady) {                                \
      if (::tunefarm::testing::GpuRequired()) FAIL() << "TUNEFARM_REQUIRE_GPU=1: " << tunefarm_probe_.message; \
      GTEST_SKIP() << tunefarm_probe_.message;                                                                 \
    }                                                                                                          \
  } while (0)

#define TUNEFARM_NEED_NO_DRIVER()                                                                          \
  do {                                                                                                     \
    const ::tunefarm::CudaProbe tunefarm_probe_ = ::tunefarm::ProbeCuda();                                 \
    if (tunefarm_probe_.availability != ::tunefarm::CudaAvailability::kNoDriver) {                         \
      GTEST_SKIP() << "a CUDA driver library is installed here: the no-driver message cannot be observed"; \
    }                                                                                                      \
  } while (0)

#endif  // TUNEFARM_TESTS_COMMON_GPU_TEST_H_
