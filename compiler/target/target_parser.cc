// Parses TVM-style target strings into Target (see tunefarm/compiler/target.h).
#include <algorithm>
#include <cctype>
#include <sstream>

#include "compiler/codegen/llvm_headers.h"
#include "compiler/codegen/llvm_init.h"
#include "tunefarm/compiler/target.h"
#include "tunefarm/runtime/cpu_features.h"
#include "tunefarm/runtime/cuda_driver.h"

namespace tunefarm::compiler {
namespace {

struct Tag {
  const char* name;
  const char* triple;
  const char* cpu;
  const char* features;
  const char* keys;
};

constexpr Tag kTags[] = {
    {"rasp4b", "aarch64-unknown-linux-gnu", "cortex-a72", "+neon", "arm_cpu,cpu"},
    {"rasp5", "aarch64-unknown-linux-gnu", "cortex-a76", "+neon,+dotprod", "arm_cpu,cpu"},
    {"rasp3b", "armv7-unknown-linux-gnueabihf", "cortex-a53", "+neon", "arm_cpu,cpu"},
    {"x86-avx2", "x86_64-unknown-linux-gnu", "haswell", "", "cpu"},
    {"x86-avx512", "x86_64-unknown-linux-gnu", "skylake-avx512", "", "cpu"},
};

// NVIDIA cards by tag: architecture, SMs and the opt-in shared memory per block (KiB); the other
// limits are the same on every architecture CUDA 13 supports (1024 threads, 64 K registers, warp 32,
// 48 KiB of shared memory without the opt-in).
struct GpuTag {
  const char* name;
  const char* arch;
  int sm_count;
  int shared_optin_kib;
  const char* device_name;  // as the driver names it (cuDeviceGetName contains this)
};

constexpr GpuTag kGpuTags[] = {
    {"h100", "sm_90", 132, 227, "H100"},
    {"h200", "sm_90", 132, 227, "H200"},
    {"a100", "sm_80", 108, 163, "A100"},
    {"a10", "sm_86", 72, 99, "A10"},
    {"l4", "sm_89", 58, 99, "L4"},
    {"t4", "sm_75", 40, 64, "T4"},
    {"rtx3090", "sm_86", 82, 99, "RTX 3090"},
    {"rtx4090", "sm_89", 128, 99, "RTX 4090"},
};

constexpr const char* kCudaArchs[] = {"sm_75", "sm_80", "sm_86", "sm_87", "sm_89", "sm_90", "sm_90a"};

const GpuTag* FindGpuTag(const std::string& name) {
  auto it = std::find_if(std::begin(kGpuTags), std::end(kGpuTags), [&](const GpuTag& g) { return name == g.name; });
  return it == std::end(kGpuTags) ? nullptr : it;
}

void ApplyGpuTag(const GpuTag& tag, Target* t) {
  t->arch = tag.arch;
  t->model = tag.name;
  t->gpu = GpuLimits();
  t->gpu.sm_count = tag.sm_count;
  t->gpu.max_shared_memory_optin = tag.shared_optin_kib << 10;
}

// The first visible GPU, as the driver describes it.
Status DetectGpu(Target* t) {
  const std::string alternatives =
      "name the card instead: cuda -arch=sm_NN, or a tag (h100, h200, a100, a10, l4, t4, rtx3090, rtx4090)";
  auto driver = CudaDriver::Load();
  if (!driver.ok()) {
    return Status::InvalidArgument("target 'cuda' means this machine's first GPU, and " + driver.status().message() +
                                   "; " + alternatives);
  }
  auto info = (*driver)->Describe(0);
  if (!info.ok()) {
    return Status::InvalidArgument("target 'cuda' means this machine's first GPU: " + info.status().message() + "; " +
                                   alternatives);
  }
  // A known card keeps its tag as the model (records are shared across hosts of that card).
  const GpuTag* known = nullptr;
  for (const GpuTag& g : kGpuTags) {
    if (info->name.find(g.device_name) != std::string::npos &&
        (!known || std::string(g.device_name).size() > std::string(known->device_name).size()))
      known = &g;
  }
  if (known) {
    ApplyGpuTag(*known, t);
  } else {
    std::string model;
    for (char c : info->name) model += c == ' ' ? '-' : char(std::tolower(static_cast<unsigned char>(c)));
    t->model = model;
  }
  t->arch = info->arch();
  t->gpu.max_threads_per_block = info->max_threads_per_block;
  t->gpu.max_shared_memory_per_block = info->max_shared_memory_per_block;
  t->gpu.max_registers_per_block = info->max_registers_per_block;
  t->gpu.warp_size = info->warp_size;
  t->gpu.sm_count = info->sm_count;
  return Status::OK();
}

std::vector<std::string> SplitComma(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

std::string HostFeatures() {
  std::string features;
  for (const auto& kv : llvm::sys::getHostCPUFeatures()) {
    if (!features.empty()) features += ",";
    features += (kv.second ? "+" : "-") + kv.first().str();
  }
  return features;
}

// Fills vector_lanes and int8_products; CreateTargetMachine rejects an unknown triple, CPU or
// feature by name.
Status Validate(Target* t) {
  auto tm = CreateTargetMachine(t->triple, t->cpu, t->features);
  if (!tm.ok()) return tm.status();
  const llvm::MCSubtargetInfo* sti = (*tm)->getMCSubtargetInfo();
  llvm::Triple triple(t->triple);
  if (triple.isX86()) {
    t->vector_lanes = sti->checkFeatures("+avx512f") ? 16 : (sti->checkFeatures("+avx2") ? 8 : 4);
    // vpdpbusd at the kernels' width (AVX-512 VNNI; AVX-VNNI on 256-bit cores), else vpmaddwd from
    // AVX2 up; SSE alone keeps int32 vectors.
    const bool vnni = sti->checkFeatures(t->vector_lanes == 16 ? "+avx512vnni" : "+avxvnni");
    t->int8_products = vnni                   ? Int8Products::kU8S8Quads
                       : t->vector_lanes >= 8 ? Int8Products::kI16Pairs
                                              : Int8Products::kInt32Vectors;
  } else {
    t->vector_lanes = 4;
    // sdot where the CPU has it, widening multiply-adds on other aarch64 (ARMv7: int32 vectors)
    if (triple.isAArch64()) t->int8_products = Int8Products::kS8S8Quads;
  }
  return Status::OK();
}

}  // namespace

Target HostTarget() {
  InitializeLLVM();
  Target t;
  t.kind = TargetKind::kLlvm;
  t.triple = llvm::Triple::normalize(llvm::sys::getProcessTriple());
  t.cpu = llvm::sys::getHostCPUName().str();
  t.features = HostFeatures();
  t.detected_features = true;
  t.keys = {"cpu"};
  t.is_host = true;
  Status s = Validate(&t);
  (void)s;  // the host is always valid for the LLVM that runs on it
  return t;
}

std::vector<std::string> RequiredCpuFeatures(const Target& target) {
  std::vector<std::string> required;
  if (target.kind != TargetKind::kLlvm) return required;
  auto tm = CreateTargetMachine(target.triple, target.cpu, target.features);
  if (!tm.ok()) return required;
  const llvm::MCSubtargetInfo* sti = (*tm)->getMCSubtargetInfo();
  for (const std::string& name : runtime::CheckableCpuFeatures(runtime::ArchOfTriple(target.triple))) {
    if (sti->checkFeatures("+" + name)) required.push_back(name);
  }
  return required;
}

Result<Target> ParseTarget(std::string_view text) {
  std::istringstream in{std::string(text)};
  std::vector<std::string> tokens;
  for (std::string tok; in >> tok;) tokens.push_back(tok);
  if (tokens.empty()) return Status::InvalidArgument("empty target string");
  const std::string& head = tokens[0];
  const std::string quoted = "'" + std::string(text) + "'";

  Target t;
  bool explicit_triple = false;
  if (head == "native" || head == "llvm") {
    t = HostTarget();
  } else if (head == "cuda" || FindGpuTag(head)) {
    t.kind = TargetKind::kCuda;
    t.keys = {"cuda", "gpu"};
    if (const GpuTag* tag = FindGpuTag(head)) ApplyGpuTag(*tag, &t);
  } else {
    auto tag = std::find_if(std::begin(kTags), std::end(kTags), [&](const Tag& g) { return head == g.name; });
    if (tag == std::end(kTags)) {
      return Status::InvalidArgument("unknown target kind '" + head + "' in target " + quoted +
                                     "; expected llvm, cuda or a tag (native, rasp5, rasp4b, rasp3b, x86-avx2, "
                                     "x86-avx512, h100, h200, a100, a10, l4, t4, rtx3090, rtx4090)");
    }
    t.kind = TargetKind::kLlvm;
    t.triple = tag->triple;
    t.cpu = tag->cpu;
    t.features = tag->features;
    t.keys = SplitComma(tag->keys);
    t.model = tag->name;
    explicit_triple = true;
  }

  bool cpu_given = false;
  std::string arch_given, model_given;
  std::vector<std::string> seen;  // a second -mtriple would silently win over the first
  for (size_t i = 1; i < tokens.size(); ++i) {
    const std::string& tok = tokens[i];
    size_t eq = tok.find('=');
    if (tok.size() < 2 || tok[0] != '-' || eq == std::string::npos || eq + 1 == tok.size()) {
      return Status::InvalidArgument("malformed target option '" + tok + "' in target " + quoted +
                                     "; expected -name=value");
    }
    std::string name = tok.substr(tok[1] == '-' ? 2 : 1, eq - (tok[1] == '-' ? 2 : 1));
    std::string value = tok.substr(eq + 1);
    if (std::find(seen.begin(), seen.end(), name) != seen.end()) {
      return Status::InvalidArgument("target " + quoted + " gives -" + name + " twice; give each option once");
    }
    seen.push_back(name);
    if (t.kind == TargetKind::kCuda) {
      if (name == "arch") {
        if (value.rfind("sm_", 0) != 0) return Status::InvalidArgument("bad CUDA arch '" + value + "'; expected sm_NN");
        if (std::find(std::begin(kCudaArchs), std::end(kCudaArchs), value) == std::end(kCudaArchs)) {
          return Status::InvalidArgument("CUDA arch '" + value +
                                         "' is not supported; supported: sm_75, sm_80, sm_86, "
                                         "sm_87, sm_89, sm_90, sm_90a (LLVM 19 and CUDA 13)");
        }
        arch_given = value;
      } else if (name == "model") {
        model_given = value;
      } else if (name == "emulate") {
        if (value != "host") {
          return Status::InvalidArgument("-emulate takes 'host' (run the GPU kernels on this CPU), got '" + value +
                                         "'");
        }
        t.emulated = true;
      } else {
        return Status::InvalidArgument("unknown option '-" + name + "' for cuda target " + quoted +
                                       "; known: -arch -model -emulate");
      }
      continue;
    }
    if (name == "mtriple") {
      t.triple = llvm::Triple::normalize(value);
      explicit_triple = true;
    } else if (name == "mcpu") {
      t.cpu = value;
      cpu_given = true;
    } else if (name == "mattr") {
      t.features = value;
      t.detected_features = false;
    } else if (name == "model") {
      t.model = value;
    } else if (name == "keys") {
      t.keys = SplitComma(value);
    } else {
      return Status::InvalidArgument("unknown option '-" + name + "' in target " + quoted +
                                     "; known: -mtriple -mcpu -mattr -model -keys");
    }
  }
  if (t.kind == TargetKind::kCuda) {
    if (!model_given.empty()) {
      if (const GpuTag* tag = FindGpuTag(model_given)) ApplyGpuTag(*tag, &t);
      t.model = model_given;
    }
    if (!arch_given.empty()) {
      if (!t.arch.empty() && FindGpuTag(t.model) && arch_given != t.arch) {
        return Status::InvalidArgument("target " + quoted + ": " + t.model + " is " + t.arch + ", not " + arch_given);
      }
      t.arch = arch_given;
    }
    if (t.arch.empty()) TUNEFARM_RETURN_IF_ERROR(DetectGpu(&t));
    return t;
  }

  llvm::Triple host(llvm::sys::getProcessTriple()), mine(t.triple);
  t.is_host = mine.getArch() == host.getArch() && mine.getOS() == host.getOS();
  const bool features_given =
      std::any_of(tokens.begin(), tokens.end(), [](const std::string& s) { return s.rfind("-mattr=", 0) == 0; });
  if (explicit_triple && !t.is_host && !cpu_given && t.model.empty()) {
    // Another machine: neither this host's CPU nor its features (x86's prfchw means nothing to an ARM triple).
    t.cpu = "generic";
    if ((head == "llvm" || head == "native") && !features_given) {
      t.features.clear();
      t.detected_features = false;
    }
  }
  if ((head == "llvm" || head == "native") && cpu_given) {
    // An explicit CPU replaces the host's: its features come from the CPU, not from detection.
    if (!features_given) t.features.clear();
    t.detected_features = false;
  }
  if (t.is_host && t.is_arm()) t.keys = {"arm_cpu", "cpu"};
  if (head == "llvm" && explicit_triple && !t.is_host && t.is_arm()) t.keys = {"arm_cpu", "cpu"};
  TUNEFARM_RETURN_IF_ERROR(Validate(&t).WithContext("target " + quoted));
  if (!mine.isOSLinux()) {
    return Status::InvalidArgument("target " + quoted + ": triple " + t.triple +
                                   " is not a Linux triple; the tunefarm "
                                   "runtime loads Linux shared libraries only (e.g. aarch64-linux-gnu)");
  }
  // Running a kernel in-process also needs the host to have every feature the target asks for.
  if (t.is_host && head != "native" && head != "llvm") t.is_host = t.vector_lanes <= HostTarget().vector_lanes;
  return t;
}

}  // namespace tunefarm::compiler
