// The correctness sample of kernel_correctness_test, cross-compiled for the Raspberry Pi targets
// (rasp4b: aarch64 NEON, rasp3b: armv7 hard-float NEON), linked with the Debian cross toolchain,
// and run under qemu-user by the cross-built kernel_check against the host's reference outputs.
// Skips cleanly when the cross runtime or qemu is missing (scripts/setup.sh installs them).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <thread>

#include "common/kernel_reference.h"
#include "common/test_files.h"
#include "compiler/codegen/object_emitter.h"
#include "tunefarm/testing/kernel_cases.h"

namespace tunefarm::compiler {
namespace {

constexpr int kCasesPerTemplate = 200;
constexpr int kKernelsPerObject = 50;

struct Board {
  const char* tag;
  const char* qemu;
  const char* sysroot;
  const char* kernel_check;  // cross-built by the build (ExternalProject), see tests/CMakeLists.txt
};

bool Exists(const std::string& path) { return access(path.c_str(), F_OK) == 0; }

std::string RunAndCapture(const std::string& cmd, int* exit_code) {
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return out;
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof(buf), p)) > 0;) out.append(buf, n);
  int status = pclose(p);
  *exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return out;
}

class CrossKernels : public ::testing::TestWithParam<Board> {};

TEST_P(CrossKernels, RandomKernelsMatchReferenceUnderQemu) {
  const Board& board = GetParam();
  if (!Exists(board.kernel_check)) TUNEFARM_MISSING_FIXTURE("cross-built kernel_check missing: " << board.kernel_check);
  int rc = 0;
  RunAndCapture(std::string(board.qemu) + " --version", &rc);
  if (rc != 0) TUNEFARM_MISSING_FIXTURE(board.qemu << " not installed");

  auto target = ParseTarget(board.tag);
  ASSERT_TRUE(target.ok()) << target.status().ToString();
  ASSERT_FALSE(target->is_host);
  std::string dir = ::testing::TempDir() + "cross_" + board.tag;
  ASSERT_EQ(system(("rm -rf " + dir + " && mkdir -p " + dir).c_str()), 0);

  std::vector<runtime::KernelCase> cases;
  std::vector<std::string> objects;
  std::vector<KernelSpec> pending;
  std::vector<KernelInfo> infos;
  auto flush = [&]() {
    if (pending.empty()) return;
    size_t first = infos.size();
    auto object = BuildObject(pending, &infos);
    ASSERT_TRUE(object.ok()) << object.status().ToString();
    std::string path = dir + "/part" + std::to_string(objects.size()) + ".o";
    std::ofstream(path, std::ios::binary).write(object->data(), std::streamsize(object->size()));
    objects.push_back(path);
    std::mt19937_64 data_rng(first);
    for (size_t i = 0; i < pending.size(); ++i) {
      const KernelInfo& info = infos[first + i];
      testing::Buffers args = testing::RandomArguments(info, data_rng);
      std::vector<float> expected = testing::ReferenceOutput(pending[i], info, args);
      runtime::KernelCase c{info.symbol, {}};
      for (size_t b = 0; b < args.size(); ++b) {
        bool out = info.buffers[b].role == "output";
        c.buffers.push_back({out, out ? expected : args[b]});
      }
      cases.push_back(std::move(c));
    }
    pending.clear();
  };

  for (const char* tmpl :
       {"conv2d_nchwc", "depthwise_conv2d_nchwc", "dense_pack", "dense_nopack", "conv2d_nchwc_winograd"}) {
    std::mt19937_64 rng(std::hash<std::string>()(tmpl));  // the host test's workload sequence
    for (int i = 0; i < kCasesPerTemplate; ++i) {
      KernelSpec spec;
      spec.workload = testing::RandomWorkload(tmpl, rng);
      spec.epilogue = testing::RandomEpilogue(rng);
      spec.target = *target;
      auto space = GetConfigSpace(spec.workload, *target);
      ASSERT_TRUE(space.ok());
      spec.config_index = i % 5 == 0 ? -1 : space->RandomValid(rng)->index();
      spec.symbol = std::string(tmpl) + "_" + std::to_string(i);
      pending.push_back(spec);
      if (int(pending.size()) == kKernelsPerObject) flush();
      if (HasFatalFailure()) return;
    }
  }
  flush();

  // Link every object into one library with the Debian cross toolchain's gcc driver.
  std::string lib = dir + "/libkernels.so";
  auto driver = LinkerDriverFor(*target);
  ASSERT_TRUE(driver.ok()) << driver.status().ToString();
  std::string link = *driver + " -shared -o " + lib;
  for (const auto& o : objects) link += " " + o;
  ASSERT_EQ(system((link + " -lm").c_str()), 0) << link;
  std::string case_path = dir + "/cases.bin";
  ASSERT_TRUE(runtime::WriteKernelCases(case_path, cases).ok());

  std::string cmd = "timeout 600 " + std::string(board.qemu) + " -L " + board.sysroot + " " + board.kernel_check + " " +
                    lib + " " + case_path + " 2>&1";
  std::string output = RunAndCapture(cmd, &rc);
  EXPECT_EQ(rc, 0) << output;
  EXPECT_NE(
      output.find("kernel_check: " + std::to_string(cases.size()) + "/" + std::to_string(cases.size()) + " passed"),
      std::string::npos)
      << output;
}

INSTANTIATE_TEST_SUITE_P(
    Boards, CrossKernels,
    ::testing::Values(Board{"rasp4b", "qemu-aarch64", "/usr/aarch64-linux-gnu", TUNEFARM_KERNEL_CHECK_AARCH64},
                      Board{"rasp3b", "qemu-arm", "/usr/arm-linux-gnueabihf", TUNEFARM_KERNEL_CHECK_ARMHF}),
    [](const auto& info) { return std::string(info.param.tag); });

// The tuner builds candidates on several threads, each running ld or ptxas through RunTool: a tool
// must inherit no other thread's pipe (a write end inherited keeps that thread's read from seeing EOF
// until the tool exits). Here a tool counts the pipes it holds while another thread's RunTool is
// reading its own pipe: the same count as with nothing else running.
TEST(RunTool, AToolInheritsNoPipeOfAnotherThreadsTool) {
  const std::vector<std::string> count_pipes = {"sh", "-c",
                                                "for f in /proc/$$/fd/*; do readlink $f; done | grep -c pipe:"};
  auto alone = RunTool(count_pipes, "counting pipes");
  ASSERT_TRUE(alone.ok()) << alone.status().ToString();
  std::thread other([] { EXPECT_TRUE(RunTool({"sh", "-c", "sleep 2"}, "sleeping").ok()); });
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // the other thread is reading its pipe now
  auto beside = RunTool(count_pipes, "counting pipes");
  other.join();
  ASSERT_TRUE(beside.ok()) << beside.status().ToString();
  EXPECT_EQ(*beside, *alone) << "a tool started beside another RunTool inherited its pipe";
}

// A tool past its time limit, or whose build was cancelled (a tuner stopping), is killed within
// the 50 ms poll, not waited for: a 30 s sleep ends in well under a second either way, each with
// its message.
TEST(RunTool, AToolPastItsLimitOrCancelledIsKilledNotWaitedFor) {
  using Clock = std::chrono::steady_clock;
  auto t0 = Clock::now();
  auto late = RunTool({"sleep", "30"}, "sleeping", ToolLimits{300, nullptr});
  const double late_s = std::chrono::duration<double>(Clock::now() - t0).count();
  ASSERT_FALSE(late.ok());
  EXPECT_EQ(late.status().code(), StatusCode::kDeadlineExceeded);
  EXPECT_EQ(late.status().message(), "sleeping with sleep ran past its 0.3 s limit and was stopped");
  EXPECT_LT(late_s, 5.0);

  std::atomic<bool> cancel{false};
  std::thread canceller([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    cancel = true;
  });
  t0 = Clock::now();
  auto cancelled = RunTool({"sleep", "30"}, "sleeping", ToolLimits{0, &cancel});
  const double cancelled_s = std::chrono::duration<double>(Clock::now() - t0).count();
  canceller.join();
  ASSERT_FALSE(cancelled.ok());
  EXPECT_EQ(cancelled.status().code(), StatusCode::kCancelled);
  EXPECT_EQ(cancelled.status().message(), "sleeping with sleep was cancelled");
  EXPECT_LT(cancelled_s, 5.0);

  // Within its limit a tool's output comes back whole.
  cancel = false;
  auto quick = RunTool({"sh", "-c", "echo one; echo two"}, "echoing", ToolLimits{10000, &cancel});
  ASSERT_TRUE(quick.ok()) << quick.status().ToString();
  EXPECT_EQ(*quick, "one\ntwo\n");
}

}  // namespace
}  // namespace tunefarm::compiler
