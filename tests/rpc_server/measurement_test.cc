// Measuring kernels in isolated children: a real compiled conv kernel is timed and checked, and
// every hostile case costs exactly one failed measurement of the right type: a kernel that
// segfaults, one that never returns, one that allocates 64 GiB, garbage and wrong-architecture
// libraries, absurd timing parameters.
#include "tunefarm/rpc_server/measurement.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <fstream>
#include <set>
#include <sstream>

#include "common/kernel_reference.h"
#include "common/test_files.h"
#include "tunefarm/compiler/kernel.h"

namespace tunefarm::rpc_server {
namespace {

using tunefarm::testing::ReadFile;

class Measurement : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "tunefarm_measure_" + std::to_string(getpid());
    ASSERT_EQ(system(("rm -rf " + dir_ + " && mkdir -p " + dir_).c_str()), 0);
  }
  void TearDown() override { ASSERT_EQ(system(("rm -rf " + dir_).c_str()), 0); }

  // A hostile "kernel" compiled from C with the host compiler.
  std::string HostileLibrary(const std::string& name, const std::string& body) {
    const std::string c = dir_ + "/" + name + ".c", so = dir_ + "/" + name + ".so";
    std::ofstream(c)
        << "#include <stdint.h>\n#include <stdlib.h>\n#include <string.h>\nint32_t kernel(void* const* args) {\n"
        << body << "\n}\n";
    EXPECT_EQ(system(("cc -O1 -shared -fPIC -o " + so + " " + c).c_str()), 0);
    return ReadFile(so);
  }

  MeasureSpec Spec(int timeout_ms = 5000) {
    MeasureSpec s;
    s.symbol = "kernel";
    s.args = {ArgSpec{{1024}, "float32", "input"}, ArgSpec{{1024}, "float32", "output"}};
    s.timing.number = 2;
    s.timing.repeat = 2;
    s.timing.timeout_ms = timeout_ms;
    s.timing.memory_limit_bytes = int64_t(2) << 30;
    return s;
  }
  MeasureOutcome Run(const std::string& lib, const MeasureSpec& spec) {
    return MeasureIsolated({MEASURE_CHILD}, dir_, lib, spec);
  }
  std::string dir_;
};

TEST_F(Measurement, CompiledConvKernelIsTimedAndChecked) {
  compiler::KernelSpec k;
  k.workload = compiler::Conv2dWorkload(1, 16, 14, 14, 32, 3, 3, 1, 1);
  k.target = compiler::HostTarget();
  k.symbol = "conv";
  std::vector<compiler::KernelInfo> infos;
  const std::string so = dir_ + "/conv.so";
  ASSERT_TRUE(compiler::BuildSharedLibrary({k}, so, &infos).ok());
  MeasureSpec spec = Spec();
  spec.symbol = "conv";
  spec.args.clear();
  for (const auto& b : infos[0].buffers) spec.args.push_back(ArgSpec{b.shape, "float32", b.role});
  spec.timing.min_repeat_ms = 20;
  MeasureOutcome ok = Run(ReadFile(so), spec);
  ASSERT_EQ(ok.kind, OutcomeKind::kOk) << ok.message;
  ASSERT_EQ(ok.costs_ms.size(), 2u);
  EXPECT_GT(ok.costs_ms[0], 0.0);
  // `number` grows until a round lasts min_repeat_ms; how far depends on the machine's speed, so
  // only its sanity is asserted here (bench/ reports the timing protocol's figures).
  EXPECT_GE(ok.number, 1);
  // The load (dlopen) is reported apart, as part of the whole measurement.
  EXPECT_GT(ok.load_ms, 0.0);
  EXPECT_LT(ok.load_ms, ok.run_ms);

  int64_t outputs = spec.args.back().num_elements();
  spec.expected_outputs.assign(size_t(outputs), 123.0f);  // wrong on purpose
  MeasureOutcome wrong = Run(ReadFile(so), spec);
  EXPECT_EQ(wrong.kind, OutcomeKind::kWrongAnswer) << wrong.message;
  EXPECT_NE(wrong.message.find("max relative error"), std::string::npos);
}

// Every argument role the compiler's kernels have reaches the server as a valid request: a conv
// with bias, residual and PRelu (whose per-channel slopes are the "slope" role) is timed, and a
// role no kernel has is refused naming it.
TEST_F(Measurement, EveryRoleAFusedKernelHasIsMeasured) {
  compiler::KernelSpec k;
  k.workload = compiler::Conv2dWorkload(1, 8, 10, 10, 16, 3, 3, 1, 1);
  k.epilogue.bias = true;
  k.epilogue.residual = true;
  k.epilogue.activation = compiler::Activation::kPRelu;
  k.target = compiler::HostTarget();
  k.symbol = "conv";
  std::vector<compiler::KernelInfo> infos;
  const std::string so = dir_ + "/prelu.so";
  ASSERT_TRUE(compiler::BuildSharedLibrary({k}, so, &infos).ok());
  MeasureSpec spec = Spec();
  spec.symbol = "conv";
  spec.args.clear();
  std::set<std::string> roles;
  for (const auto& b : infos[0].buffers) {
    spec.args.push_back(ArgSpec{b.shape, "float32", b.role});
    roles.insert(b.role);
  }
  EXPECT_EQ(roles, (std::set<std::string>{"input", "weight", "bias", "residual", "slope", "output"}));
  MeasureOutcome ok = Run(ReadFile(so), spec);
  EXPECT_EQ(ok.kind, OutcomeKind::kOk) << ok.message;
  spec.args[1].role = "gradient";
  MeasureOutcome bad = Run(ReadFile(so), spec);
  EXPECT_EQ(bad.kind, OutcomeKind::kBadRequest);
  EXPECT_EQ(bad.message, "argument 1 has unknown role 'gradient'");
}

// An int8 convolution (uint8 data, int8 weights, int32 bias, float scales, uint8 output; with int8
// dot products, int32 words of weights and an int32 compensation) is measured with its arguments in
// their own types; a type the farm does not know, or a check of an integer output, is a bad request
// naming it.
TEST_F(Measurement, AnInt8KernelIsMeasuredWithItsArgumentTypes) {
  compiler::KernelSpec k;
  k.workload = compiler::Conv2dWorkload(1, 16, 10, 10, 16, 3, 3, 1, 1);
  k.workload.dtype = "uint8";
  k.epilogue.bias = true;
  k.epilogue.input_zero_point = 128;
  k.epilogue.requantize.enabled = true;
  k.target = compiler::HostTarget();
  k.symbol = "qconv";
  std::vector<compiler::KernelInfo> infos;
  const std::string so = dir_ + "/qconv.so";
  ASSERT_TRUE(compiler::BuildSharedLibrary({k}, so, &infos).ok());
  MeasureSpec spec = Spec();
  spec.symbol = "qconv";
  spec.args.clear();
  std::vector<std::string> types;
  for (const auto& b : infos[0].buffers) {
    spec.args.push_back(ArgSpec{b.shape, b.dtype, b.role});
    types.push_back(b.role + ":" + b.dtype);
  }
  const std::vector<std::string> expected =
      k.target.int8_products != compiler::Int8Products::kInt32Vectors
          ? std::vector<std::string>{"input:uint8",   "weight:int32",       "bias:int32",
                                     "scale:float32", "compensation:int32", "output:uint8"}
          : std::vector<std::string>{"input:uint8", "weight:int8", "bias:int32", "scale:float32", "output:uint8"};
  EXPECT_EQ(types, expected);
  MeasureOutcome ok = Run(ReadFile(so), spec);
  EXPECT_EQ(ok.kind, OutcomeKind::kOk) << ok.message;
  EXPECT_FALSE(ok.costs_ms.empty());
  MeasureSpec wide = spec;
  wide.args[0].dtype = "int16";
  MeasureOutcome unknown = Run(ReadFile(so), wide);
  EXPECT_EQ(unknown.kind, OutcomeKind::kBadRequest);
  EXPECT_EQ(unknown.message, "argument 0 has dtype 'int16'; supported: float32, int32, uint8, int8");
  MeasureSpec checked = spec;
  checked.expected_outputs.assign(size_t(spec.args.back().num_elements()), 0.0f);
  MeasureOutcome integer_check = Run(ReadFile(so), checked);
  EXPECT_EQ(integer_check.kind, OutcomeKind::kBadRequest);
  EXPECT_EQ(integer_check.message,
            "argument " + std::to_string(types.size() - 1) + " is a uint8 output; only float32 outputs can be checked");
}

TEST_F(Measurement, CrashingHangingAndGreedyKernelsCostOneTrialEach) {
  MeasureOutcome segv = Run(HostileLibrary("segv", "volatile float* p = 0; p[7] = 1; return 0;"), Spec());
  EXPECT_EQ(segv.kind, OutcomeKind::kRuntimeCrash);
  EXPECT_EQ(segv.signal, 11);
  EXPECT_NE(segv.message.find("crashed with signal 11"), std::string::npos) << segv.message;

  MeasureOutcome hang = Run(HostileLibrary("hang", "volatile int x = 1; while (x) {} return 0;"), Spec(500));
  EXPECT_EQ(hang.kind, OutcomeKind::kTimeout);
  EXPECT_EQ(hang.message, "the measurement exceeded its timeout of 500 ms");

#if !defined(__SANITIZE_ADDRESS__)
  // 64 GiB against a 2 GiB address-space limit: malloc fails and the kernel dereferences NULL.
  MeasureOutcome greedy = Run(HostileLibrary("greedy",
                                             "float* p = (float*)malloc((size_t)64 << 30);"
                                             "memset(p, 1, (size_t)64 << 30); return p == 0;"),
                              Spec());
  EXPECT_EQ(greedy.kind, OutcomeKind::kRuntimeCrash) << greedy.message;
#endif

  MeasureOutcome code = Run(HostileLibrary("code", "return 7;"), Spec());
  EXPECT_EQ(code.kind, OutcomeKind::kRuntimeCrash);
  EXPECT_EQ(code.message, "the kernel returned error code 7");
}

TEST_F(Measurement, HostileRequestsAreTypedErrors) {
  const std::string good = HostileLibrary("fine", "return 0;");
  MeasureOutcome garbage = Run(std::string(4096, 'x'), Spec());
  EXPECT_EQ(garbage.kind, OutcomeKind::kCompile);
  EXPECT_EQ(garbage.message, "the kernel library is not an ELF file (truncated or garbage)");
  MeasureOutcome truncated = Run(good.substr(0, 40), Spec());
  EXPECT_EQ(truncated.kind, OutcomeKind::kCompile);
  MeasureOutcome half = Run(good.substr(0, good.size() / 2), Spec());
  EXPECT_EQ(half.kind, OutcomeKind::kCompile) << half.message << " signal " << half.signal;
  std::string arm = good;
  arm[18] = char(183);  // e_machine = EM_AARCH64
  arm[19] = 0;
  MeasureOutcome wrong_arch = Run(arm, Spec());
  EXPECT_EQ(wrong_arch.kind, OutcomeKind::kCompile);
  EXPECT_EQ(wrong_arch.message, "the kernel library is built for aarch64, this server runs x86_64");

  MeasureSpec zero = Spec();
  zero.timing.number = 0;
  EXPECT_EQ(Run(good, zero).message, "timing.number must be in [1, 10000], got 0");
  MeasureSpec huge = Spec();
  huge.timing.repeat = 1000000000;
  EXPECT_EQ(Run(good, huge).kind, OutcomeKind::kBadRequest);
  MeasureSpec symbol = Spec();
  symbol.symbol = "rm -rf /";
  EXPECT_EQ(Run(good, symbol).message, "symbol 'rm -rf /' is not a C identifier");
  MeasureSpec missing = Spec();
  missing.symbol = "nope";
  MeasureOutcome absent = Run(good, missing);
  EXPECT_EQ(absent.kind, OutcomeKind::kCompile);
  EXPECT_EQ(absent.message, "the library exports no kernel 'nope'");
  MeasureSpec big = Spec();
  big.args[0].shape = {int64_t(1) << 30, 16};
  EXPECT_EQ(Run(good, big).kind, OutcomeKind::kBadRequest);
  // Nothing left behind in the work root.
  EXPECT_EQ(system(("test -z \"$(ls -A " + dir_ + " | grep tunefarm-measure)\"").c_str()), 0);
}

// The persistent worker (what CUDA servers use, to keep their context) with CPU kernels as the
// payload: one process across kernels; a crash or a hang costs that kernel its trial and the next
// kernel gets a fresh worker; bad requests never reach it.
TEST_F(Measurement, APersistentWorkerSurvivesKernelsAndIsReplacedAfterACrashOrHang) {
  MeasureWorker worker({MEASURE_CHILD}, dir_);
  const std::string good = HostileLibrary("fine", "float* out = (float*)args[1]; out[0] = 1; return 0;");
  for (int i = 0; i < 3; ++i) {
    MeasureOutcome o = worker.Measure(good, Spec());
    ASSERT_EQ(o.kind, OutcomeKind::kOk) << o.message;
    EXPECT_EQ(o.costs_ms.size(), 2u);
  }
  EXPECT_EQ(worker.starts(), 1);  // one process for all three

  MeasureOutcome segv = worker.Measure(HostileLibrary("segv", "volatile float* p = 0; p[7] = 1; return 0;"), Spec());
  EXPECT_EQ(segv.kind, OutcomeKind::kRuntimeCrash);
  EXPECT_EQ(segv.signal, 11);
  EXPECT_NE(segv.message.find("crashed with signal 11"), std::string::npos) << segv.message;
  EXPECT_EQ(worker.Measure(good, Spec()).kind, OutcomeKind::kOk);
  EXPECT_EQ(worker.starts(), 2);

  MeasureOutcome hang = worker.Measure(HostileLibrary("hang", "volatile int x = 1; while (x) {} return 0;"), Spec(500));
  EXPECT_EQ(hang.kind, OutcomeKind::kTimeout);
  EXPECT_EQ(hang.message, "the measurement exceeded its timeout of 500 ms");
  EXPECT_EQ(worker.Measure(good, Spec()).kind, OutcomeKind::kOk);
  EXPECT_EQ(worker.starts(), 3);

  MeasureSpec zero = Spec();
  zero.timing.number = 0;
  EXPECT_EQ(worker.Measure(good, zero).message, "timing.number must be in [1, 10000], got 0");
  EXPECT_EQ(worker.Measure(std::string(4096, 'x'), Spec()).kind, OutcomeKind::kCompile);
  EXPECT_EQ(worker.starts(), 3);
  // Every kernel's directory is gone; only the worker's log remains while it lives.
  EXPECT_EQ(system(("test -z \"$(ls -A " + dir_ + " | grep tunefarm-measure- | grep -v worker)\"").c_str()), 0);
}

// Containment: a kernel's descendants die with its measurement, it sees none of the server's
// environment (no farm token), runs in its private directory, and leaves nothing behind.
class Containment : public Measurement {
 protected:
  std::string Library(const std::string& name, const std::string& source) {
    const std::string c = dir_ + "/" + name + ".c", so = dir_ + "/" + name + ".so";
    std::ofstream(c) << "#include <stdint.h>\n#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n"
                        "#include <unistd.h>\n#include <sys/stat.h>\n"
                     << source;
    EXPECT_EQ(system(("cc -O1 -shared -fPIC -o " + so + " " + c).c_str()), 0);
    return ReadFile(so);
  }
  // A kernel that forks a sleeper once per process and writes its pid to `pid_file`.
  std::string ForkingKernel(const std::string& pid_file, bool hang) {
    return Library(hang ? "fork_hang" : "fork",
                   "static int forked;\nint32_t kernel(void* const* a) {\n"
                   "  if (!forked) { forked = 1; pid_t p = fork(); if (p == 0) { sleep(120); _exit(0); }\n"
                   "    FILE* f = fopen(\"" +
                       pid_file + "\", \"w\"); fprintf(f, \"%d\", (int)p); fclose(f); }\n" +
                       (hang ? "  for (;;) sleep(1);\n" : "") + "  return 0;\n}\n");
  }
  static bool Alive(pid_t pid) {
    // A zombie (killed, not yet reaped by init) counts as dead.
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string all((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
    if (all.empty()) return false;
    const size_t paren = all.rfind(')');
    return paren != std::string::npos && paren + 2 < all.size() && all[paren + 2] != 'Z';
  }
  static bool DiesWithin(pid_t pid, int ms) {
    for (int i = 0; i < ms / 10 && Alive(pid); ++i) usleep(10000);
    return !Alive(pid);
  }
  int LeftoverDirs() {
    return system(("test -z \"$(ls -A " + dir_ + " | grep tunefarm-measure)\"").c_str()) == 0 ? 0 : 1;
  }
};

TEST_F(Containment, AForkedSleeperDiesWithTheMeasurement) {
  for (bool hang : {false, true}) {
    const std::string pid_file = dir_ + (hang ? "/hang.pid" : "/sleeper.pid");
    MeasureOutcome o = Run(ForkingKernel(pid_file, hang), Spec(hang ? 1000 : 5000));
    EXPECT_EQ(o.kind, hang ? OutcomeKind::kTimeout : OutcomeKind::kOk) << o.message;
    const pid_t sleeper = pid_t(std::atoi(ReadFile(pid_file).c_str()));
    ASSERT_GT(sleeper, 0);
    EXPECT_TRUE(DiesWithin(sleeper, 2000)) << "the kernel's child " << sleeper << " survived (hang=" << hang << ")";
    EXPECT_EQ(LeftoverDirs(), 0);
  }
}

TEST_F(Containment, TheChildSeesNoTokenAndRunsInItsPrivateDirectory) {
  setenv("TUNEFARM_TOKEN", "secret-token-0123456789", 1);
  MeasureOutcome o = Run(Library("env", R"(int32_t kernel(void* const* a) {
  if (getenv("TUNEFARM_TOKEN")) return 11;
  char cwd[4096];
  if (!getcwd(cwd, sizeof cwd) || !strstr(cwd, "/tunefarm-measure-")) return 12;
  if (!getenv("HOME") || strcmp(getenv("HOME"), cwd) != 0) return 13;
  mkdir("junk", 0700);
  mkdir("junk/deeper", 0700);
  FILE* f = fopen("junk/deeper/file", "w");
  if (f) { fputs("left behind", f); fclose(f); }
  return 0;
})"),
                         Spec());
  unsetenv("TUNEFARM_TOKEN");
  EXPECT_EQ(o.kind, OutcomeKind::kOk) << o.message;  // 11: token visible, 12: wrong cwd, 13: HOME
  EXPECT_EQ(LeftoverDirs(), 0);                      // removed recursively, with what the kernel wrote
}

TEST_F(Containment, StaleDirectoriesOfDeadServersAreSwept) {
  pid_t dead = fork();
  if (dead == 0) _exit(0);
  waitpid(dead, nullptr, 0);
  const std::string stale = dir_ + "/tunefarm-measure-" + std::to_string(dead) + "-abcdef";
  const std::string mine = dir_ + "/tunefarm-measure-" + std::to_string(getpid()) + "-ghijkl";
  ASSERT_EQ(system(("mkdir -p " + stale + "/sub " + mine + " && touch " + stale + "/sub/kernel.so").c_str()), 0);
  EXPECT_EQ(SweepStaleMeasureDirs(dir_), 1);
  EXPECT_NE(access(stale.c_str(), F_OK), 0);
  EXPECT_EQ(access(mine.c_str(), F_OK), 0);
  EXPECT_EQ(SweepStaleMeasureDirs(dir_ + "/missing"), 0);
}

}  // namespace
}  // namespace tunefarm::rpc_server

namespace tunefarm::rpc_server {
namespace {

// An outcome (the child's file, a server's answer) whose times are not times is refused naming the
// round: a NaN would become a trial's mean (found by libFuzzer on the measurement messages).
TEST(MeasureOutcomeMessage, TimesThatAreNotFiniteAndNonNegativeAreRefused) {
  for (double bad : {std::nan(""), HUGE_VAL, -1.0}) {
    v1::MeasureResult r;
    r.add_costs_ms(0.5);
    r.add_costs_ms(bad);
    r.set_number(10);
    auto parsed = ParseOutcome(r.SerializeAsString());
    ASSERT_FALSE(parsed.ok()) << bad;
    EXPECT_NE(parsed.status().message().find("malformed measurement outcome: round 1 took "), std::string::npos)
        << parsed.status().message();
    EXPECT_NE(parsed.status().message().find("(a time is finite and not negative)"), std::string::npos);
  }
  v1::MeasureResult negative_run;
  negative_run.add_costs_ms(0.5);
  negative_run.set_run_ms(-3);
  EXPECT_FALSE(OutcomeFromResult(negative_run).ok());
  v1::MeasureResult negative_load;
  negative_load.add_costs_ms(0.5);
  negative_load.set_load_ms(-1);
  auto refused = OutcomeFromResult(negative_load);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("load_ms -1"), std::string::npos) << refused.status().message();
  v1::MeasureResult good;
  good.add_costs_ms(0.5);
  good.set_number(10);
  good.set_run_ms(40);
  good.set_load_ms(12.5);
  auto parsed = ParseOutcome(good.SerializeAsString());
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  EXPECT_EQ(parsed->costs_ms, std::vector<double>{0.5});
  EXPECT_EQ(parsed->run_ms, 40);
  EXPECT_EQ(parsed->load_ms, 12.5);  // where a batch's time went (tune's closing line)
}

}  // namespace
}  // namespace tunefarm::rpc_server
