// Checked artifacts (issue 15): a checksum per section, verified before anything is parsed or
// mapped, so a damaged file is refused with the section's name; and the artifact's triple and CPU
// features compared with the host's before its code is loaded.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <random>
#include <thread>

#include "common/small_model.h"
#include "tunefarm/compiler/compile.h"
#include "tunefarm/compiler/target.h"
#include "tunefarm/runtime/artifact.h"
#include "tunefarm/runtime/cpu_features.h"
#include "tunefarm/runtime/executor.h"

namespace tunefarm::compiler {
namespace {

constexpr size_t kHeaderBytes = 52;  // docs/formats/artifact.md

uint64_t U64At(const std::string& b, size_t pos) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= uint64_t(uint8_t(b[pos + size_t(i)])) << (8 * i);
  return v;
}

CompileOptions Quiet() {
  CompileOptions options;
  options.warn = [](const std::string&) {};
  return options;
}

// Every bit of the header and a sample of each section -- its first and last bytes and 300 random
// bits in it -- one flip at a time. (Every 4096th bit of the file took 13 minutes of CI: each Parse
// checksums ~47 MB; a different sample is one TUNEFARM_FLIP_SEED away.)
TEST(ArtifactIntegrity, EveryFlipOfAResNet18ArtifactIsRefusedNamingItsSection) {
  auto artifact = CompileModel("resnet-18", HostTarget(), Quiet());
  ASSERT_TRUE(artifact.ok()) << artifact.status().ToString();
  std::string bytes = artifact->Serialize();
  ASSERT_TRUE(runtime::Artifact::Parse(bytes).ok());
  // Section extents from the header: metadata, parameter, library.
  size_t ends[3], pos = kHeaderBytes;
  for (int s = 0; s < 3; ++s) ends[s] = pos += U64At(bytes, 12 + size_t(s) * 12);
  ASSERT_EQ(ends[2], bytes.size());
  auto section_of = [&](size_t byte) -> std::string {
    if (byte < kHeaderBytes) return "header";
    if (byte < ends[0]) return "metadata section";
    if (byte < ends[1]) return "parameter section";
    return "library section";
  };
  std::vector<size_t> bits;
  for (size_t bit = 0; bit < kHeaderBytes * 8; ++bit) bits.push_back(bit);
  const char* seed_env = std::getenv("TUNEFARM_FLIP_SEED");
  const uint64_t seed = seed_env ? std::strtoull(seed_env, nullptr, 10) : 2026;
  std::mt19937_64 rng(seed);
  constexpr int kRandomBitsPerSection = 300;
  size_t begin = kHeaderBytes;
  for (size_t end : ends) {
    for (int b = 0; b < 8; ++b) bits.insert(bits.end(), {begin * 8 + size_t(b), (end - 1) * 8 + size_t(b)});
    std::uniform_int_distribution<size_t> in_section(begin * 8, end * 8 - 1);
    for (int i = 0; i < kRandomBitsPerSection; ++i) bits.push_back(in_section(rng));
    begin = end;
  }

  // Each Parse checks every section it reaches, ~47 MB at memory bandwidth: split the flips over
  // the cores, each with its own copy of the file.
  const unsigned workers = std::max(1u, std::min(4u, std::thread::hardware_concurrency()));
  std::vector<std::map<std::string, int>> counts(workers);
  std::vector<std::string> failures(workers);
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> threads;
  for (unsigned w = 0; w < workers; ++w) {
    threads.emplace_back([&, w] {
      std::string mine = bytes;
      for (size_t i = w; i < bits.size() && failures[w].empty(); i += workers) {
        const size_t bit = bits[i], byte = bit / 8;
        mine[byte] = char(mine[byte] ^ (1 << (bit % 8)));
        auto parsed = runtime::Artifact::Parse(mine);
        mine[byte] = char(mine[byte] ^ (1 << (bit % 8)));
        const std::string expected = section_of(byte);
        if (parsed.ok()) {
          failures[w] = "flip of bit " + std::to_string(bit) + " in the " + expected + " was accepted";
        } else if (parsed.status().message().find(expected) == std::string::npos) {
          failures[w] =
              "flip of bit " + std::to_string(bit) + " in the " + expected + ": " + parsed.status().ToString();
        }
        ++counts[w][expected];
      }
    });
  }
  for (auto& t : threads) t.join();
  for (const auto& f : failures) ASSERT_TRUE(f.empty()) << f;
  std::map<std::string, int> refused;
  for (const auto& c : counts) {
    for (const auto& [section, n] : c) refused[section] += n;
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf(
      "%zu flips over %zu bytes (seed %llu) refused in %.1f s on %u threads: header %d, metadata %d, "
      "parameter %d, library %d\n",
      bits.size(), bytes.size(), static_cast<unsigned long long>(seed), seconds, workers, refused["header"],
      refused["metadata section"], refused["parameter section"], refused["library section"]);
  EXPECT_EQ(refused["header"], int(kHeaderBytes * 8));
  for (const char* section : {"metadata section", "parameter section", "library section"}) {
    EXPECT_EQ(refused[section], kRandomBitsPerSection + 16) << section;
  }
  EXPECT_TRUE(runtime::Artifact::Parse(bytes).ok()) << "the flips were not all undone";
}

class HostCheck : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = ::testing::TempDir() + "tunefarm_host_check_" + std::to_string(getpid()) + ".onnx";
    ASSERT_TRUE(testing::WriteSmallCnnOnnx(path_));
  }
  void TearDown() override { std::remove(path_.c_str()); }
  runtime::Artifact Compile(const std::string& target_text) {
    auto target = ParseTarget(target_text);
    EXPECT_TRUE(target.ok()) << target.status().ToString();
    auto a = CompileModel(path_, *target, Quiet());
    EXPECT_TRUE(a.ok()) << a.status().ToString();
    return std::move(*a);
  }
  std::string path_;
};

TEST_F(HostCheck, AnArtifactForABoardIsRefusedNamingBothMachines) {
  runtime::Artifact arm = Compile("rasp4b");
  EXPECT_EQ(arm.triple, "aarch64-unknown-linux-gnu");
  EXPECT_NE(std::find(arm.cpu_features.begin(), arm.cpu_features.end(), "neon"), arm.cpu_features.end());
  auto reparsed = runtime::Artifact::Parse(arm.Serialize());
  ASSERT_TRUE(reparsed.ok());
  EXPECT_EQ(reparsed->cpu_features, arm.cpu_features);
  auto loaded = runtime::Executor::Load(std::move(*reparsed));
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.status().message(),
            "the artifact was compiled for aarch64-unknown-linux-gnu (cortex-a72), aarch64 code, but this machine is "
            "x86_64: compile it for this machine's target or run it where it belongs");
}

TEST_F(HostCheck, AnArtifactNeedingAFeatureThisCpuLacksIsRefusedNamingIt) {
  // The host's own artifact loads; one built for a CPU with a feature this one lacks does not.
  runtime::Artifact native = Compile("llvm");
  EXPECT_FALSE(native.cpu_features.empty());
  EXPECT_TRUE(runtime::Executor::Load(std::move(native)).ok());
  const std::vector<std::string> host = runtime::HostCpuFeatures();
  std::string lacking;
  for (const std::string& f : runtime::CheckableCpuFeatures(runtime::CpuArch::kX86_64)) {
    if (std::find(host.begin(), host.end(), f) == host.end()) lacking = f;
  }
  if (lacking.empty()) GTEST_SKIP() << "this CPU has every feature the runtime checks";
  runtime::Artifact other = Compile("llvm -mcpu=x86-64-v4 -mattr=+avx512f,+" + lacking);
  auto loaded = runtime::Executor::Load(std::move(other));
  ASSERT_FALSE(loaded.ok());
  // Every feature x86-64-v4 adds that this CPU lacks is named (a CPU without AVX-512 lacks several).
  const std::string& m = loaded.status().message();
  const std::string head =
      "the artifact was compiled for " + HostTarget().triple + " (x86-64-v4) and needs CPU features ";
  ASSERT_EQ(m.rfind(head, 0), 0u) << m;
  const size_t end = m.find(" that this x86_64 CPU lacks", head.size());
  ASSERT_NE(end, std::string::npos) << m;
  const std::string named = "," + m.substr(head.size(), end - head.size()) + ",";
  EXPECT_NE(named.find("," + lacking + ","), std::string::npos) << m;
}

TEST(ArtifactTargets, ANonLinuxTripleIsRefusedWhenTheTargetIsParsed) {
  auto t = ParseTarget("llvm -mtriple=x86_64-pc-windows-msvc");
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("triple x86_64-pc-windows-msvc is not a Linux triple; the tunefarm runtime loads "
                                      "Linux shared libraries only"),
            std::string::npos)
      << t.status().ToString();
}

}  // namespace
}  // namespace tunefarm::compiler
