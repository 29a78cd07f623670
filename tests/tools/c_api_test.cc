// The runtime's C API on a real artifact (squeezenet-1.1 compiled in the test), and from C.
#include "tunefarm/runtime/c_api.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <vector>

#include "common/gpu_test.h"
#include "tunefarm/compiler/compile.h"

extern "C" int tunefarm_c_api_missing_file_fails(void);

TEST(CApi, LoadsRunsAndReportsErrors) {
  EXPECT_EQ(tunefarm_c_api_missing_file_fails(), 1);
  tunefarm::compiler::CompileOptions options;
  options.warn = [](const std::string&) {};
  auto artifact = tunefarm::compiler::CompileModel("squeezenet-1.1", tunefarm::compiler::HostTarget(), options);
  ASSERT_TRUE(artifact.ok()) << artifact.status().ToString();
  const std::string path = ::testing::TempDir() + "c_api_" + std::to_string(getpid()) + ".tfa";
  ASSERT_TRUE(artifact->WriteFile(path).ok());

  char* error = nullptr;
  TunefarmModel* m = tunefarm_model_load(path.c_str(), &error);
  ASSERT_NE(m, nullptr) << error;
  ASSERT_EQ(tunefarm_model_num_inputs(m), 1);
  EXPECT_STREQ(tunefarm_model_input_name(m, 0), "data");
  int64_t dims[8];
  ASSERT_EQ(tunefarm_model_input_shape(m, 0, dims, 8), 4);
  EXPECT_EQ(dims[1], 3);
  EXPECT_EQ(tunefarm_model_input_name(m, 5), nullptr);
  std::vector<float> x(size_t(dims[0] * dims[1] * dims[2] * dims[3]), 0.5f);
  EXPECT_NE(tunefarm_model_set_input(m, "data", x.data(), 12, &error), 0);
  ASSERT_NE(error, nullptr);
  EXPECT_NE(std::string(error).find("input 'data' takes"), std::string::npos) << error;
  tunefarm_free_string(error);
  error = nullptr;
  ASSERT_EQ(tunefarm_model_set_input(m, "data", x.data(), x.size() * 4, &error), 0);
  ASSERT_EQ(tunefarm_model_run(m, &error), 0) << error;
  size_t bytes = 0;
  const float* y = static_cast<const float*>(tunefarm_model_output(m, 0, &bytes));
  ASSERT_NE(y, nullptr);
  EXPECT_EQ(bytes, 4000u);
  float sum = 0;
  for (int i = 0; i < 1000; ++i) sum += y[i];
  EXPECT_NEAR(sum, 1.0f, 1e-3f);  // the zoo's classifier ends in softmax
  tunefarm_model_free(m);
  std::remove(path.c_str());
}

// A device per load: "cpu" as above, "cuda[:N]" for a CUDA artifact (the GPU executor; without a
// driver its error), anything else refused by name.
TEST(CApi, LoadOnADeviceNamesWhatIsWrong) {
  tunefarm::compiler::CompileOptions options;
  options.warn = [](const std::string&) {};
  auto artifact = tunefarm::compiler::CompileModel("squeezenet-1.1", *tunefarm::compiler::ParseTarget("h100"), options);
  ASSERT_TRUE(artifact.ok()) << artifact.status().ToString();
  const std::string path = ::testing::TempDir() + "c_api_cuda_" + std::to_string(getpid()) + ".tfa";
  ASSERT_TRUE(artifact->WriteFile(path).ok());
  char* error = nullptr;
  EXPECT_EQ(tunefarm_model_load_on(path.c_str(), "tpu", &error), nullptr);
  ASSERT_NE(error, nullptr);
  EXPECT_STREQ(error, "unknown device 'tpu': expected cpu, cuda or cuda:N (N from 0 to 1023)");
  tunefarm_free_string(error);
  error = nullptr;
  EXPECT_EQ(tunefarm_model_load_on(path.c_str(), "cpu", &error), nullptr);
  ASSERT_NE(error, nullptr);
  EXPECT_NE(std::string(error).find("run it on a GPU host with --device cuda"), std::string::npos) << error;
  tunefarm_free_string(error);
  error = nullptr;
  TunefarmModel* m = tunefarm_model_load_on(path.c_str(), "cuda:0", &error);
  const tunefarm::CudaProbe probe = tunefarm::ProbeCuda();
  if (probe.availability != tunefarm::CudaAvailability::kReady) {
    // No usable GPU here: exactly the driver's own reason, never an unexpected CUDA error.
    if (tunefarm::testing::GpuRequired()) ADD_FAILURE() << "TUNEFARM_REQUIRE_GPU=1: " << probe.message;
    ASSERT_EQ(m, nullptr);
    ASSERT_NE(error, nullptr);
    const std::string reason = probe.availability == tunefarm::CudaAvailability::kNoDevice
                                   ? std::string("cuda:0")
                                   : tunefarm::CudaDriver::Load().status().message();
    EXPECT_NE(std::string(error).find(reason), std::string::npos) << error << "\nexpected: " << reason;
    tunefarm_free_string(error);
  } else {
    ASSERT_NE(m, nullptr) << error;
    EXPECT_EQ(tunefarm_model_num_inputs(m), 1);
    std::vector<float> x(3 * 224 * 224, 0.5f);
    ASSERT_EQ(tunefarm_model_set_input(m, "data", x.data(), x.size() * 4, &error), 0) << error;
    ASSERT_EQ(tunefarm_model_run(m, &error), 0) << error;
    size_t bytes = 0;
    EXPECT_NE(tunefarm_model_output(m, 0, &bytes), nullptr);
    EXPECT_EQ(bytes, 4000u);
    tunefarm_model_free(m);
  }
  std::remove(path.c_str());
}
