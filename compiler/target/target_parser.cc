// Parses TVM-style target strings into Target (see tunefarm/compiler/target.h).
#include <algorithm>
#include <sstream>

#include "compiler/codegen/llvm_headers.h"
#include "compiler/codegen/llvm_init.h"
#include "tunefarm/compiler/target.h"

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
    {"rasp3b", "armv7-unknown-linux-gnueabihf", "cortex-a53", "+neon", "arm_cpu,cpu"},
    {"x86-avx2", "x86_64-unknown-linux-gnu", "haswell", "", "cpu"},
    {"x86-avx512", "x86_64-unknown-linux-gnu", "skylake-avx512", "", "cpu"},
};

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

// Fills vector_lanes; CreateTargetMachine rejects an unknown triple, CPU or feature by name.
Status Validate(Target* t) {
  auto tm = CreateTargetMachine(t->triple, t->cpu, t->features);
  if (!tm.ok()) return tm.status();
  const llvm::MCSubtargetInfo* sti = (*tm)->getMCSubtargetInfo();
  llvm::Triple triple(t->triple);
  if (triple.isX86()) {
    t->vector_lanes = sti->checkFeatures("+avx512f") ? 16 : (sti->checkFeatures("+avx2") ? 8 : 4);
  } else {
    t->vector_lanes = 4;
  }
  return Status::OK();
}

}  // namespace

Target HostTarget() {
  InitializeLLVM();
  Target t;
  t.kind = "llvm";
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
  } else if (head == "cuda") {
    t.kind = "cuda";
    t.keys = {"cuda", "gpu"};
    t.arch = "sm_90";
  } else {
    auto tag = std::find_if(std::begin(kTags), std::end(kTags), [&](const Tag& g) { return head == g.name; });
    if (tag == std::end(kTags)) {
      return Status::InvalidArgument("unknown target kind '" + head + "' in target " + quoted +
                                     "; expected llvm, cuda or a tag (native, rasp4b, rasp3b, x86-avx2, x86-avx512)");
    }
    t.kind = "llvm";
    t.triple = tag->triple;
    t.cpu = tag->cpu;
    t.features = tag->features;
    t.keys = SplitComma(tag->keys);
    t.model = tag->name;
    explicit_triple = true;
  }

  bool cpu_given = false;
  for (size_t i = 1; i < tokens.size(); ++i) {
    const std::string& tok = tokens[i];
    size_t eq = tok.find('=');
    if (tok.size() < 2 || tok[0] != '-' || eq == std::string::npos || eq + 1 == tok.size()) {
      return Status::InvalidArgument("malformed target option '" + tok + "' in target " + quoted +
                                     "; expected -name=value");
    }
    std::string name = tok.substr(tok[1] == '-' ? 2 : 1, eq - (tok[1] == '-' ? 2 : 1));
    std::string value = tok.substr(eq + 1);
    if (t.kind == "cuda") {
      if (name == "arch") {
        if (value.rfind("sm_", 0) != 0) return Status::InvalidArgument("bad CUDA arch '" + value + "'; expected sm_NN");
        t.arch = value;
      } else if (name == "model") {
        t.model = value;
      } else {
        return Status::InvalidArgument("unknown option '-" + name + "' for cuda target " + quoted);
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
  if (t.kind == "cuda") return t;

  llvm::Triple host(llvm::sys::getProcessTriple()), mine(t.triple);
  t.is_host = mine.getArch() == host.getArch() && mine.getOS() == host.getOS();
  if (explicit_triple && !t.is_host && !cpu_given && t.model.empty()) t.cpu = "generic";
  if ((head == "llvm" || head == "native") && cpu_given) {
    // An explicit CPU replaces the host's: its features come from the CPU, not from detection.
    bool features_given = std::any_of(tokens.begin(), tokens.end(), [](const std::string& s) { return s.rfind("-mattr=", 0) == 0; });
    if (!features_given) t.features.clear();
    t.detected_features = false;
  }
  if (t.is_host && t.is_arm()) t.keys = {"arm_cpu", "cpu"};
  if (head == "llvm" && explicit_triple && !t.is_host && t.is_arm()) t.keys = {"arm_cpu", "cpu"};
  TUNEFARM_RETURN_IF_ERROR(Validate(&t).WithContext("target " + quoted));
  // Running a kernel in-process also needs the host to have every feature the target asks for.
  if (t.is_host && head != "native" && head != "llvm") t.is_host = t.vector_lanes <= HostTarget().vector_lanes;
  return t;
}

}  // namespace tunefarm::compiler
