#include "tunefarm/testing/kernel_cases.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <fstream>

#include "tunefarm/runtime/kernel_library.h"

namespace tunefarm::runtime {
namespace {

std::string TempPath(const char* name) { return ::testing::TempDir() + name; }

TEST(KernelCases, RoundTrip) {
  std::vector<KernelCase> cases = {{"conv", {{false, {1, 2, 3}}, {true, {4.5f}}}}, {"dense", {}}};
  std::string path = TempPath("cases.bin");
  ASSERT_TRUE(WriteKernelCases(path, cases).ok());
  auto back = ReadKernelCases(path);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  ASSERT_EQ(back->size(), 2u);
  EXPECT_EQ((*back)[0].kernel_name, "conv");
  EXPECT_EQ((*back)[0].buffers[1].data, std::vector<float>{4.5f});
  EXPECT_TRUE((*back)[0].buffers[1].is_output);
}

TEST(KernelCases, CorruptFilesAreReportedNotCrashed) {
  std::string path = TempPath("bad.bin");
  {
    std::ofstream out(path, std::ios::binary);
    out << "NOPE";
  }
  auto r = ReadKernelCases(path);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("bad magic"), std::string::npos) << r.status().ToString();

  std::vector<KernelCase> cases = {{"conv", {{false, std::vector<float>(100, 1.0f)}}}};
  ASSERT_TRUE(WriteKernelCases(path, cases).ok());
  std::FILE* f = std::fopen(path.c_str(), "r+b");
  ASSERT_NE(f, nullptr);
  std::fseek(f, 0, SEEK_END);
  long size = std::ftell(f);
  std::fclose(f);
  ASSERT_EQ(truncate(path.c_str(), size - 10), 0);
  r = ReadKernelCases(path);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("truncated buffer"), std::string::npos) << r.status().ToString();
}

TEST(KernelCases, HostileSizesAreRejectedBeforeAllocating) {
  std::string bytes("TFKC", 4);
  auto put32 = [&](uint32_t v) { bytes.append(reinterpret_cast<const char*>(&v), 4); };
  put32(1);  // version
  put32(1);  // one case
  put32(1);
  bytes += "k";
  put32(1);                        // one buffer
  bytes += '\0';                   // input
  uint64_t n = uint64_t(1) << 30;  // 4 GiB of floats claimed, none present
  bytes.append(reinterpret_cast<const char*>(&n), 8);
  auto r = ParseKernelCases(bytes, "hostile");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "hostile: truncated buffer in case 0");
}

TEST(KernelCases, RelativeError) {
  EXPECT_DOUBLE_EQ(MaxRelativeError({1, 2}, {1, 2}), 0.0);
  EXPECT_NEAR(MaxRelativeError({1, 2.1f}, {1, 2}), 0.05, 1e-6);
  EXPECT_TRUE(std::isinf(MaxRelativeError({1}, {1, 2})));
}

TEST(KernelLibrary, MissingLibraryIsAnError) {
  auto lib = KernelLibrary::Open("/nonexistent/libkernels.so");
  ASSERT_FALSE(lib.ok());
  EXPECT_NE(lib.status().message().find("cannot load kernel library /nonexistent/libkernels.so"), std::string::npos);
}

}  // namespace
}  // namespace tunefarm::runtime
