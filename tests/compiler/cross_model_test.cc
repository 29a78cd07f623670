// The deployment path on an emulated Raspberry Pi: resnet-18 compiled for rasp4b (aarch64 NEON,
// cross-linked with the Debian toolchain) runs under qemu-aarch64 in the cross-built runtime
// (tunefarm-run, no LLVM) and matches the x86 build's output; so do the int8 models of
// tests/data/quantized compiled for rasp5, rasp4b and rasp3b, byte for byte. A missing qemu or cross-built
// runtime is a missing fixture (scripts/setup.sh installs both).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>

#include "common/test_files.h"
#include "tunefarm/compiler/compile.h"
#include "tunefarm/runtime/executor.h"
#include "tunefarm/runtime/npy.h"

namespace tunefarm::compiler {
namespace {

bool Exists(const std::string& p) {
  struct stat st;
  return stat(p.c_str(), &st) == 0;
}

TEST(CrossModel, ResNet18ArtifactForRasp4bMatchesX86UnderQemu) {
  const std::string runner = TUNEFARM_RUN_AARCH64;
  if (!Exists(runner)) TUNEFARM_MISSING_FIXTURE("cross-built tunefarm-run missing: " << runner);
  if (system("qemu-aarch64 --version > /dev/null 2>&1") != 0) TUNEFARM_MISSING_FIXTURE("qemu-aarch64 not installed");
  const std::string dir = ::testing::TempDir() + "tunefarm_cross_model_" + std::to_string(getpid()) + "/";
  ASSERT_EQ(system(("rm -rf " + dir + " && mkdir -p " + dir).c_str()), 0);

  CompileOptions options;
  options.warn = [](const std::string&) {};
  auto board = ParseTarget("rasp4b");
  ASSERT_TRUE(board.ok());
  auto arm = CompileModel("resnet-18", *board, options);
  ASSERT_TRUE(arm.ok()) << arm.status().ToString();
  ASSERT_TRUE(arm->WriteFile(dir + "r18.tfa").ok());
  auto host = CompileModel("resnet-18", HostTarget(), options);
  ASSERT_TRUE(host.ok()) << host.status().ToString();

  runtime::NpyArray input{runtime::ElementType::kFloat32, {1, 3, 224, 224}, {}};
  std::vector<float> x(3 * 224 * 224);
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (float& v : x) v = dist(rng);
  input.data.assign(reinterpret_cast<const char*>(x.data()), x.size() * 4);
  ASSERT_TRUE(runtime::WriteNpy(dir + "in.npy", input).ok());

  const std::string cmd = "timeout 600 qemu-aarch64 -L /usr/aarch64-linux-gnu " + runner + " " + dir +
                          "r18.tfa --input data=" + dir + "in.npy --output " + dir + "out.npy --repeat 0 > " + dir +
                          "log.txt 2>&1";
  ASSERT_EQ(system(cmd.c_str()), 0) << cmd;
  auto out = runtime::ReadNpy(dir + "out.npy");
  ASSERT_TRUE(out.ok()) << out.status().ToString();

  auto ex = runtime::Executor::Load(std::move(*host));
  ASSERT_TRUE(ex.ok()) << ex.status().ToString();
  ASSERT_TRUE((*ex)->SetInput(0, x.data(), x.size() * 4).ok());
  ASSERT_TRUE((*ex)->Run().ok());
  const float* y = static_cast<const float*>((*ex)->Output(0));
  const float* r = reinterpret_cast<const float*>(out->data.data());
  ASSERT_EQ(out->data.size(), 4000u);
  double diff = 0, mag = 0;
  for (int i = 0; i < 1000; ++i) {
    diff = std::max(diff, double(std::fabs(y[i] - r[i])));
    mag = std::max(mag, double(std::fabs(y[i])));
  }
  std::printf("rasp4b artifact under qemu vs x86: max rel error %.3g\n", diff / mag);
  EXPECT_LE(diff / mag, 1e-4);
  system(("rm -rf " + dir).c_str());
}

// The int8 kernels of the Arm boards -- sdot on the Raspberry Pi 5 (rasp5), smull / saddlp widening
// multiply-adds on the Raspberry Pi 4 (rasp4b), int32 vectors and a floor-based round on the armv7
// Raspberry Pi 3 (rasp3b) -- run under qemu in the cross-built runtime and give the host's output
// byte for byte: integer arithmetic, exact on every instruction set.
TEST(CrossModel, Int8ModelsForTheArmBoardsEqualTheHostUnderQemu) {
  struct Board {
    const char* tag;
    const char* qemu;
    const char* sysroot;
    std::string runner;
  };
  const Board boards[] = {{"rasp5", "qemu-aarch64", "/usr/aarch64-linux-gnu", TUNEFARM_RUN_AARCH64},
                          {"rasp4b", "qemu-aarch64", "/usr/aarch64-linux-gnu", TUNEFARM_RUN_AARCH64},
                          {"rasp3b", "qemu-arm", "/usr/arm-linux-gnueabihf", TUNEFARM_RUN_ARMHF}};
  for (const Board& board : boards) {
    if (!Exists(board.runner)) TUNEFARM_MISSING_FIXTURE("cross-built tunefarm-run missing: " << board.runner);
    if (system((std::string(board.qemu) + " --version > /dev/null 2>&1").c_str()) != 0) {
      TUNEFARM_MISSING_FIXTURE(board.qemu << " not installed");
    }
  }
  const char* src = std::getenv("TUNEFARM_SOURCE_DIR");
  ASSERT_NE(src, nullptr) << "TUNEFARM_SOURCE_DIR is set by CTest";
  const std::string dir = ::testing::TempDir() + "tunefarm_cross_int8_" + std::to_string(getpid()) + "/";
  ASSERT_EQ(system(("rm -rf " + dir + " && mkdir -p " + dir).c_str()), 0);
  CompileOptions options;
  options.warn = [](const std::string&) {};
  for (const char* model : {"qoperator_cnn", "qoperator_contrib"}) {
    const std::string model_dir = std::string(src) + "/tests/data/quantized/" + model;
    auto input = runtime::ReadNpy(model_dir + "/input.npy");
    ASSERT_TRUE(input.ok()) << input.status().ToString();
    auto host = CompileModel(model_dir + "/model.onnx", HostTarget(), options);
    ASSERT_TRUE(host.ok()) << model << ": " << host.status().ToString();
    auto ex = runtime::Executor::Load(std::move(*host));
    ASSERT_TRUE(ex.ok()) << ex.status().ToString();
    ASSERT_TRUE((*ex)->SetInput(0, input->data.data(), input->data.size()).ok());
    ASSERT_TRUE((*ex)->Run().ok());
    const auto* expected = static_cast<const char*>((*ex)->Output(0));
    for (const Board& board : boards) {
      const std::string what = std::string(model) + " on " + board.tag;
      auto arm = CompileModel(model_dir + "/model.onnx", *ParseTarget(board.tag), options);
      ASSERT_TRUE(arm.ok()) << what << ": " << arm.status().ToString();
      const std::string base = dir + model + "_" + board.tag;
      ASSERT_TRUE(arm->WriteFile(base + ".tfa").ok());
      const std::string cmd = "timeout 600 " + std::string(board.qemu) + " -L " + board.sysroot + " " + board.runner +
                              " " + base + ".tfa --input x=" + model_dir + "/input.npy --output " + base +
                              ".npy --repeat 0 > " + base + ".log 2>&1";
      ASSERT_EQ(system(cmd.c_str()), 0) << cmd;
      auto out = runtime::ReadNpy(base + ".npy");
      ASSERT_TRUE(out.ok()) << what << ": " << out.status().ToString();
      ASSERT_EQ(int64_t(out->data.size()), (*ex)->outputs()[0].bytes()) << what;
      EXPECT_EQ(std::memcmp(out->data.data(), expected, out->data.size()), 0) << what << " differs from the host";
    }
  }
  system(("rm -rf " + dir).c_str());
}

}  // namespace
}  // namespace tunefarm::compiler
