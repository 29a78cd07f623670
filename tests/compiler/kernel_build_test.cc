// Building kernels: user errors, threading, shared libraries and their metadata.
#include <gtest/gtest.h>

#include <random>

#include "common/kernel_reference.h"
#include "tunefarm/compiler/kernel.h"
#include "tunefarm/runtime/kernel_library.h"
#include "tunefarm/testing/kernel_cases.h"

namespace tunefarm::compiler {
namespace {

KernelSpec Spec(const Workload& w, int64_t config = -1) { return KernelSpec{w, {}, HostTarget(), config, "k"}; }

void ExpectError(const Status& s, StatusCode code, const std::string& part) {
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), code) << s.ToString();
  EXPECT_NE(s.message().find(part), std::string::npos) << s.message();
}

TEST(KernelBuild, UserErrorsNameTheProblem) {
  Workload conv = Conv2dWorkload(1, 16, 8, 8, 16, 3, 3, 1, 1);
  ExpectError(DescribeKernel(Spec(conv, 1 << 30)).status(), StatusCode::kOutOfRange,
              "config index 1073741824 out of range");

  Workload int16 = conv;
  int16.dtype = "int16";
  ExpectError(DescribeKernel(Spec(int16)).status(), StatusCode::kInvalidArgument,
              "unsupported dtype 'int16' for conv2d_nchwc; supported: float32, uint8, int8");

  Workload big_kernel = Conv2dWorkload(1, 16, 4, 4, 16, 7, 7, 1, 0);
  ExpectError(DescribeKernel(Spec(big_kernel)).status(), StatusCode::kInvalidArgument,
              "unsupported shape: the kernel is larger than the padded input");

  Workload groups = Conv2dWorkload(1, 16, 8, 8, 16, 3, 3, 1, 1, 1, 3);
  ExpectError(DescribeKernel(Spec(groups)).status(), StatusCode::kInvalidArgument, "unsupported groups: 3 must divide");

  Workload stride0 = conv;
  stride0.conv.stride_h = 0;
  ExpectError(DescribeKernel(Spec(stride0)).status(), StatusCode::kInvalidArgument, "unsupported stride");

  Workload dw = conv;
  dw.implementation = "depthwise_conv2d_nchwc";
  ExpectError(DescribeKernel(Spec(dw)).status(), StatusCode::kInvalidArgument, "needs groups == in_channels");

  Workload dense = DenseWorkload(1, 0, 10);
  ExpectError(DescribeKernel(Spec(dense)).status(), StatusCode::kInvalidArgument, "every dimension must be >= 1");

  Workload unknown = conv;
  unknown.implementation = "winograd";
  ExpectError(DescribeKernel(Spec(unknown)).status(), StatusCode::kNotFound, "unknown template 'winograd'");

  KernelSpec bad_symbol = Spec(conv);
  bad_symbol.symbol = "1bad-name";
  ExpectError(DescribeKernel(bad_symbol).status(), StatusCode::kInvalidArgument, "is not a C identifier");

  KernelSpec cuda = Spec(conv);
  cuda.target = *ParseTarget("cuda -arch=sm_90");
  ExpectError(DescribeKernel(cuda).status(), StatusCode::kInvalidArgument,
              "template 'conv2d_nchwc' does not compute conv2d on target kind 'cuda'; its templates: conv2d_nchw_cuda");

  KernelSpec arm = Spec(conv);
  arm.target = *ParseTarget("rasp4b");
  ExpectError(BuildJit({arm}, nullptr).status(), StatusCode::kFailedPrecondition, "cannot run in this process");

  auto key = Workload::FromKey("conv2d_nchwc|garbage");
  ExpectError(key.status(), StatusCode::kInvalidArgument, "malformed workload key");
  EXPECT_EQ(Workload::FromKey(conv.Key())->Key(), conv.Key());
}

// Keys come from records files and the command line: numbers past the workload bounds are refused
// naming the field before anything computes with them (libFuzzer found a pad of 2^63 overflowing
// the output extent).
TEST(KernelBuild, WorkloadKeysOutsideTheBoundsAreRefusedNamingTheField) {
  struct Case {
    std::string key, message;
  };
  for (const Case& c : std::vector<Case>{
           {"conv2d|N1_C64_H56_W56|K64_R3x3_S1x1_P99999999999999999999_1_1_1_D1x1_G1|NCHW|float32",
            "pad_top 9223372036854775807 is outside [0, 65536]"},
           {"conv2d|N1_C64_H56_W56|K64_R3x3_S1x1_P-1_1_1_1_D1x1_G1|NCHW|float32", "pad_top -1 is outside [0, 65536]"},
           {"conv2d|N1_C0_H56_W56|K64_R3x3_S1x1_P1_1_1_1_D1x1_G1|NCHW|float32",
            "in_channels 0 is outside [1, 1099511627776]"},
           {"conv2d|N1_C64_H56_W56|K64_R3x3_S0x1_P1_1_1_1_D1x1_G1|NCHW|float32", "stride_h 0 is outside [1, 65536]"},
           {"conv2d|N1_C64_H56_W56|K64_R3x3_S1x1_P1_1_1_1_D1x1_G3|NCHW|float32",
            "groups 3 must divide both channel counts"},
           {"conv2d|N1_C64_H2_W2|K64_R5x5_S1x1_P0_0_0_0_D1x1_G1|NCHW|float32",
            "the window is larger than the padded input"},
           {"conv2d|N1_C64_H56_W56_7|K64_R3x3_S1x1_P1_1_1_1_D1x1_G1|NCHW|float32",
            "not in the canonical form 'conv2d|N1_C64_H56_W56|K64_R3x3_S1x1_P1_1_1_1_D1x1_G1|NCHW|float32'"},
           {"conv2d|N1_C064_H56_W56|K64_R3x3_S1x1_P1_1_1_1_D1x1_G1|NCHW|float32", "not in the canonical form"},
           {"dense|N1_I32|O10|NCHW|float32", "not in the canonical form 'dense|N1_I32|O10|NC|float32'"},
           {"conv2d|N1048576_C1048576_H1048576_W1|K64_R1x1_S1x1_P0_0_0_0_D1x1_G1|NCHW|float32",
            "a tensor would have more than 1099511627776 elements"},
           {"dense|N1_I0|O10|NC|float32", "in_features 0 is outside"},
       }) {
    auto w = Workload::FromKey(c.key);
    ASSERT_FALSE(w.ok()) << c.key;
    EXPECT_NE(w.status().message().find("malformed workload key '" + c.key + "': "), std::string::npos)
        << w.status().message();
    EXPECT_NE(w.status().message().find(c.message), std::string::npos) << w.status().message();
  }
}

TEST(KernelBuild, InvalidConfigPointsAreRejected) {
  Workload conv = Conv2dWorkload(1, 64, 56, 56, 64, 3, 3, 1, 1);
  Target host = HostTarget();
  auto space = GetConfigSpace(conv, host);
  ASSERT_TRUE(space.ok());
  int64_t invalid = -1;
  for (int64_t i = 0; i < space->size() && invalid < 0; ++i) {
    if (!space->IsValid(*space->Get(i))) invalid = i;
  }
  ASSERT_GE(invalid, 0);
  ExpectError(DescribeKernel(Spec(conv, invalid)).status(), StatusCode::kInvalidArgument, "is not a valid point");
}

// One and two threads compute the same result, and one thread never leaves the caller.
TEST(KernelBuild, ParallelLoopsMatchAcrossThreadCounts) {
  Workload conv = Conv2dWorkload(1, 32, 20, 20, 64, 3, 3, 1, 1);
  std::vector<KernelInfo> infos;
  auto jit = BuildJit({Spec(conv)}, &infos);
  ASSERT_TRUE(jit.ok()) << jit.status().ToString();
  auto fn = (*jit)->Lookup("k");
  ASSERT_TRUE(fn.ok());
  std::mt19937_64 rng(3);
  testing::Buffers args = testing::RandomArguments(infos[0], rng);
  std::vector<std::vector<float>> results;
  for (int threads : {1, 2, 1}) {
    TunefarmSetNumThreads(threads);
    std::vector<void*> ptrs;
    for (auto& a : args) ptrs.push_back(a.data());
    ASSERT_EQ((*fn)(ptrs.data()), 0);
    results.push_back(args.back());
  }
  TunefarmSetNumThreads(1);
  EXPECT_EQ(results[0], results[1]);
  EXPECT_EQ(results[0], results[2]);
  EXPECT_LE(runtime::MaxRelativeError(results[0], testing::ReferenceOutput(Spec(conv), infos[0], args)), 1e-4);
}

TEST(KernelBuild, SharedLibraryCarriesEntryPointsAndMetadata) {
  Workload conv = Conv2dWorkload(1, 16, 9, 9, 32, 3, 3, 2, 1);
  Workload dense = DenseWorkload(2, 64, 40);
  KernelSpec a = Spec(conv), b = Spec(dense);
  a.symbol = "conv_kernel";
  b.symbol = "dense_kernel";
  b.epilogue.bias = true;
  b.epilogue.activation = Activation::kRelu;
  std::string path = ::testing::TempDir() + "libk.so";
  std::vector<KernelInfo> infos;
  for (bool toolchain : {false, true}) {
    BuildOptions options;
    options.toolchain_linker = toolchain;
    infos.clear();
    ASSERT_TRUE(BuildSharedLibrary({a, b}, path, &infos, options).ok());
    auto lib = runtime::KernelLibrary::Open(path);
    ASSERT_TRUE(lib.ok()) << lib.status().ToString();
    for (size_t i = 0; i < infos.size(); ++i) {
      auto meta = (*lib)->Metadata(infos[i].symbol);
      ASSERT_TRUE(meta.ok()) << meta.status().ToString();
      auto parsed = KernelInfo::FromJson(*meta);
      ASSERT_TRUE(parsed.ok());
      EXPECT_EQ(parsed->workload_key, i == 0 ? conv.Key() : dense.Key());
      EXPECT_EQ(parsed->buffers.size(), infos[i].buffers.size());
      EXPECT_DOUBLE_EQ(parsed->flops, infos[i].flops);
      auto fn = (*lib)->Lookup(infos[i].symbol);
      ASSERT_TRUE(fn.ok());
      std::mt19937_64 rng(i);
      testing::Buffers args = testing::RandomArguments(infos[i], rng);
      std::vector<void*> ptrs;
      for (auto& x : args) ptrs.push_back(x.data());
      ASSERT_EQ((*fn)(ptrs.data()), 0);
      EXPECT_LE(runtime::MaxRelativeError(args.back(), testing::ReferenceOutput(i == 0 ? a : b, infos[i], args)), 1e-4);
    }
    auto missing = (*lib)->Lookup("nope");
    ExpectError(missing.status(), StatusCode::kNotFound, "no kernel 'nope' in");
  }
  EXPECT_EQ(infos[1].epilogue, "bias+relu");
  EXPECT_EQ(infos[1].buffers[2].role, "bias");
  EXPECT_DOUBLE_EQ(infos[0].flops, conv.Flops());
  ExpectError(KernelInfo::FromJson("[1,2]").status(), StatusCode::kInvalidArgument, "malformed kernel metadata");
}

TEST(KernelBuild, WorkloadKeysAreCanonical) {
  Workload w = Conv2dWorkload(1, 64, 56, 56, 64, 3, 3, 1, 1);
  // Target-neutral: the operator and its parameters; the implementation is a field of its own.
  EXPECT_EQ(w.Key(), "conv2d|N1_C64_H56_W56|K64_R3x3_S1x1_P1_1_1_1_D1x1_G1|NCHW|float32");
  EXPECT_EQ(w.ImplementationKey(), "conv2d_nchwc:" + w.Key());
  EXPECT_EQ(DenseWorkload(1, 512, 1000).Key(), "dense|N1_I512|O1000|NC|float32");
  EXPECT_EQ(DenseWorkload(1, 512, 1000, /*packed=*/false).Key(), DenseWorkload(1, 512, 1000).Key());
  Workload on_gpu = w;
  on_gpu.implementation = "conv2d_nchw_cuda";
  EXPECT_EQ(on_gpu.Key(), w.Key());
  auto parsed = Workload::FromImplementationKey(on_gpu.ImplementationKey());
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->implementation, "conv2d_nchw_cuda");
  EXPECT_EQ(parsed->Key(), w.Key());
  ExpectError(Workload::FromKey("conv2d_nchwc|N1_C64_H56_W56|K64_R3x3_S1x1_P1_1_1_1_D1x1_G1|NCHW|float32").status(),
              StatusCode::kInvalidArgument, "unknown operator 'conv2d_nchwc' (conv2d, dense, batch_matmul)");
  EXPECT_EQ(Conv2dWorkload(1, 144, 56, 56, 144, 3, 3, 2, 1, 1, 144).implementation, "depthwise_conv2d_nchwc");
  EXPECT_DOUBLE_EQ(w.Flops(), 2.0 * 64 * 56 * 56 * 64 * 9);
}

// A task's name is built and parsed in one place (workload.h); the implementation and the key
// round-trip through it, a bare key has no implementation, and an empty implementation is refused.
TEST(TaskName, OneBuilderAndOneParser) {
  const Workload w = Conv2dWorkload(1, 64, 56, 56, 64, 3, 3, 1, 1);
  EXPECT_EQ(TaskName(w.implementation, w.Key()), w.ImplementationKey());
  EXPECT_EQ(TaskName("", w.Key()), w.Key());
  const TaskNameParts parts = ParseTaskName(w.ImplementationKey());
  EXPECT_EQ(parts.implementation, "conv2d_nchwc");
  EXPECT_EQ(parts.key, w.Key());
  EXPECT_EQ(ParseTaskName(w.Key()).implementation, "");
  EXPECT_EQ(ParseTaskName(w.Key()).key, w.Key());
  ExpectError(Workload::FromImplementationKey(":" + w.Key()).status(), StatusCode::kInvalidArgument,
              "malformed workload key ':" + w.Key() + "': empty implementation");
}

}  // namespace
}  // namespace tunefarm::compiler
