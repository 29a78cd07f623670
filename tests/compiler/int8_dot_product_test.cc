// dot4_u8s8 (compiler/ir/ir_operators.h), the int8 dot product the int8 templates tensorize: the
// instruction each instruction set's code uses for it, read from the emitted assembly (vpdpbusd on
// AVX-512 VNNI and AVX-VNNI, vpmaddwd on AVX2 and AVX-512 without VNNI, dp4a on CUDA), and its
// values against a naive reference -- every byte pattern's extremes included (255 x -128, where a
// saturating u8 x s8 multiply-add such as vpmaddubsw loses the sum) -- on each instruction set this
// machine can run, and on CUDA by emulation; likewise dot2_i16, the AVX2 kernels' int16 pair
// product (vpmaddwd); and round_to_int32, the requantizing epilogues' rounding conversion.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "compiler/codegen/codegen_nvptx.h"
#include "compiler/codegen/object_emitter.h"
#include "compiler/ir/ir_operators.h"
#include "compiler/passes/lower.h"
#include "compiler/te/schedule.h"
#include "tunefarm/compiler/kernel.h"
#include "tunefarm/runtime/cpu_features.h"

namespace tunefarm::compiler {
namespace {

constexpr int64_t kN = 48 * 16;  // int32 lanes per run: whole vectors of 3, 12 and 16

using DotOp = ir::Expr (*)(ir::Expr, ir::Expr, ir::Expr);

// out[i] = op(acc[i], a[i], b[i]) (dot4_u8s8 unless said), `lanes` lanes at a time (1: scalar; GPU:
// one per thread).
Result<passes::LoweredFunc> LowerDot4(const Target& target, int lanes, DotOp op = ir::dot4_u8s8) {
  const ir::Type i32 = ir::Type::Int(32);
  ir::Tensor acc = te::Placeholder("acc", {kN}, i32), a = te::Placeholder("a", {kN}, i32),
             b = te::Placeholder("b", {kN}, i32);
  ir::Tensor out = te::Compute("out", {kN}, [&](const std::vector<ir::Expr>& i) {
    return op(te::Read(acc, {i[0]}), te::Read(a, {i[0]}), te::Read(b, {i[0]}));
  });
  te::Schedule schedule({out});
  te::Stage& st = schedule[out];
  const bool gpu = target.kind == TargetKind::kCuda;
  auto [outer, inner] = st.split(st.axes[0], gpu ? 64 : lanes);
  if (gpu) {
    st.bind(outer, ir::ForKind::kGpuBlockX);
    st.bind(inner, ir::ForKind::kGpuThreadX);
  } else if (lanes > 1) {
    st.vectorize(inner);
  }
  const passes::StepList steps = !gpu              ? passes::StepList::kCpu
                                 : target.emulated ? passes::StepList::kGpuOnHost
                                                   : passes::StepList::kGpu;
  return passes::Lower(schedule, {acc, a, b, out}, "dot4", target, steps);
}

struct Operands {
  std::vector<int32_t> acc, a, b;
};
Operands RandomOperands() {
  std::mt19937 rng(7);
  std::uniform_int_distribution<uint32_t> word;
  Operands o;
  for (int64_t i = 0; i < kN; ++i) {
    o.acc.push_back(int32_t(word(rng)) >> 4);
    o.a.push_back(int32_t(word(rng)));
    o.b.push_back(int32_t(word(rng)));
  }
  // The extremes: 255 x -128 four times (a saturating int16 pair sum would clip it), 255 x 127.
  o.a[0] = int32_t(0xffffffffu);
  o.b[0] = int32_t(0x80808080u);
  o.a[1] = int32_t(0xffffffffu);
  o.b[1] = 0x7f7f7f7f;
  return o;
}

int32_t Reference(int32_t acc, int32_t a, int32_t b) {
  int64_t sum = acc;
  for (int j = 0; j < 4; ++j) {
    sum += int64_t(uint8_t(uint32_t(a) >> (8 * j))) * int64_t(int8_t(uint8_t(uint32_t(b) >> (8 * j))));
  }
  return int32_t(uint32_t(uint64_t(sum)));
}

// dot4_s8s8's: both operands' bytes signed.
int32_t SignedReference(int32_t acc, int32_t a, int32_t b) {
  int64_t sum = acc;
  for (int j = 0; j < 4; ++j) {
    sum += int64_t(int8_t(uint8_t(uint32_t(a) >> (8 * j)))) * int64_t(int8_t(uint8_t(uint32_t(b) >> (8 * j))));
  }
  return int32_t(uint32_t(uint64_t(sum)));
}

// dot2_i16's: acc + the two int16 halves' products.
int32_t PairReference(int32_t acc, int32_t a, int32_t b) {
  int64_t sum = acc;
  for (int j = 0; j < 2; ++j) {
    sum += int64_t(int16_t(uint16_t(uint32_t(a) >> (16 * j)))) * int64_t(int16_t(uint16_t(uint32_t(b) >> (16 * j))));
  }
  return int32_t(uint32_t(uint64_t(sum)));
}

void ExpectComputesTheReference(const passes::LoweredFunc& func, Target target, const std::string& what,
                                int32_t (*reference)(int32_t, int32_t, int32_t) = Reference) {
  target.is_host = true;  // the caller checked this CPU has the target's features
  auto jit = JitCompile({KernelSource{func, "{}"}}, target);
  ASSERT_TRUE(jit.ok()) << what << ": " << jit.status().ToString();
  auto fn = (*jit)->Lookup("dot4");
  ASSERT_TRUE(fn.ok()) << what;
  Operands o = RandomOperands();
  std::vector<int32_t> out(kN, 12345);
  void* args[] = {o.acc.data(), o.a.data(), o.b.data(), out.data()};
  ASSERT_EQ((*fn)(args), 0) << what;
  for (int64_t i = 0; i < kN; ++i) {
    ASSERT_EQ(out[size_t(i)], reference(o.acc[size_t(i)], o.a[size_t(i)], o.b[size_t(i)])) << what << " lane " << i;
  }
}

bool HostRuns(const Target& target) {
  const std::vector<std::string> host = runtime::HostCpuFeatures();
  for (const std::string& f : RequiredCpuFeatures(target)) {
    if (std::find(host.begin(), host.end(), f) == host.end()) return false;
  }
  return runtime::ArchOfTriple(target.triple) == runtime::HostArch();
}

struct X86Case {
  const char* cpu;
  int lanes;
  const char* mnemonic;   // as the assembly spells it
  const char* registers;  // the vector registers its line names
};
// The machine kinds tunefarm meets (Sapphire Rapids, Zen 4, Zen 3) and the other x86 forms.
constexpr X86Case kX86Cases[] = {
    {"sapphirerapids", 16, "\tvpdpbusd\t", "%zmm"},  // AVX-512 VNNI
    {"znver4", 16, "\tvpdpbusd\t", "%zmm"},          // AVX-512 VNNI
    {"znver4", 8, "\tvpdpbusd\t", "%ymm"},           // AVX-512 VNNI + VL at 256 bits
    {"alderlake", 8, "{vex}\tvpdpbusd\t", "%ymm"},   // AVX-VNNI
    {"znver3", 8, "\tvpmaddwd\t", "%ymm"},           // AVX2 alone
    {"skylake-avx512", 16, "\tvpmaddwd\t", "%zmm"},  // AVX-512 BW without VNNI
    {"nehalem", 4, "\tpmaddwd\t", "%xmm"},           // SSE only
};

// The assembly line holding `mnemonic`, or "".
std::string LineWith(const std::string& assembly, const std::string& mnemonic) {
  const size_t at = assembly.find(mnemonic);
  if (at == std::string::npos) return "";
  const size_t begin = assembly.rfind('\n', at) + 1, end = assembly.find('\n', at);
  return assembly.substr(begin, end - begin);
}

TEST(Int8DotProduct, EachX86InstructionSetUsesItsInstructionAndComputesTheExactSum) {
  for (const X86Case& c : kX86Cases) {
    auto target = ParseTarget(std::string("llvm -mtriple=x86_64-linux-gnu -mcpu=") + c.cpu);
    ASSERT_TRUE(target.ok()) << target.status().ToString();
    const std::string what = std::string(c.cpu) + " x" + std::to_string(c.lanes);
    auto func = LowerDot4(*target, c.lanes);
    ASSERT_TRUE(func.ok()) << what << ": " << func.status().ToString();
    auto assembly = EmitAssembly({KernelSource{*func, "{}"}}, *target);
    ASSERT_TRUE(assembly.ok()) << what << ": " << assembly.status().ToString();
    const std::string line = LineWith(*assembly, c.mnemonic);
    EXPECT_NE(line.find(c.registers), std::string::npos)
        << what << " lacks" << c.mnemonic << "on " << c.registers << ":\n"
        << *assembly;
    // Never the saturating u8 x s8 pair sum.
    EXPECT_EQ(assembly->find("pmaddubsw"), std::string::npos) << what;
    if (HostRuns(*target)) ExpectComputesTheReference(*func, *target, what);
  }
}

// A lane count no single register holds (a block of 12 or 24 channels) takes the instruction in
// parts: vpdpbusd on 8 + 4 lanes, vpmaddwd on 16 + 8 int16 halves.
TEST(Int8DotProduct, LaneCountsBetweenRegisterWidthsTakeTheInstructionInParts) {
  const struct {
    const char* cpu;
    int lanes;
    DotOp op;
    const char* mnemonic;
    std::vector<const char*> registers;
    int32_t (*reference)(int32_t, int32_t, int32_t);
  } kCases[] = {{"znver4", 12, ir::dot4_u8s8, "vpdpbusd\t", {"%ymm", "%xmm"}, Reference},
                {"znver4", 24, ir::dot4_u8s8, "vpdpbusd\t", {"%zmm", "%ymm"}, Reference},
                {"znver3", 12, ir::dot2_i16, "vpmaddwd\t", {"%ymm", "%xmm"}, PairReference}};
  for (const auto& c : kCases) {
    auto target = ParseTarget(std::string("llvm -mtriple=x86_64-linux-gnu -mcpu=") + c.cpu);
    ASSERT_TRUE(target.ok()) << target.status().ToString();
    const std::string what = std::string(c.cpu) + " x" + std::to_string(c.lanes);
    auto func = LowerDot4(*target, c.lanes, c.op);
    ASSERT_TRUE(func.ok()) << what << ": " << func.status().ToString();
    auto assembly = EmitAssembly({KernelSource{*func, "{}"}}, *target);
    ASSERT_TRUE(assembly.ok()) << what << ": " << assembly.status().ToString();
    for (const char* reg : c.registers) {
      bool found = false;
      for (size_t at = assembly->find(c.mnemonic); at != std::string::npos && !found;
           at = assembly->find(c.mnemonic, at + 1)) {
        found = assembly->substr(at, assembly->find('\n', at) - at).find(reg) != std::string::npos;
      }
      EXPECT_TRUE(found) << what << " lacks " << c.mnemonic << "on " << reg << ":\n" << *assembly;
    }
    if (HostRuns(*target)) ExpectComputesTheReference(*func, *target, what, c.reference);
  }
}

TEST(Int8DotProduct, ScalarLanesAndOtherArchitecturesWidenExactly) {
  ExpectComputesTheReference(*LowerDot4(HostTarget(), 1), HostTarget(), "host x1");
  // Lane counts that are no power of two (blocks of 3 or 12 channels): widening arithmetic.
  for (int lanes : {2, 3, 12, 16}) {
    ExpectComputesTheReference(*LowerDot4(HostTarget(), lanes), HostTarget(), "host x" + std::to_string(lanes));
  }
  for (const char* text : {"rasp4b", "llvm -mtriple=armv7a-linux-gnueabihf -mcpu=cortex-a53 -mattr=+neon"}) {
    auto target = ParseTarget(text);
    ASSERT_TRUE(target.ok()) << target.status().ToString();
    auto func = LowerDot4(*target, 4);
    ASSERT_TRUE(func.ok()) << text << ": " << func.status().ToString();
    auto assembly = EmitAssembly({KernelSource{*func, "{}"}}, *target);
    ASSERT_TRUE(assembly.ok()) << text << ": " << assembly.status().ToString();
    EXPECT_NE(assembly->find("mul"), std::string::npos) << text << ":\n" << *assembly;
  }
}

// dot2_i16, the AVX2 int8 kernels' product of int16 pairs: vpmaddwd at each width, exact over all
// int16 values (random words, both halves' extremes among them), and widening arithmetic elsewhere.
TEST(Int8DotProduct, PairsOfInt16AreVpmaddwdOnX86AndExactEverywhere) {
  const struct {
    const char* cpu;
    int lanes;
    const char* registers;
  } kCases[] = {{"znver3", 8, "%ymm"}, {"skylake-avx512", 16, "%zmm"}, {"nehalem", 4, "%xmm"}};
  for (const auto& c : kCases) {
    auto target = ParseTarget(std::string("llvm -mtriple=x86_64-linux-gnu -mcpu=") + c.cpu);
    ASSERT_TRUE(target.ok()) << target.status().ToString();
    const std::string what = std::string(c.cpu) + " pairs x" + std::to_string(c.lanes);
    auto func = LowerDot4(*target, c.lanes, ir::dot2_i16);
    ASSERT_TRUE(func.ok()) << what << ": " << func.status().ToString();
    auto assembly = EmitAssembly({KernelSource{*func, "{}"}}, *target);
    ASSERT_TRUE(assembly.ok()) << what << ": " << assembly.status().ToString();
    EXPECT_NE(LineWith(*assembly, "pmaddwd\t").find(c.registers), std::string::npos) << what << ":\n" << *assembly;
    if (HostRuns(*target)) ExpectComputesTheReference(*func, *target, what, PairReference);
  }
  for (int lanes : {1, 3, 8}) {
    ExpectComputesTheReference(*LowerDot4(HostTarget(), lanes, ir::dot2_i16), HostTarget(),
                               "host pairs x" + std::to_string(lanes), PairReference);
  }
  auto rasp = LowerDot4(*ParseTarget("rasp4b"), 4, ir::dot2_i16);
  ASSERT_TRUE(rasp.ok()) << rasp.status().ToString();
  auto assembly = EmitAssembly({KernelSource{*rasp, "{}"}}, *ParseTarget("rasp4b"));
  ASSERT_TRUE(assembly.ok()) << assembly.status().ToString();
  EXPECT_NE(assembly->find("mul"), std::string::npos) << *assembly;
}

// Which form the int8 templates take on each x86 kind: vpdpbusd where VNNI is at the kernels'
// width, vpmaddwd pairs from AVX2 up, int32 vectors below.
TEST(Int8DotProduct, EachX86KindNamesItsInt8Form) {
  const std::pair<const char*, Int8Products> kForms[] = {
      {"sapphirerapids", Int8Products::kU8S8Quads}, {"znver4", Int8Products::kU8S8Quads},
      {"alderlake", Int8Products::kU8S8Quads},      {"znver3", Int8Products::kI16Pairs},
      {"skylake-avx512", Int8Products::kI16Pairs},  {"nehalem", Int8Products::kInt32Vectors}};
  for (const auto& [cpu, form] : kForms) {
    auto target = ParseTarget(std::string("llvm -mtriple=x86_64-linux-gnu -mcpu=") + cpu);
    ASSERT_TRUE(target.ok()) << target.status().ToString();
    EXPECT_EQ(int(target->int8_products), int(form)) << cpu;
  }
  EXPECT_EQ(int(ParseTarget("rasp5")->int8_products), int(Int8Products::kS8S8Quads));
  EXPECT_EQ(int(ParseTarget("rasp4b")->int8_products), int(Int8Products::kS8S8Quads));
  EXPECT_EQ(int(ParseTarget("rasp3b")->int8_products), int(Int8Products::kInt32Vectors));
}

// dot4_s8s8, the aarch64 int8 kernels' product: sdot on the Raspberry Pi 5 (Cortex-A76, +dotprod),
// smull / saddlp / addp widening multiply-adds on the Raspberry Pi 4 (Cortex-A72), read from the
// assembly; exact on this machine in its widening form (the cross tests run the Arm code under qemu).
TEST(Int8DotProduct, Aarch64UsesSdotWithTheDotProductExtensionAndWideningMultiplyAddsWithout) {
  for (int lanes : {4, 8, 16}) {
    for (const char* board : {"rasp5", "rasp4b"}) {
      const std::string what = std::string(board) + " x" + std::to_string(lanes);
      auto func = LowerDot4(*ParseTarget(board), lanes, ir::dot4_s8s8);
      ASSERT_TRUE(func.ok()) << what << ": " << func.status().ToString();
      auto assembly = EmitAssembly({KernelSource{*func, "{}"}}, *ParseTarget(board));
      ASSERT_TRUE(assembly.ok()) << what << ": " << assembly.status().ToString();
      if (std::string(board) == "rasp5") {
        EXPECT_NE(LineWith(*assembly, "\tsdot\t").find(".16b"), std::string::npos) << what << ":\n" << *assembly;
      } else {
        EXPECT_EQ(assembly->find("sdot"), std::string::npos) << what;
        for (const char* mnemonic : {"\tsmull", "\tsaddlp\t", "\taddp\t"}) {
          EXPECT_NE(assembly->find(mnemonic), std::string::npos) << what << " lacks " << mnemonic << ":\n" << *assembly;
        }
      }
    }
  }
  for (int lanes : {1, 3, 4, 16}) {
    ExpectComputesTheReference(*LowerDot4(HostTarget(), lanes, ir::dot4_s8s8), HostTarget(),
                               "host signed x" + std::to_string(lanes), SignedReference);
  }
}

TEST(Int8DotProduct, CudaUsesDp4aAndItsEmulationComputesTheExactSum) {
  auto func = LowerDot4(*ParseTarget("cuda -arch=sm_80"), 1);
  ASSERT_TRUE(func.ok()) << func.status().ToString();
  auto ptx = EmitPtx({KernelSource{*func, "{}"}}, *ParseTarget("cuda -arch=sm_80"));
  ASSERT_TRUE(ptx.ok()) << ptx.status().ToString();
  EXPECT_NE(ptx->find("dp4a.u32.s32"), std::string::npos) << *ptx;
  const Target emulated = *ParseTarget("cuda -arch=sm_80 -emulate=host");
  auto on_host = LowerDot4(emulated, 1);
  ASSERT_TRUE(on_host.ok()) << on_host.status().ToString();
  ExpectComputesTheReference(*on_host, HostTarget(), "cuda emulated");
}

// out[i] = round_to_int32(x[i]), `lanes` at a time, over values that test the rounding: every tie
// from -4.5 to 4.5 (half to even: 2.5 -> 2, -1.5 -> -2), int32's reach near 2^30, fractions.
std::vector<float> RoundingInputs() {
  std::vector<float> x;
  for (int k = -9; k <= 9; k += 2) x.push_back(float(k) * 0.5f);
  for (float v : {0.49999997f, -0.49999997f, 1073741824.0f, -1073741824.0f, 8388607.5f, -8388608.5f, 0.0f, -0.0f}) {
    x.push_back(v);
  }
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> any(-70000.0f, 70000.0f);
  while (x.size() < size_t(kN)) x.push_back(any(rng));
  return x;
}

Result<passes::LoweredFunc> LowerRoundToInt32(const Target& target, int lanes) {
  ir::Tensor x = te::Placeholder("x", {kN}, ir::Type::Float(32));
  ir::Tensor out =
      te::Compute("out", {kN}, [&](const std::vector<ir::Expr>& i) { return ir::round_to_int32(te::Read(x, {i[0]})); });
  te::Schedule schedule({out});
  te::Stage& st = schedule[out];
  auto [outer, inner] = st.split(st.axes[0], lanes);
  if (lanes > 1) st.vectorize(inner);
  return passes::Lower(schedule, {x, out}, "round", target, passes::StepList::kCpu);
}

void ExpectRoundsHalfToEven(const passes::LoweredFunc& func, Target target, const std::string& what) {
  target.is_host = true;
  auto jit = JitCompile({KernelSource{func, "{}"}}, target);
  ASSERT_TRUE(jit.ok()) << what << ": " << jit.status().ToString();
  auto fn = (*jit)->Lookup("round");
  ASSERT_TRUE(fn.ok()) << what;
  std::vector<float> x = RoundingInputs();
  std::vector<int32_t> out(kN, 12345);
  void* args[] = {x.data(), out.data()};
  ASSERT_EQ((*fn)(args), 0) << what;
  for (int64_t i = 0; i < kN; ++i) {
    ASSERT_EQ(out[size_t(i)], int32_t(std::nearbyint(x[size_t(i)]))) << what << " x = " << x[size_t(i)];
  }
}

// One conversion that rounds (vcvtps2dq, AVX-512's naming round-to-nearest-even itself; fcvtns on
// aarch64) rather than a rounding and a truncating conversion; the same values at every width.
TEST(RoundToInt32, IsOneRoundingConversionAndRoundsHalfToEven) {
  const struct {
    const char* target;
    int lanes;
    const char* mnemonic;
    const char* operand;  // a part of the instruction's line
  } kCases[] = {{"llvm -mtriple=x86_64-linux-gnu -mcpu=znver4", 16, "\tvcvtps2dq\t", "{rn-sae}"},
                {"llvm -mtriple=x86_64-linux-gnu -mcpu=znver4", 12, "\tvcvtps2dq\t", "%ymm"},  // 8 + 4
                {"llvm -mtriple=x86_64-linux-gnu -mcpu=znver3", 8, "\tvcvtps2dq\t", "%ymm"},
                {"llvm -mtriple=x86_64-linux-gnu -mcpu=nehalem", 4, "\tcvtps2dq\t", "%xmm"},
                {"rasp5", 4, "\tfcvtns\t", ".4s"},
                {"rasp4b", 8, "\tfcvtns\t", ".4s"}};
  for (const auto& c : kCases) {
    auto target = ParseTarget(c.target);
    ASSERT_TRUE(target.ok()) << target.status().ToString();
    const std::string what = std::string(c.target) + " x" + std::to_string(c.lanes);
    auto func = LowerRoundToInt32(*target, c.lanes);
    ASSERT_TRUE(func.ok()) << what << ": " << func.status().ToString();
    auto assembly = EmitAssembly({KernelSource{*func, "{}"}}, *target);
    ASSERT_TRUE(assembly.ok()) << what << ": " << assembly.status().ToString();
    EXPECT_NE(LineWith(*assembly, c.mnemonic).find(c.operand), std::string::npos)
        << what << " lacks" << c.mnemonic << "with " << c.operand << ":\n"
        << *assembly;
    EXPECT_EQ(assembly->find("vrndscaleps"), std::string::npos) << what;
    if (HostRuns(*target)) ExpectRoundsHalfToEven(*func, *target, what);
  }
  // 32-bit ARM rounds from floor (its backend has no vector roundeven); the host at odd widths.
  auto armv7 = LowerRoundToInt32(*ParseTarget("rasp3b"), 4);
  ASSERT_TRUE(armv7.ok()) << armv7.status().ToString();
  EXPECT_TRUE(EmitAssembly({KernelSource{*armv7, "{}"}}, *ParseTarget("rasp3b")).ok());
  for (int lanes : {1, 3, 12, 16}) {
    ExpectRoundsHalfToEven(*LowerRoundToInt32(HostTarget(), lanes), HostTarget(), "host x" + std::to_string(lanes));
  }
}

}  // namespace
}  // namespace tunefarm::compiler
