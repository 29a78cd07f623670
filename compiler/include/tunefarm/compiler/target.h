// Target: what a kernel is compiled for, parsed from TVM-style strings.
//
//   native | llvm                      this machine (host triple, CPU and features detected)
//   llvm -mtriple=T -mcpu=C -mattr=+a,+b [-model=NAME] [-keys=k1,k2]
//   rasp4b   aarch64, cortex-a72, NEON          rasp3b   armv7 hard-float, cortex-a53, NEON
//   x86-avx2 x86-64 haswell (AVX2+FMA)          x86-avx512  x86-64 skylake-avx512
//   cuda                               the first visible NVIDIA GPU (its architecture, name and limits
//                                      from the driver; an error naming the alternatives without one)
//   cuda -arch=sm_NN [-model=NAME]     sm_75, sm_80, sm_86, sm_87, sm_89, sm_90, sm_90a (CUDA 13's range)
//   ... -emulate=host                  a CUDA target whose kernels are lowered for the GPU (threads bound,
//                                      launch verified) and then built as host code with the GPU's
//                                      semantics, to check GPU lowerings on a machine without one
//   h100 h200 a100 a10 l4 t4 rtx3090 rtx4090   tags: architecture and launch limits of the card
//                                      (`cuda -model=h200` is the same; -arch must then agree)
// Keys (cpu, arm_cpu, cuda, gpu) and the model (device name) drive apply-history-best matching.
// Every malformed string is an InvalidArgument naming the bad part.
#ifndef TUNEFARM_COMPILER_TARGET_H_
#define TUNEFARM_COMPILER_TARGET_H_

#include <string>
#include <string_view>
#include <vector>

#include "tunefarm/runtime/result.h"

namespace tunefarm::compiler {

// The code generator a target compiles through: LLVM's CPU back ends (x86-64, AArch64, ARM) or
// its NVPTX back end for CUDA GPUs. The one place a target's kind is named: everything else
// compares the enum (a test greps the tree for string comparisons of kinds).
enum class TargetKind { kLlvm, kCuda };
// "llvm" or "cuda": the kind's name in target strings and messages.
const char* TargetKindName(TargetKind kind);

// What one kernel launch may use on a GPU; the validity check of GPU configs reads it.
struct GpuLimits {
  int max_threads_per_block = 1024;
  int max_shared_memory_per_block = 48 << 10;  // bytes, without the opt-in attribute
  int max_shared_memory_optin = 48 << 10;      // bytes, with it
  int max_registers_per_block = 65536;
  int max_registers_per_thread = 255;
  int warp_size = 32;
  int sm_count = 0;  // 0: unknown (a bare -arch)
};

// The int8 multiply-adds a target's int8 templates are written for.
enum class Int8Products {
  kInt32Vectors,  // bytes widened to int32 lanes, one multiply-add per product (ARMv7, SSE)
  // ir::dot4_u8s8: four uint8 x int8 products per int32 lane in one instruction (vpdpbusd: AVX-512
  // VNNI, AVX-VNNI)
  kU8S8Quads,
  // ir::dot2_i16: two int16 products per int32 lane (vpmaddwd: AVX2 and AVX-512 without VNNI), the
  // weights stored as int16, so no pair sum saturates as vpmaddubsw's does
  kI16Pairs,
  // ir::dot4_s8s8: four int8 x int8 products per int32 lane (aarch64: sdot with the dot-product
  // extension, Cortex-A76 and Raspberry Pi 5; smull and saddlp widening multiply-adds without it)
  kS8S8Quads,
};

struct Target {
  TargetKind kind = TargetKind::kLlvm;
  std::string triple;    // normalized LLVM triple, e.g. aarch64-unknown-linux-gnu
  std::string cpu;       // LLVM CPU name, e.g. cortex-a72, sapphirerapids
  std::string features;  // LLVM feature string, e.g. "+neon" (may be empty)
  std::string arch;      // cuda: sm_XX
  std::vector<std::string> keys;
  std::string model;  // device name when known (tag name or -model=)
  GpuLimits gpu;      // TargetKind::kCuda
  // kCuda with -emulate=host: every kernel is lowered for the GPU, then run on this CPU with the
  // GPU's semantics (passes/emulate_gpu_on_host.h; block and thread loops serial, split at
  // barriers). Models compile into artifacts for this CPU; nothing becomes PTX.
  bool emulated = false;

  // float32 lanes of the widest vector the target computes with: 16 AVX-512, 8 AVX2, 4 NEON/SSE.
  int vector_lanes = 4;
  // How the int8 conv and dense templates multiply (schedule/templates/template_util.h),
  // chosen where each was measured to beat int32 vectors (bench/RESULTS.md). Derived, like vector_lanes.
  Int8Products int8_products = Int8Products::kInt32Vectors;
  bool is_host = false;  // kernels can be JIT-compiled and run in this process
  // The features were detected on this machine (native/llvm without -mcpu/-mattr): the canonical
  // string then names only the CPU, not the detected feature list.
  bool detected_features = false;

  // Canonical string; ParseTarget(ToString()) gives back an equal target.
  std::string ToString() const;
  bool is_arm() const;
};

Result<Target> ParseTarget(std::string_view text);
// The host as a target ("native").
Target HostTarget();
// An LLVM target's enabled features among those the runtime can detect on a board
// (runtime::CheckableCpuFeatures): what an artifact built for it records as required.
std::vector<std::string> RequiredCpuFeatures(const Target& target);

}  // namespace tunefarm::compiler

#endif  // TUNEFARM_COMPILER_TARGET_H_
