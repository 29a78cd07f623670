// Target strings: tags, options, canonical form, and the messages of every malformed input.
#include <gtest/gtest.h>

#include "tunefarm/compiler/target.h"

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
    ::testing::Values(BadTarget{"", "empty target string"},
                      BadTarget{"gpu", "unknown target kind 'gpu'"},
                      BadTarget{"llvm -mcpu", "malformed target option '-mcpu'"},
                      BadTarget{"llvm -foo=bar", "unknown option '-foo'"},
                      BadTarget{"llvm -mcpu=pentium99", "unknown CPU 'pentium99'"},
                      BadTarget{"llvm -mtriple=nonsense-unknown-none", "unknown target triple"},
                      BadTarget{"llvm -mattr=+avx9000", "unknown feature 'avx9000'"},
                      BadTarget{"llvm -mattr=avx2", "must start with + or -"},
                      BadTarget{"cuda -arch=90", "bad CUDA arch '90'"},
                      BadTarget{"cuda -mcpu=x", "unknown option '-mcpu' for cuda target"}),
    [](const ::testing::TestParamInfo<BadTarget>& info) { return "case" + std::to_string(info.index); });

}  // namespace
}  // namespace tunefarm::compiler
