#include "tunefarm/runtime/artifact.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "runtime/base/crc32c.h"
#include "tunefarm/runtime/atomic_file.h"
#include "tunefarm/runtime/element_convert.h"

namespace tunefarm::runtime {

const char* ConfigOriginName(ConfigOrigin origin) {
  switch (origin) {
    case ConfigOrigin::kRecords:
      return "records";
    case ConfigOrigin::kFallback:
      return "fallback";
    case ConfigOrigin::kNone:
      break;
  }
  return "";
}
namespace {

constexpr char kMagic[8] = {'T', 'F', 'A', 'R', 'T', 'I', 'F', '2'};
constexpr int kContainerVersion = 2;
constexpr int kSections = 3;
constexpr const char* kSectionNames[kSections] = {"metadata", "parameter", "library"};
// magic, count, {size, crc} per section, then the header's own CRC.
constexpr size_t kSectionEntryBytes = 12;
constexpr size_t kHeaderCrcAt = 8 + 4 + kSections * kSectionEntryBytes;
constexpr size_t kHeaderBytes = kHeaderCrcAt + 4;
// A sanity bound on any one section: larger is corruption, not a model.
constexpr uint64_t kMaxSection = uint64_t(1) << 36;
constexpr int kMaxArtifactThreads = 1024;  // as `run --threads` allows

const char* KindName(ArtifactTensor::Kind k) {
  switch (k) {
    case ArtifactTensor::kInput:
      return "input";
    case ArtifactTensor::kOutput:
      return "output";
    case ArtifactTensor::kParam:
      return "param";
    case ArtifactTensor::kIntermediate:
      return "intermediate";
  }
  return "intermediate";
}

void PutLE(std::string* out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out->push_back(char((v >> (8 * i)) & 0xff));
}

uint64_t GetLE(const std::string& bytes, size_t pos, int n) {
  uint64_t v = 0;
  for (int i = 0; i < n; ++i) v |= uint64_t(uint8_t(bytes[pos + size_t(i)])) << (8 * i);
  return v;
}

std::string Hex(uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "0x%08x", v);
  return buf;
}

Status Corrupt(const std::string& why) { return Status::Corruption("corrupt artifact: " + why); }

}  // namespace

const char* ElementTypeName(ElementType t) {
  switch (t) {
    case ElementType::kFloat32:
      return "float32";
    case ElementType::kInt64:
      return "int64";
    case ElementType::kInt32:
      return "int32";
    case ElementType::kInt8:
      return "int8";
    case ElementType::kUInt8:
      return "uint8";
    case ElementType::kBool:
      return "bool";
    case ElementType::kFloat64:
      return "float64";
    case ElementType::kFloat16:
      return "float16";
    case ElementType::kBFloat16:
      return "bfloat16";
    case ElementType::kInt16:
      return "int16";
    case ElementType::kUInt16:
      return "uint16";
    case ElementType::kUInt32:
      return "uint32";
    case ElementType::kUInt64:
      return "uint64";
  }
  return "float32";
}

Result<ElementType> ParseElementType(const std::string& name) {
  for (int t = 0; t <= int(ElementType::kUInt64); ++t) {
    if (name == ElementTypeName(ElementType(t))) return ElementType(t);
  }
  return Status::InvalidArgument("unknown element type '" + name + "'");
}

int ElementSize(ElementType t) {
  switch (t) {
    case ElementType::kFloat32:
    case ElementType::kInt32:
    case ElementType::kUInt32:
      return 4;
    case ElementType::kInt64:
    case ElementType::kFloat64:
    case ElementType::kUInt64:
      return 8;
    case ElementType::kFloat16:
    case ElementType::kBFloat16:
    case ElementType::kInt16:
    case ElementType::kUInt16:
      return 2;
    case ElementType::kInt8:
    case ElementType::kUInt8:
    case ElementType::kBool:
      return 1;
  }
  return 1;
}

int64_t ArtifactTensor::num_elements() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

Status CheckIndices(const IndexCheck& check, ElementType dtype, const void* data, int64_t count) {
  const size_t n = check.extents.size();
  for (int64_t i = 0; i < count; ++i) {
    int64_t v;
    if (dtype == ElementType::kInt32) {
      int32_t v32;
      std::memcpy(&v32, static_cast<const char*>(data) + i * 4, 4);
      v = v32;
    } else {
      std::memcpy(&v, static_cast<const char*>(data) + i * 8, 8);
    }
    const int64_t e = check.extents[size_t(i) % n];
    const int64_t lo = -e;  // ONNX's gathers count negative indices from the end
    if (v < lo || v >= e) {
      return Status::InvalidArgument(check.node + ": index " + std::to_string(v) + " at position " + std::to_string(i) +
                                     " is out of range [" + std::to_string(lo) + ", " + std::to_string(e - 1) +
                                     "] (an axis of " + std::to_string(e) + ")");
    }
  }
  return Status::OK();
}

Status CheckConditions(const std::vector<ConditionCheck>& checks, const std::function<Result<bool>(int)>& read) {
  for (const ConditionCheck& check : checks) {
    bool all_hold = true;
    for (const auto& [t, value] : check.fails_when) {
      TUNEFARM_ASSIGN_OR_RETURN(bool holds, read(t));
      all_hold = all_hold && holds == value;
      if (!all_hold) break;
    }
    if (all_hold) return Status::InvalidArgument(check.message);
  }
  return Status::OK();
}

Status Artifact::Validate() const {
  if (threads < 0 || threads > kMaxArtifactThreads) {
    return Corrupt("its thread count " + std::to_string(threads) + " is outside [0, " +
                   std::to_string(kMaxArtifactThreads) + "]");
  }
  const int nt = int(tensors.size());
  for (int i = 0; i < nt; ++i) {
    const ArtifactTensor& t = tensors[size_t(i)];
    int64_t n = 1;
    for (int64_t d : t.shape) {
      if (d < 0 || d > (int64_t(1) << 40) || (d > 0 && n > (int64_t(1) << 40) / d)) {
        return Corrupt("tensor '" + t.name + "' has an invalid shape");
      }
      n *= d;
    }
    // Kernels compute only on storage types; an edge type converts to exactly its tensor's type.
    if (!IsStorageType(t.dtype)) {
      return Corrupt("tensor '" + t.name + "' is stored as " + ElementTypeName(t.dtype) +
                     ", which no kernel computes on");
    }
    if (t.edge_dtype && (t.kind == ArtifactTensor::kParam || t.kind == ArtifactTensor::kIntermediate ||
                         StorageTypeOf(*t.edge_dtype) != t.dtype)) {
      return Corrupt("tensor '" + t.name + "' has edge type " + ElementTypeName(*t.edge_dtype) +
                     ", which its kind and " + ElementTypeName(t.dtype) + " storage cannot have");
    }
    if (t.kind == ArtifactTensor::kParam &&
        (t.param_offset < 0 || uint64_t(t.param_offset) + uint64_t(t.bytes()) > params.size())) {
      return Corrupt("parameter '" + t.name + "' lies outside the parameter section");
    }
    if (t.view_of >= 0) {
      if (t.view_of >= nt || tensors[size_t(t.view_of)].view_of >= 0 ||
          tensors[size_t(t.view_of)].bytes() != t.bytes()) {
        return Corrupt("tensor '" + t.name + "' is a view of an invalid tensor");
      }
    }
  }
  if (device != "cpu" && device != "cuda") return Corrupt("unknown device '" + device + "' (cpu, cuda)");
  for (const auto& k : kernels) {
    if (k.symbol.empty()) return Corrupt("a kernel without a symbol");
    if (device_kind() == Device::Kind::kCuda) {
      for (int d = 0; d < 3; ++d) {
        // CUDA's limits: grid x < 2^31, grid y and z <= 65535, at most 1024 threads per dimension.
        const int64_t max_grid = d == 0 ? (int64_t(1) << 31) - 1 : 65535;
        if (k.grid[size_t(d)] < 1 || k.block[size_t(d)] < 1 || k.grid[size_t(d)] > max_grid ||
            k.block[size_t(d)] > 1024) {
          return Corrupt("CUDA kernel '" + k.symbol + "' has an invalid launch");
        }
      }
      if (k.shared_bytes < 0) return Corrupt("CUDA kernel '" + k.symbol + "' has negative shared memory");
    }
    for (int a : k.args) {
      if (a < 0 || a >= nt) return Corrupt("kernel '" + k.symbol + "' refers to tensor " + std::to_string(a));
    }
    for (const auto& check : k.index_checks) {
      if (check.tensor < 0 || check.tensor >= nt || check.extents.empty() ||
          (tensors[size_t(check.tensor)].dtype != ElementType::kInt64 &&
           tensors[size_t(check.tensor)].dtype != ElementType::kInt32)) {
        return Corrupt("kernel '" + k.symbol + "' checks indices that are not an int32 or int64 tensor");
      }
      for (int64_t e : check.extents) {
        if (e < 0) return Corrupt("kernel '" + k.symbol + "' checks indices against a negative extent");
      }
    }
    auto is_condition = [&](int t) {
      return t >= 0 && t < nt && tensors[size_t(t)].dtype == ElementType::kBool &&
             tensors[size_t(t)].num_elements() == 1;
    };
    for (const auto& [t, value] : k.run_if) {
      if (!is_condition(t))
        return Corrupt("kernel '" + k.symbol + "' runs on a condition that is not a one-element bool tensor");
    }
    for (const auto& check : k.condition_checks) {
      bool valid = !check.fails_when.empty();
      for (const auto& [t, value] : check.fails_when) valid = valid && is_condition(t);
      if (!valid) return Corrupt("kernel '" + k.symbol + "' checks a condition that is not a one-element bool tensor");
    }
  }
  for (const auto* list : {&inputs, &outputs}) {
    for (int a : *list) {
      if (a < 0 || a >= nt) return Corrupt("an input or output refers to tensor " + std::to_string(a));
    }
  }
  TUNEFARM_RETURN_IF_ERROR(ValidateSymbolicDim());
  if (library.empty() && !kernels.empty())
    return Corrupt(device_kind() == Device::Kind::kCuda ? "no PTX module" : "no kernel library");
  return Status::OK();
}

// The symbolic dimension and the tensors that follow it: everything the executor relies on to size
// a run (a scaled tensor's dimension 0 is its scale times the maximum, and a view keeps its base's
// rows: the same bytes per unit of the size).
Status Artifact::ValidateSymbolicDim() const {
  const int nt = int(tensors.size());
  for (const ArtifactTensor& t : tensors) {
    if (t.leading_scale < 0 || (t.leading_scale > 0 && !symbolic_dim)) {
      return Corrupt("tensor '" + t.name + "' has a leading scale (" + std::to_string(t.leading_scale) +
                     ") but the artifact no symbolic dimension");
    }
    if (t.leading_scale == 0) continue;
    if (t.kind == ArtifactTensor::kParam || t.shape.empty() || t.shape[0] != t.leading_scale * symbolic_dim->max) {
      return Corrupt("tensor '" + t.name + "' follows the symbolic dimension with scale " +
                     std::to_string(t.leading_scale) + " but its kind or shape cannot");
    }
    if (t.view_of >= 0) {
      const ArtifactTensor& base = tensors[size_t(t.view_of)];
      if (base.leading_scale == 0)
        return Corrupt("tensor '" + t.name + "' follows the symbolic dimension, its base not");
    }
  }
  if (!symbolic_dim) return Status::OK();
  const SymbolicDim& d = *symbolic_dim;
  if (d.min < 1 || d.max <= d.min || d.max > (int64_t(1) << 31)) {
    return Corrupt("its symbolic dimension '" + d.name + "' has an invalid range [" + std::to_string(d.min) + ", " +
                   std::to_string(d.max) + "]");
  }
  if (d.tensor < 0 || d.tensor >= nt || tensors[size_t(d.tensor)].kind != ArtifactTensor::kIntermediate ||
      tensors[size_t(d.tensor)].dtype != ElementType::kInt64 || tensors[size_t(d.tensor)].num_elements() != 1 ||
      tensors[size_t(d.tensor)].view_of >= 0) {
    return Corrupt("its symbolic dimension '" + d.name + "' has no valid size tensor");
  }
  for (int i : inputs) {
    if (i >= 0 && i < nt && tensors[size_t(i)].leading_scale > 0) return Status::OK();
  }
  return Corrupt("its symbolic dimension '" + d.name + "' is followed by no input");
}

std::string Artifact::MetadataJson() const {
  nlohmann::ordered_json j;
  // The oldest version that holds what this artifact has (kArtifactFormatVersion's note): a runtime
  // that predates a field still loads every artifact it can run, and refuses by version the ones
  // it would misread.
  int version = 2;
  for (const auto& t : tensors) version = std::max(version, t.edge_dtype ? 3 : 2);
  for (const auto& k : kernels) {
    version = std::max(version, !k.condition_checks.empty() ? 4 : !k.run_if.empty() ? 3 : 2);
  }
  if (symbolic_dim) version = std::max(version, 5);
  j["format_version"] = version;
  j["target"] = target;
  if (!triple.empty()) {
    j["triple"] = triple;
    j["cpu"] = cpu;
    j["cpu_features"] = cpu_features;
  }
  j["device"] = device;
  j["model"] = model;
  j["opt_level"] = opt_level;
  if (threads > 0) j["threads"] = threads;
  if (symbolic_dim) {
    j["symbolic_dim"] = {{"name", symbolic_dim->name},
                         {"min", symbolic_dim->min},
                         {"max", symbolic_dim->max},
                         {"tensor", symbolic_dim->tensor}};
  }
  nlohmann::ordered_json ts = nlohmann::ordered_json::array();
  for (const auto& t : tensors) {
    nlohmann::ordered_json e;
    e["name"] = t.name;
    e["kind"] = KindName(t.kind);
    e["dtype"] = ElementTypeName(t.dtype);
    if (t.edge_dtype) e["edge_dtype"] = ElementTypeName(*t.edge_dtype);
    e["shape"] = t.shape;
    if (t.kind == ArtifactTensor::kParam) e["offset"] = t.param_offset;
    if (t.view_of >= 0) e["view_of"] = t.view_of;
    if (t.leading_scale > 0) e["leading_scale"] = t.leading_scale;
    ts.push_back(e);
  }
  j["tensors"] = ts;
  nlohmann::ordered_json ks = nlohmann::ordered_json::array();
  for (const auto& k : kernels) {
    nlohmann::ordered_json e;
    e["symbol"] = k.symbol;
    e["op"] = k.op;
    e["args"] = k.args;
    if (!k.run_if.empty()) {
      nlohmann::ordered_json guards = nlohmann::ordered_json::array();
      for (const auto& [t, value] : k.run_if) guards.push_back({t, value});
      e["run_if"] = guards;
    }
    if (!k.index_checks.empty()) {
      nlohmann::ordered_json checks = nlohmann::ordered_json::array();
      for (const auto& c : k.index_checks) {
        checks.push_back({{"tensor", c.tensor}, {"extents", c.extents}, {"node", c.node}});
      }
      e["index_checks"] = checks;
    }
    if (!k.condition_checks.empty()) {
      nlohmann::ordered_json checks = nlohmann::ordered_json::array();
      for (const auto& c : k.condition_checks) {
        nlohmann::ordered_json fails_when = nlohmann::ordered_json::array();
        for (const auto& [t, value] : c.fails_when) fails_when.push_back({t, value});
        checks.push_back({{"fails_when", fails_when}, {"message", c.message}});
      }
      e["condition_checks"] = checks;
    }
    if (!k.workload.empty()) {
      e["workload"] = k.workload;
      e["config_index"] = k.config_index;
      e["config_source"] = ConfigOriginName(k.config_origin);
    }
    if (device_kind() == Device::Kind::kCuda)
      e["launch"] = {{"grid", k.grid}, {"block", k.block}, {"shared_bytes", k.shared_bytes}};
    ks.push_back(e);
  }
  j["kernels"] = ks;
  j["inputs"] = inputs;
  j["outputs"] = outputs;
  return j.dump(1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string Artifact::Serialize() const {
  const std::string meta = MetadataJson();
  const std::string* sections[kSections] = {&meta, &params, &library};
  std::string out(kMagic, sizeof(kMagic));
  PutLE(&out, kSections, 4);
  for (const std::string* section : sections) {
    PutLE(&out, section->size(), 8);
    PutLE(&out, crc32c::Value(section->data(), section->size()), 4);
  }
  PutLE(&out, crc32c::Value(out.data(), out.size()), 4);
  for (const std::string* section : sections) out += *section;
  return out;
}

Result<Artifact> Artifact::Parse(const std::string& bytes) {
  if (bytes.size() < sizeof(kMagic) || std::memcmp(bytes.data(), kMagic, 7) != 0 || bytes[7] < '1' || bytes[7] > '9') {
    return Status::InvalidArgument("not a tunefarm artifact (bad magic in the header)");
  }
  if (bytes[7] == '1') {
    return Status::FailedPrecondition(
        "artifact header: container version 1 carries no checksums and is no longer "
        "loaded; compile the model again with this tunefarm");
  }
  if (bytes[7] != kMagic[7]) {
    return Status::FailedPrecondition(std::string("artifact header: container version ") + bytes[7] +
                                      " is newer than this runtime (" + std::to_string(kContainerVersion) +
                                      "); rebuild it or update tunefarm");
  }
  if (bytes.size() < kHeaderBytes) return Corrupt("truncated header");
  const uint32_t header_crc = crc32c::Value(bytes.data(), kHeaderCrcAt);
  if (uint32_t(GetLE(bytes, kHeaderCrcAt, 4)) != header_crc) {
    return Corrupt("the header fails its checksum (stored " + Hex(uint32_t(GetLE(bytes, kHeaderCrcAt, 4))) +
                   ", computed " + Hex(header_crc) + "): the file is damaged");
  }
  if (GetLE(bytes, 8, 4) != kSections) {
    return Corrupt("the header lists " + std::to_string(GetLE(bytes, 8, 4)) + " sections, this runtime knows " +
                   std::to_string(kSections));
  }
  // Every checksum holds before anything is parsed, let alone mapped.
  size_t pos = kHeaderBytes;
  size_t offsets[kSections], sizes[kSections];
  for (int s = 0; s < kSections; ++s) {
    const size_t entry = 12 + size_t(s) * kSectionEntryBytes;
    const uint64_t n = GetLE(bytes, entry, 8);
    if (n > kMaxSection || n > bytes.size() - pos)
      return Corrupt(std::string("truncated ") + kSectionNames[s] + " section");
    const uint32_t stored = uint32_t(GetLE(bytes, entry + 8, 4));
    const uint32_t computed = crc32c::Value(bytes.data() + pos, size_t(n));
    if (stored != computed) {
      return Corrupt(std::string("the ") + kSectionNames[s] + " section (bytes " + std::to_string(pos) + ".." +
                     std::to_string(pos + n) + ") fails its checksum (stored " + Hex(stored) + ", computed " +
                     Hex(computed) + "): the file is damaged");
    }
    offsets[s] = pos;
    sizes[s] = size_t(n);
    pos += size_t(n);
  }
  if (pos != bytes.size()) {
    return Corrupt(std::to_string(bytes.size() - pos) + " unexpected bytes after the library section");
  }
  std::string sections[kSections];
  for (int s = 0; s < kSections; ++s) sections[s] = bytes.substr(offsets[s], sizes[s]);
  nlohmann::json j = nlohmann::json::parse(sections[0], nullptr, false);
  if (j.is_discarded() || !j.is_object()) return Corrupt("metadata is not a JSON object");
  Artifact a;
  try {
    int version = j.at("format_version").get<int>();
    if (version > kArtifactFormatVersion) {
      return Status::FailedPrecondition("artifact format version " + std::to_string(version) +
                                        " is newer than this runtime (" + std::to_string(kArtifactFormatVersion) + ")");
    }
    a.target = j.at("target").get<std::string>();
    a.triple = j.value("triple", "");
    a.cpu = j.value("cpu", "");
    a.cpu_features = j.value("cpu_features", std::vector<std::string>());
    a.device = j.value("device", "cpu");  // version 1: CPU only
    a.model = j.value("model", "");
    a.opt_level = j.value("opt_level", 3);
    a.threads = j.value("threads", 0);
    if (j.contains("symbolic_dim")) {
      const auto& d = j.at("symbolic_dim");
      a.symbolic_dim = SymbolicDim{d.at("name").get<std::string>(), d.at("min").get<int64_t>(),
                                   d.at("max").get<int64_t>(), d.at("tensor").get<int>()};
    }
    for (const auto& e : j.at("tensors")) {
      ArtifactTensor t;
      t.name = e.at("name").get<std::string>();
      std::string kind = e.at("kind").get<std::string>();
      if (kind == "input") {
        t.kind = ArtifactTensor::kInput;
      } else if (kind == "output") {
        t.kind = ArtifactTensor::kOutput;
      } else if (kind == "param") {
        t.kind = ArtifactTensor::kParam;
      } else if (kind == "intermediate") {
        t.kind = ArtifactTensor::kIntermediate;
      } else {
        return Corrupt("tensor '" + t.name + "' has unknown kind '" + kind + "'");
      }
      auto dt = ParseElementType(e.at("dtype").get<std::string>());
      if (!dt.ok()) return Corrupt(dt.status().message());
      t.dtype = *dt;
      if (e.contains("edge_dtype")) {
        auto edge = ParseElementType(e.at("edge_dtype").get<std::string>());
        if (!edge.ok()) return Corrupt(edge.status().message());
        t.edge_dtype = *edge;
      }
      t.shape = e.at("shape").get<std::vector<int64_t>>();
      t.param_offset = e.value("offset", int64_t(0));
      t.view_of = e.value("view_of", -1);
      t.leading_scale = e.value("leading_scale", int64_t(0));
      a.tensors.push_back(std::move(t));
    }
    for (const auto& e : j.at("kernels")) {
      ArtifactKernel k;
      k.symbol = e.at("symbol").get<std::string>();
      k.op = e.value("op", "");
      k.args = e.at("args").get<std::vector<int>>();
      k.workload = e.value("workload", "");
      k.config_index = e.value("config_index", int64_t(-1));
      const std::string origin = e.value("config_source", "");
      k.config_origin = origin == ConfigOriginName(ConfigOrigin::kRecords)    ? ConfigOrigin::kRecords
                        : origin == ConfigOriginName(ConfigOrigin::kFallback) ? ConfigOrigin::kFallback
                                                                              : ConfigOrigin::kNone;
      if (e.contains("run_if")) {
        for (const auto& guard : e.at("run_if")) k.run_if.push_back({guard.at(0).get<int>(), guard.at(1).get<bool>()});
      }
      if (e.contains("index_checks")) {
        for (const auto& c : e.at("index_checks")) {
          IndexCheck check;
          check.tensor = c.at("tensor").get<int>();
          check.extents = c.at("extents").get<std::vector<int64_t>>();
          check.node = c.value("node", "");
          k.index_checks.push_back(std::move(check));
        }
      }
      if (e.contains("condition_checks")) {
        for (const auto& c : e.at("condition_checks")) {
          ConditionCheck check;
          for (const auto& cond : c.at("fails_when"))
            check.fails_when.push_back({cond.at(0).get<int>(), cond.at(1).get<bool>()});
          check.message = c.at("message").get<std::string>();
          k.condition_checks.push_back(std::move(check));
        }
      }
      if (e.contains("launch")) {
        const auto& l = e.at("launch");
        k.grid = l.at("grid").get<std::array<int64_t, 3>>();
        k.block = l.at("block").get<std::array<int64_t, 3>>();
        k.shared_bytes = l.value("shared_bytes", int64_t(0));
      }
      a.kernels.push_back(std::move(k));
    }
    a.inputs = j.at("inputs").get<std::vector<int>>();
    a.outputs = j.at("outputs").get<std::vector<int>>();
  } catch (const nlohmann::json::exception& e) {
    // nlohmann reports type and missing-key errors only by exception; they end here.
    return Corrupt(std::string("metadata: ") + e.what());
  }
  a.params = std::move(sections[1]);
  a.library = std::move(sections[2]);
  TUNEFARM_RETURN_IF_ERROR(a.Validate());
  return a;
}

Status Artifact::WriteFile(const std::string& path) const { return WriteFileAtomically(path, Serialize()); }

Result<Artifact> Artifact::ReadFile(const std::string& path) {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return Status::NotFound("cannot open artifact " + path);
  std::string bytes;
  if (std::fseek(f, 0, SEEK_END) == 0) {
    const auto size = std::ftell(f);  // long, -1 on failure
    if (size > 0) bytes.resize(size_t(size));
    std::rewind(f);
  }
  size_t got = bytes.empty() ? 0 : std::fread(&bytes[0], 1, bytes.size(), f);
  std::fclose(f);
  bytes.resize(got);
  auto a = Parse(bytes);
  if (!a.ok()) return a.status().WithContext(path);
  return a;
}

}  // namespace tunefarm::runtime
