// The emulated Raspberry Pi: the aarch64 rpc_server (cross-built against Debian's multiarch gRPC)
// runs under qemu-aarch64 with key rasp4b, registers with the x86 rpc_tracker, and a rasp4b kernel
// from the kernel compiler is measured through the farm and verified against the x86 build of the
// same kernel. Skips cleanly when qemu or the cross-built farm programs are missing.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <random>
#include <sstream>

#include "common/local_farm.h"
#include "common/process.h"
#include "common/test_files.h"
#include "rpc_server/measure/arguments.h"
#include "tunefarm/compiler/kernel.h"
#include "tunefarm/rpc_server/measure_client.h"

namespace tunefarm::rpc_server {
namespace {

const char* kToken = "pi-test-token-0123456789";

using tunefarm::testing::Exists;

using tunefarm::testing::ReadFile;

TEST(EmulatedPi, Rasp4bServerUnderQemuMeasuresAndVerifiesARasp4bKernel) {
  const std::string farm = TUNEFARM_FARM_AARCH64_DIR;
  if (!Exists(farm + "/rpc_server") || !Exists(farm + "/tunefarm-measure-child")) {
    TUNEFARM_MISSING_FIXTURE("cross-built aarch64 rpc_server missing in "
                             << farm << " (scripts/setup.sh installs libgrpc++-dev:arm64)");
  }
  if (system("qemu-aarch64 --version > /dev/null 2>&1") != 0) TUNEFARM_MISSING_FIXTURE("qemu-aarch64 not installed");
  const std::string dir = ::testing::TempDir() + "tunefarm_pi_" + std::to_string(getpid());
  ASSERT_EQ(system(("rm -rf " + dir + " && mkdir -p " + dir).c_str()), 0);

  // Multiarch programs run under plain qemu-aarch64 (libc6:arm64 provides the loader); the server
  // starts each measurement child through qemu too.
  tunefarm::testing::LocalFarm processes(kToken);
  ASSERT_EQ(processes.StartTracker(RPC_TRACKER), "");
  ASSERT_EQ(processes.StartServer(
                {farm + "/rpc_server", farm + "/tunefarm-measure-child", "rasp4b", dir, "qemu-aarch64", 60000}),
            "")
      << "the emulated rpc_server did not register";
  const std::string tracker_address = processes.tracker_address();

  // A dense layer: the same buffers on both targets (unblocked), each with its target's own config.
  compiler::KernelSpec spec;
  spec.workload = compiler::DenseWorkload(4, 96, 40, /*packed=*/false);
  spec.epilogue.bias = true;
  spec.epilogue.activation = compiler::Activation::kRelu;
  spec.symbol = "dense";
  auto board = compiler::ParseTarget("rasp4b");
  ASSERT_TRUE(board.ok());
  spec.target = *board;
  std::vector<compiler::KernelInfo> infos;
  ASSERT_TRUE(compiler::BuildSharedLibrary({spec}, dir + "/dense_a64.so", &infos).ok());

  MeasureInput in;
  in.library = ReadFile(dir + "/dense_a64.so");
  in.spec.symbol = "dense";
  for (const auto& b : infos[0].buffers) in.spec.args.push_back(ArgSpec{b.shape, "float32", b.role});
  in.spec.seed = 42;
  in.spec.tolerance = 1e-4f;
  in.spec.timing.number = 2;
  in.spec.timing.repeat = 2;
  in.spec.timing.timeout_ms = 120000;

  // Expected outputs: the x86 build of the same kernel on the inputs the child generates from the
  // seed (same generator, same order: every non-output argument, uniform in [-1, 1)).
  compiler::KernelSpec host = spec;
  host.target = compiler::HostTarget();
  std::vector<compiler::KernelInfo> host_infos;
  auto jit = compiler::BuildJit({host}, &host_infos);
  ASSERT_TRUE(jit.ok()) << jit.status().ToString();
  auto fn = (*jit)->Lookup("dense");
  ASSERT_TRUE(fn.ok());
  ArgumentStream stream(in.spec.seed);
  std::vector<std::vector<float>> buffers;
  std::vector<void*> args;
  for (const auto& a : in.spec.args) {
    buffers.emplace_back(size_t(a.num_elements()), 0.0f);
    SeedArgument(a, buffers.back().data(), stream);
  }
  for (auto& b : buffers) args.push_back(b.data());
  ASSERT_EQ((*fn)(args.data()), 0);
  in.spec.expected_outputs = buffers.back();

  MeasureClient client({tracker_address, "rasp4b", kToken, "pi-test", 0, 300000, {}, {}});
  auto results = client.Measure({in}, 240000);
  ASSERT_TRUE(results.ok()) << results.status().ToString();
  ASSERT_EQ(results->size(), 1u);
  EXPECT_EQ((*results)[0].kind, OutcomeKind::kOk) << (*results)[0].message;  // kWrongAnswer if the outputs differ
  EXPECT_EQ((*results)[0].costs_ms.size(), 2u);

  // And a wrong expectation is caught on the board.
  in.spec.expected_outputs[0] += 10.0f;
  auto wrong = client.Measure({in}, 240000);
  ASSERT_TRUE(wrong.ok()) << wrong.status().ToString();
  EXPECT_EQ((*wrong)[0].kind, OutcomeKind::kWrongAnswer) << (*wrong)[0].message;
  client.Release();
  processes.server(0).Kill(SIGTERM);
  processes.server(0).Wait();
  ASSERT_EQ(system(("rm -rf " + dir).c_str()), 0);
}

}  // namespace
}  // namespace tunefarm::rpc_server
