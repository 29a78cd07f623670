// Target strings: tags, options, canonical form, and the messages of every malformed input.
#include "tunefarm/compiler/target.h"

#include <gtest/gtest.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace tunefarm::compiler {
namespace {

TEST(Target, Tags) {
  auto r4 = ParseTarget("rasp4b");
  ASSERT_TRUE(r4.ok()) << r4.status().ToString();
  EXPECT_EQ(r4->triple, "aarch64-unknown-linux-gnu");
  EXPECT_EQ(r4->cpu, "cortex-a72");
  EXPECT_EQ(r4->vector_lanes, 4);
  EXPECT_EQ(r4->keys, (std::vector<std::string>{"arm_cpu", "cpu"}));
  EXPECT_EQ(r4->model, "rasp4b");
  EXPECT_FALSE(r4->is_host);
  auto r3 = ParseTarget("rasp3b");
  ASSERT_TRUE(r3.ok());
  EXPECT_EQ(r3->triple, "armv7-unknown-linux-gnueabihf");
  EXPECT_EQ(ParseTarget("x86-avx512")->vector_lanes, 16);
  EXPECT_EQ(ParseTarget("x86-avx2")->vector_lanes, 8);
  auto cuda = ParseTarget("cuda -arch=sm_90");
  ASSERT_TRUE(cuda.ok());
  EXPECT_EQ(cuda->keys, (std::vector<std::string>{"cuda", "gpu"}));
}

TEST(Target, GpuTagsCarryTheLimitsTheValidityCheckNeeds) {
  auto h200 = ParseTarget("h200");
  ASSERT_TRUE(h200.ok()) << h200.status().ToString();
  EXPECT_EQ(h200->kind, TargetKind::kCuda);
  EXPECT_EQ(h200->arch, "sm_90");
  EXPECT_EQ(h200->model, "h200");
  EXPECT_EQ(h200->keys, (std::vector<std::string>{"cuda", "gpu"}));
  EXPECT_EQ(h200->gpu.sm_count, 132);
  EXPECT_EQ(h200->gpu.max_threads_per_block, 1024);
  EXPECT_EQ(h200->gpu.max_shared_memory_per_block, 48 << 10);
  EXPECT_EQ(h200->gpu.max_shared_memory_optin, 227 << 10);
  EXPECT_EQ(h200->gpu.max_registers_per_block, 65536);
  EXPECT_EQ(h200->gpu.warp_size, 32);
  EXPECT_EQ(h200->ToString(), "cuda -arch=sm_90 -model=h200");
  auto again = ParseTarget(h200->ToString());  // the tag's limits come back with its model
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->gpu.sm_count, 132);
  EXPECT_EQ(again->ToString(), h200->ToString());
  EXPECT_EQ(ParseTarget("a100")->arch, "sm_80");
  EXPECT_EQ(ParseTarget("rtx4090")->arch, "sm_89");
  EXPECT_EQ(ParseTarget("t4")->gpu.max_shared_memory_optin, 64 << 10);
  EXPECT_EQ(ParseTarget("cuda -arch=sm_90a")->arch, "sm_90a");
  EXPECT_EQ(ParseTarget("cuda -arch=sm_80")->gpu.sm_count, 0);  // a bare arch: generic limits
}

TEST(Target, BareCudaIsTheFirstVisibleGpu) {
  auto t = ParseTarget("cuda");
  if (t.ok()) {  // a GPU host
    EXPECT_EQ(t->arch.rfind("sm_", 0), 0u);
    EXPECT_FALSE(t->model.empty());
    EXPECT_GT(t->gpu.sm_count, 0);
    return;
  }
  EXPECT_NE(t.status().message().find("target 'cuda' means this machine's first GPU, and no CUDA driver"),
            std::string::npos)
      << t.status().message();
  EXPECT_NE(t.status().message().find("name the card instead: cuda -arch=sm_NN, or a tag (h100, h200"),
            std::string::npos)
      << t.status().message();
}

TEST(Target, NativeIsTheHost) {
  auto t = ParseTarget("native");
  ASSERT_TRUE(t.ok());
  EXPECT_TRUE(t->is_host);
  EXPECT_FALSE(t->cpu.empty());
  auto again = ParseTarget(t->ToString());
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(again->ToString(), t->ToString());
}

TEST(Target, ExplicitLlvmOptions) {
  auto t = ParseTarget("llvm -mtriple=aarch64-linux-gnu -mcpu=cortex-a53 -mattr=+neon -model=myboard");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->triple, "aarch64-unknown-linux-gnu");  // normalized
  EXPECT_EQ(t->model, "myboard");
  EXPECT_EQ(t->keys, (std::vector<std::string>{"arm_cpu", "cpu"}));
  auto rt = ParseTarget(t->ToString());
  ASSERT_TRUE(rt.ok());
  EXPECT_EQ(rt->ToString(), t->ToString());
}

struct BadTarget {
  const char* text;
  const char* message_part;
};

class BadTargets : public ::testing::TestWithParam<BadTarget> {};

TEST_P(BadTargets, AreInvalidArgumentsNamingTheProblem) {
  auto t = ParseTarget(GetParam().text);
  ASSERT_FALSE(t.ok()) << GetParam().text;
  EXPECT_EQ(t.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(t.status().message().find(GetParam().message_part), std::string::npos) << t.status().message();
}

INSTANTIATE_TEST_SUITE_P(
    Messages, BadTargets,
    ::testing::Values(BadTarget{"", "empty target string"}, BadTarget{"gpu", "unknown target kind 'gpu'"},
                      BadTarget{"llvm -mcpu", "malformed target option '-mcpu'"},
                      BadTarget{"llvm -foo=bar", "unknown option '-foo'"},
                      BadTarget{"llvm -mcpu=pentium99", "unknown CPU 'pentium99'"},
                      BadTarget{"llvm -mtriple=nonsense-unknown-none", "unknown target triple"},
                      BadTarget{"llvm -mattr=+avx9000", "unknown feature 'avx9000'"},
                      BadTarget{"llvm -mattr=avx2", "must start with + or -"},
                      BadTarget{"llvm -mtriple=x86_64-linux-gnu -mtriple=aarch64-linux-gnu",
                                "gives -mtriple twice; give each option once"},
                      BadTarget{"cuda -arch=sm_80 -arch=sm_90", "gives -arch twice"},
                      BadTarget{"cuda -arch=90", "bad CUDA arch '90'"},
                      BadTarget{"cuda -mcpu=x", "unknown option '-mcpu' for cuda target"},
                      BadTarget{"cuda -arch=sm_70", "CUDA arch 'sm_70' is not supported; supported: sm_75, sm_80"},
                      BadTarget{"cuda -arch=sm_100", "CUDA arch 'sm_100' is not supported"},
                      BadTarget{"h200 -arch=sm_80", "h200 is sm_90, not sm_80"},
                      BadTarget{"cuda -model=a100 -arch=sm_90", "a100 is sm_80, not sm_90"},
                      BadTarget{"h100 -emulate=gpu",
                                "-emulate takes 'host' (run the GPU kernels on this CPU), got 'gpu'"},
                      BadTarget{"llvm -emulate=host", "unknown option '-emulate'"}),
    [](const ::testing::TestParamInfo<BadTarget>& info) { return "case" + std::to_string(info.index); });

// `...kind == "cuda"`, `"llvm" != x.kind` and the like (no <regex>: GCC 12's regex trips
// -Wmaybe-uninitialized in sanitizer builds).
bool ComparesAKindByName(const std::string& line) {
  auto ident_before = [&](size_t end) {  // the identifier ending at `end` (exclusive)
    size_t b = end;
    while (b > 0 && (std::isalnum(static_cast<unsigned char>(line[b - 1])) || line[b - 1] == '_')) --b;
    return line.substr(b, end - b);
  };
  auto ends_with_kind = [](const std::string& id) {
    return id.size() >= 4 && id.compare(id.size() - 4, 4, "kind") == 0;
  };
  for (const char* name : {"\"cuda\"", "\"llvm\""}) {
    for (size_t at = line.find(name); at != std::string::npos; at = line.find(name, at + 1)) {
      size_t b = at;
      while (b > 0 && line[b - 1] == ' ') --b;
      if (b >= 2 && (line.compare(b - 2, 2, "==") == 0 || line.compare(b - 2, 2, "!=") == 0)) {
        size_t e = b - 2;
        while (e > 0 && line[e - 1] == ' ') --e;
        if (ends_with_kind(ident_before(e))) return true;
      }
      size_t a = at + std::string(name).size();
      while (a < line.size() && line[a] == ' ') ++a;
      if (line.compare(a, 2, "==") == 0 || line.compare(a, 2, "!=") == 0) {
        a += 2;
        while (a < line.size() && line[a] == ' ') ++a;
        size_t e = a;
        while (e < line.size() && (std::isalnum(static_cast<unsigned char>(line[e])) || line[e] == '_' ||
                                   line[e] == '.' || line[e] == '-' || line[e] == '>')) {
          ++e;
        }
        if (ends_with_kind(ident_before(e))) return true;
      }
    }
  }
  return false;
}

// The kind of a target is an enum compared as one: no source file outside the target parser
// compares a kind's name as a string (it was compared in 20 places across 10 files, each a branch a
// new backend had to find).
TEST(TargetKind, NoSourceComparesAKindByItsName) {
  const char* src = std::getenv("TUNEFARM_SOURCE_DIR");
  ASSERT_NE(src, nullptr) << "TUNEFARM_SOURCE_DIR is set by CTest";
  std::vector<std::string> offenders;
  int files = 0;
  for (const char* dir : {"compiler", "tuner", "tools", "runtime", "rpc_server", "tracker", "bench", "tests"}) {
    const std::filesystem::path root = std::filesystem::path(src) / dir;
    if (!std::filesystem::exists(root)) continue;
    for (const auto& e : std::filesystem::recursive_directory_iterator(root)) {
      const std::string ext = e.path().extension().string();
      if (!e.is_regular_file() || (ext != ".cc" && ext != ".h")) continue;
      if (e.path().filename() == "target_parser.cc" || e.path().filename() == "target_test.cc") continue;
      ++files;
      std::ifstream in(e.path());
      std::string line;
      for (int n = 1; std::getline(in, line); ++n) {
        if (ComparesAKindByName(line)) offenders.push_back(e.path().string() + ":" + std::to_string(n) + ": " + line);
      }
    }
  }
  EXPECT_GT(files, 100);
  std::ostringstream all;
  for (const auto& o : offenders) all << o << "\n";
  EXPECT_TRUE(offenders.empty()) << "compare Target::kind with TargetKind:\n" << all.str();
  // The scan is not blind: it sees the forms it forbids, and only those.
  EXPECT_TRUE(ComparesAKindByName(R"(if (t.kind == "cuda") {)"));
  EXPECT_TRUE(ComparesAKindByName(R"(if (target->kind != "llvm"))"));
  EXPECT_TRUE(ComparesAKindByName(R"(return "cuda" == spec.target.kind;)"));
  EXPECT_FALSE(ComparesAKindByName(R"(if (device == "cuda") {)"));
  EXPECT_FALSE(ComparesAKindByName(R"(if (t.kind == TargetKind::kCuda) {)"));
}

TEST(TargetKind, NamesRoundTripThroughTargetStrings) {
  for (const char* text : {"native", "rasp4b", "h100", "cuda -arch=sm_80", "h100 -emulate=host"}) {
    auto t = ParseTarget(text);
    ASSERT_TRUE(t.ok()) << text;
    EXPECT_EQ(t->ToString().rfind(TargetKindName(t->kind), 0), 0u) << t->ToString();
    auto again = ParseTarget(t->ToString());
    ASSERT_TRUE(again.ok()) << t->ToString();
    EXPECT_EQ(again->ToString(), t->ToString());
    EXPECT_EQ(again->emulated, t->emulated);
  }
  // Emulation is the target's: a CUDA kind whose kernels run on this CPU, said in its string.
  auto emulated = ParseTarget("h100 -emulate=host");
  ASSERT_TRUE(emulated.ok());
  EXPECT_TRUE(emulated->emulated && emulated->kind == TargetKind::kCuda);
  EXPECT_EQ(emulated->ToString(), "cuda -arch=sm_90 -model=h100 -emulate=host");
}

}  // namespace
}  // namespace tunefarm::compiler

namespace tunefarm::compiler {
namespace {

// A foreign triple without -mcpu is that architecture's generic CPU with none of this host's
// features (it used to fail with "unknown feature 'prfchw'" on an x86 host).
TEST(Target, AForeignTripleWithoutACpuIsGeneric) {
  auto t = ParseTarget("llvm -mtriple=aarch64-linux-gnu");
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->cpu, "generic");
  EXPECT_EQ(t->features, "");
  EXPECT_EQ(t->ToString(), "llvm -mtriple=aarch64-unknown-linux-gnu -mcpu=generic");
  auto with_attr = ParseTarget("llvm -mtriple=aarch64-linux-gnu -mattr=+neon");
  ASSERT_TRUE(with_attr.ok()) << with_attr.status().message();
  EXPECT_EQ(with_attr->features, "+neon");
}

}  // namespace
}  // namespace tunefarm::compiler
