#include "compiler/frontend/onnx_importer.h"

#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <unordered_map>

#include "compiler/frontend/node_order.h"
#include "compiler/operators/infer_context.h"
#include "compiler/operators/registry.h"
#include "tunefarm/runtime/element_convert.h"
#include "tunefarm/runtime/memory_budget.h"
#include "tunefarm/runtime/no_throw.h"
#include "tunefarm/runtime/safe_file.h"
#include "tunefarm/runtime/utf8.h"

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include <onnx/onnx_pb.h>
#pragma GCC diagnostic pop

namespace tunefarm::frontend {
namespace {

using graph::Attribute;
using graph::ConstantData;
using graph::DataType;
using runtime::ElementType;

// protobuf parses at most 2 GiB; larger models keep their weights as external data.
constexpr uint64_t kMaxOnnxFileBytes = (uint64_t(1) << 31) - 1;

// The first byte of every field a ModelProto holds, as (field number << 3 | wire type): ir_version,
// producer_name/version, domain, model_version, doc_string, graph, opset_import, metadata_props,
// training_info, functions, configuration.
bool StartsLikeAModelProto(const unsigned char* b, size_t n) {
  if (n == 0) return false;
  switch (b[0]) {
    case 0x08:
    case 0x12:
    case 0x1a:
    case 0x22:
    case 0x28:
    case 0x32:
    case 0x3a:
    case 0x42:
    case 0x72:
      return true;
    case 0xa2:
    case 0xca:
    case 0xd2:
      return n > 1 && b[1] == 0x01;
    default:
      return false;
  }
}

std::string HexBytes(const unsigned char* b, size_t n) {
  std::string out;
  char buf[4];
  for (size_t i = 0; i < n; ++i) {
    std::snprintf(buf, sizeof(buf), i ? " %02x" : "%02x", b[i]);
    out += buf;
  }
  return out;
}

// Reads an ONNX file in one allocation of its size, after checking what it is: a 3 GB file of
// something else costs an fstat and a few bytes, not its size twice in memory. `file` is open
// (OpenRegularFile: a directory, FIFO or device was refused without blocking).
Result<std::string> ReadModelFile(const OpenedFile& file, bool model) {
  const std::string& path = file.path();
  const uint64_t size = file.size();
  if (size == 0) return Status::InvalidArgument("ONNX file " + path + " is empty");
  if (size > kMaxOnnxFileBytes) {
    return Status::InvalidArgument(
        "ONNX file " + path + " is " + std::to_string(size >> 20) +
        " MiB; a serialized ONNX protobuf is at most 2 GiB (models larger than that keep their "
        "weights as external data beside the .onnx file)");
  }
  unsigned char head[8] = {};
  const size_t got = size_t(std::min<uint64_t>(size, sizeof(head)));
  TUNEFARM_RETURN_IF_ERROR(ReadExactly(file, 0, got, reinterpret_cast<char*>(head), "ONNX file"));
  if (model && !StartsLikeAModelProto(head, got)) {
    return Status::InvalidArgument("malformed ONNX model " + path +
                                   ": not a serialized ModelProto (it starts with bytes " + HexBytes(head, got) +
                                   ", which begin no ModelProto field)");
  }
  std::string bytes;
  try {
    bytes.resize(size_t(size));
  } catch (const std::bad_alloc&) {
    return Status::IOError("ONNX file " + path + ": cannot allocate " + std::to_string(size >> 20) + " MiB to read it");
  }
  TUNEFARM_RETURN_IF_ERROR(ReadExactly(file, 0, bytes.size(), bytes.data(), "ONNX file"));
  return bytes;
}

// A name or text from the model as a message shows it: control bytes (a NUL among them) as '?', at
// most 80 bytes, so a message never stops short or carries a megabyte.
std::string PrintableName(const std::string& name) {
  std::string shown;
  for (unsigned char c : name.substr(0, 80)) shown += c >= 0x20 && c != 0x7f ? char(c) : '?';
  if (name.size() > 80) shown += "...";
  return shown;
}

// Every name the compiler keeps (it writes them into artifacts' JSON metadata) must be UTF-8.
Status CheckNamesAreUtf8(const onnx::GraphProto& gp, const std::string& what) {
  auto check = [&](const std::string& name, const std::string& kind) -> Status {
    if (IsValidUtf8(name)) return Status::OK();
    std::string shown;
    for (unsigned char c : name.substr(0, 40)) shown += c < 0x80 && c >= 0x20 ? char(c) : '?';
    return Status::InvalidArgument("ONNX model " + what + ": " + kind + " name \"" + shown + "\" is not valid UTF-8");
  };
  for (const auto& t : gp.initializer()) TUNEFARM_RETURN_IF_ERROR(check(t.name(), "initializer"));
  for (const auto& v : gp.input()) TUNEFARM_RETURN_IF_ERROR(check(v.name(), "graph input"));
  for (const auto& v : gp.output()) TUNEFARM_RETURN_IF_ERROR(check(v.name(), "graph output"));
  for (const auto& n : gp.node()) {
    TUNEFARM_RETURN_IF_ERROR(check(n.name(), "node"));
    TUNEFARM_RETURN_IF_ERROR(check(n.op_type(), "operator"));
    for (const auto& v : n.input()) TUNEFARM_RETURN_IF_ERROR(check(v, "tensor"));
    for (const auto& v : n.output()) TUNEFARM_RETURN_IF_ERROR(check(v, "tensor"));
  }
  return Status::OK();
}

// The element type an ONNX type code names, as callers at the model's edges see it.
Result<ElementType> ConvertElementType(int32_t onnx_type, const std::string& what) {
  if (auto t = graph::OnnxElementType(onnx_type)) return *t;
  return Status::InvalidArgument(what + " has unsupported element type " +
                                 onnx::TensorProto::DataType_Name(static_cast<onnx::TensorProto::DataType>(onnx_type)) +
                                 " (supported: " + graph::SupportedElementTypes() + ")");
}

// A tensor stored in a file beside the model (ONNX external data: models over protobuf's 2 GB
// limit): the file opened once, beneath the model's directory with no symlink followed
// (OpenBeneath), and the range of it the tensor names, checked against the size fstat gave on that
// descriptor before anything is allocated.
struct ExternalData {
  OpenedFile file;
  uint64_t offset = 0, length = 0;
};

Result<ExternalData> OpenExternalData(const onnx::TensorProto& t, const OpenedFile* folder, uint64_t expected_bytes,
                                      const std::string& what) {
  if (!folder) {
    return Status::InvalidArgument(what +
                                   " stores its data in an external file; import the model from its file so the "
                                   "data file beside it can be found");
  }
  std::string location;
  uint64_t offset = 0, length = 0;
  bool has_length = false;
  for (const auto& kv : t.external_data()) {
    auto number = [&](uint64_t* out) -> Status {
      const std::string& v = kv.value();
      if (v.empty() || v.size() > 19 || v.find_first_not_of("0123456789") != std::string::npos) {
        return Status::InvalidArgument(what + ": external data " + kv.key() + " '" + PrintableName(v) +
                                       "' is not a number");
      }
      *out = std::stoull(v);
      return Status::OK();
    };
    if (kv.key() == "location") location = kv.value();
    if (kv.key() == "offset") TUNEFARM_RETURN_IF_ERROR(number(&offset));
    if (kv.key() == "length") {
      TUNEFARM_RETURN_IF_ERROR(number(&length));
      has_length = true;
    }
  }
  if (location.find('\0') != std::string::npos) {
    return Status::InvalidArgument(what + ": external data location '" + PrintableName(location) +
                                   "' holds a NUL byte: it names no file");
  }
  if (location.empty() || location[0] == '/' || location == ".." || location.rfind("../", 0) == 0 ||
      location.find("/../") != std::string::npos ||
      (location.size() >= 3 && location.compare(location.size() - 3, 3, "/..") == 0)) {
    return Status::InvalidArgument(what + ": external data location '" + PrintableName(location) +
                                   "' must be a relative path inside the model's directory");
  }
  // The lexical check is not enough: a symbolic link may lead outside the model's directory, and
  // one checked by name may be swapped before it is opened by name again.
  ExternalData data;
  TUNEFARM_ASSIGN_OR_RETURN(data.file, OpenBeneath(*folder, location, what + ": external data"));
  const uint64_t size = data.file.size();
  const std::string& path = data.file.path();
  if (!has_length) length = size >= offset ? size - offset : 0;
  if (length != expected_bytes) {
    return Status::InvalidArgument(what + " holds " + std::to_string(length) +
                                   " bytes of external data, its shape and type need " +
                                   std::to_string(expected_bytes));
  }
  if (offset > size || length > size - offset) {
    return Status::InvalidArgument(what + ": external data [" + std::to_string(offset) + ", +" +
                                   std::to_string(length) + ") lies past the end of " + path + " (" +
                                   std::to_string(size) + " bytes)");
  }
  data.offset = offset;
  data.length = length;
  return data;
}

// Widens `n` integers of storage type `t` at `p` to int64 (ConstantData keeps every integer type
// widened); bool reads any non-zero byte as true.
void WidenToInt64(ElementType t, const char* p, int64_t n, std::vector<int64_t>* out) {
  out->resize(size_t(n));
  for (int64_t i = 0; i < n; ++i) {
    switch (t) {
      case ElementType::kInt64:
        std::memcpy(&(*out)[size_t(i)], p + i * 8, 8);
        break;
      case ElementType::kInt32: {
        int32_t v;
        std::memcpy(&v, p + i * 4, 4);
        (*out)[size_t(i)] = v;
        break;
      }
      case ElementType::kInt8:
        (*out)[size_t(i)] = int64_t{static_cast<int8_t>(p[i])};  // signed: sign-extended
        break;
      case ElementType::kUInt8:
        (*out)[size_t(i)] = static_cast<uint8_t>(p[i]);
        break;
      default:
        (*out)[size_t(i)] = p[i] != 0;
        break;  // bool
    }
  }
}

// External data read straight into the constant's own storage, a chunk at a time: no copy of the
// whole tensor is made beside it, and a file that shrinks while being read is an error, not a fault.
Status ConvertExternal(const ExternalData& data, ElementType edge, ElementType storage, int64_t n,
                       const std::string& what, ConstantData* c) {
  const size_t width = size_t(runtime::ElementSize(edge));
  const size_t storage_width = size_t(runtime::ElementSize(storage));
  const int64_t chunk = std::max<int64_t>(1, (int64_t(16) << 20) / int64_t(width));
  if (storage == ElementType::kFloat32) {
    c->f32.resize(size_t(n));
  } else {
    c->i64.resize(size_t(n));
  }
  if (edge == ElementType::kFloat32) {  // the common case: the file's bytes are the storage
    return ReadExactly(data.file, data.offset, size_t(n) * 4, reinterpret_cast<char*>(c->f32.data()),
                       what + ": external data");
  }
  std::string in(size_t(std::min(chunk, n)) * width, '\0');
  std::string stored(size_t(std::min(chunk, n)) * storage_width, '\0');
  std::vector<int64_t> widened;
  for (int64_t at = 0; at < n; at += chunk) {
    const int64_t m = std::min(chunk, n - at);
    TUNEFARM_RETURN_IF_ERROR(ReadExactly(data.file, data.offset + uint64_t(at) * width, size_t(m) * width, in.data(),
                                         what + ": external data"));
    TUNEFARM_RETURN_IF_ERROR(runtime::ConvertToStorage(edge, in.data(), stored.data(), m, what));
    if (storage == ElementType::kFloat32) {
      std::memcpy(c->f32.data() + at, stored.data(), size_t(m) * 4);
    } else {
      WidenToInt64(storage, stored.data(), m, &widened);
      std::copy(widened.begin(), widened.end(), c->i64.begin() + at);
    }
  }
  return Status::OK();
}

// A TensorProto's values. Types kernels do not compute on are converted as the executor converts
// them at the model's edges (element_convert.h): float64/float16/bfloat16 to float32, the other
// integer types to int64.
Result<ConstantData> ConvertTensor(const onnx::TensorProto& t, const std::string& what,
                                   const OpenedFile* folder = nullptr) {
  ConstantData c;
  TUNEFARM_ASSIGN_OR_RETURN(const ElementType edge, ConvertElementType(t.data_type(), what));
  const ElementType storage = runtime::StorageTypeOf(edge);
  c.dtype = graph::StorageDataType(edge);
  int64_t n = 1;
  for (int64_t d : t.dims()) {
    if (d < 0) return Status::InvalidArgument(what + " has a negative dimension");
    if (d != 0 && n > (int64_t(1) << 40) / d) return Status::InvalidArgument(what + " has more than 2^40 elements");
    n *= d;
    c.shape.push_back(d);
  }
  const size_t width = size_t(runtime::ElementSize(edge));
  const size_t stored_width = storage == ElementType::kFloat32 ? 4 : 8;  // ConstantData widens integers
  if (uint64_t(n) * stored_width > MemoryBudgetBytes()) {
    return Status::ResourceExhausted(what + " needs " + std::to_string((uint64_t(n) * stored_width) >> 20) +
                                     " MiB in memory; this process may use at most " +
                                     std::to_string(MemoryBudgetBytes() >> 20) +
                                     " MiB (physical memory, a container's limit and ulimit -v/-d)");
  }
  if (t.data_location() == onnx::TensorProto::EXTERNAL) {
    TUNEFARM_ASSIGN_OR_RETURN(ExternalData data, OpenExternalData(t, folder, uint64_t(n) * width, what));
    TUNEFARM_RETURN_IF_ERROR(ConvertExternal(data, edge, storage, n, what, &c));
    return c;
  }
  const std::string& raw = t.raw_data();
  auto bad_size = [&](size_t got) {
    return Status::InvalidArgument(what + " holds " + std::to_string(got) + " elements, its shape needs " +
                                   std::to_string(n));
  };
  // The values as `edge` bytes: raw data as it is, or the typed field the type is kept in.
  std::string bytes;
  if (!raw.empty()) {
    if (raw.size() != size_t(n) * width) return bad_size(raw.size() / width);
    bytes = raw;
  } else {
    auto take = [&](const auto& field, auto convert) -> Status {
      if (field.size() != n) return bad_size(size_t(field.size()));
      bytes.resize(size_t(n) * width);
      for (int64_t i = 0; i < n; ++i) {
        auto v = convert(field[int(i)]);
        std::memcpy(&bytes[size_t(i) * width], &v, width);
      }
      return Status::OK();
    };
    switch (edge) {
      case ElementType::kFloat32:
        TUNEFARM_RETURN_IF_ERROR(take(t.float_data(), [](float v) { return v; }));
        break;
      case ElementType::kFloat64:
        TUNEFARM_RETURN_IF_ERROR(take(t.double_data(), [](double v) { return v; }));
        break;
      case ElementType::kInt64:
        TUNEFARM_RETURN_IF_ERROR(take(t.int64_data(), [](int64_t v) { return v; }));
        break;
      case ElementType::kUInt32:
        TUNEFARM_RETURN_IF_ERROR(take(t.uint64_data(), [](uint64_t v) { return uint32_t(v); }));
        break;
      case ElementType::kUInt64:
        TUNEFARM_RETURN_IF_ERROR(take(t.uint64_data(), [](uint64_t v) { return v; }));
        break;
      case ElementType::kInt32:
        TUNEFARM_RETURN_IF_ERROR(take(t.int32_data(), [](int32_t v) { return v; }));
        break;
      case ElementType::kFloat16:  // int32_data holds the 16-bit patterns
      case ElementType::kBFloat16:
      case ElementType::kInt16:
      case ElementType::kUInt16:
        TUNEFARM_RETURN_IF_ERROR(take(t.int32_data(), [](int32_t v) { return uint16_t(v); }));
        break;
      default:
        TUNEFARM_RETURN_IF_ERROR(take(t.int32_data(), [](int32_t v) { return uint8_t(v); }));
        break;  // 8-bit, bool
    }
  }
  std::string stored(size_t(n) * size_t(runtime::ElementSize(storage)), '\0');
  TUNEFARM_RETURN_IF_ERROR(runtime::ConvertToStorage(edge, bytes.data(), stored.data(), n, what));
  if (storage == ElementType::kFloat32) {
    c.f32.resize(size_t(n));
    if (n > 0) std::memcpy(c.f32.data(), stored.data(), stored.size());
  } else {
    WidenToInt64(storage, stored.data(), n, &c.i64);
  }
  return c;
}

Result<Attribute> ConvertAttribute(const onnx::AttributeProto& a, const std::string& what) {
  Attribute out;
  switch (a.type()) {
    case onnx::AttributeProto::INT:
      out.kind = Attribute::kInt;
      out.i = a.i();
      break;
    case onnx::AttributeProto::FLOAT:
      out.kind = Attribute::kFloat;
      out.f = a.f();
      break;
    case onnx::AttributeProto::INTS:
      out.kind = Attribute::kInts;
      out.ints.assign(a.ints().begin(), a.ints().end());
      break;
    case onnx::AttributeProto::FLOATS:
      out.kind = Attribute::kFloats;
      out.floats.assign(a.floats().begin(), a.floats().end());
      break;
    case onnx::AttributeProto::STRING:
      out.kind = Attribute::kString;
      out.s = a.s();
      break;
    case onnx::AttributeProto::TENSOR: {
      out.kind = Attribute::kTensor;
      TUNEFARM_ASSIGN_OR_RETURN(ConstantData c, ConvertTensor(a.t(), what + " attribute '" + a.name() + "'"));
      out.tensor = std::make_shared<const ConstantData>(std::move(c));
      break;
    }
    default:
      return Status::InvalidArgument(what + ": attribute '" + a.name() + "' has a type the importer does not read (" +
                                     onnx::AttributeProto::AttributeType_Name(a.type()) + ")");
  }
  return out;
}

// Where ImportNodes puts nodes and what it nests in: If branches are inlined, with their nodes
// guarded by the condition, to this depth.
// The names a graph's nodes see: its own, then its enclosing graphs' (ONNX's scoping; a branch's
// own names shadow). A branch adds a layer instead of copying the whole map: many Ifs under a large
// scope cost what they name, not the scope once each.
class Scope {
 public:
  explicit Scope(const Scope* parent = nullptr) : parent_(parent) {}
  int Find(const std::string& name) const {
    for (const Scope* s = this; s; s = s->parent_) {
      auto it = s->names_.find(name);
      if (it != s->names_.end()) return it->second;
    }
    return -1;
  }
  void Set(const std::string& name, int value) { names_[name] = value; }

 private:
  const Scope* parent_;
  std::unordered_map<std::string, int> names_;
};

// The first `max` bytes of a UTF-8 name, never cutting a character in two.
std::string Utf8Prefix(const std::string& name, size_t max) {
  if (name.size() <= max) return name;
  while (max > 0 && (static_cast<unsigned char>(name[max]) & 0xC0) == 0x80) --max;
  return name.substr(0, max);
}

struct NodeSink {
  graph::Graph* g;
  const OpenedFile* folder;  // the model's, held open: every external tensor is read beneath it
  int depth;
  int* ifs;  // If nodes imported so far: each branch's values get a short prefix of their own
};
constexpr int kMaxIfDepth = 16;

Status ImportNodes(const google::protobuf::RepeatedPtrField<onnx::NodeProto>& nodes, const NodeSink& sink,
                   const std::vector<graph::NodeGuard>& guards, const std::string& prefix, Scope* scope);

// An If node: both branches inlined into the graph (their values named "<if>.then/..." and
// "<if>.else/...", their nodes guarded by the condition), then one "If" node that picks each
// output from the branch the condition names: inputs [cond, then outputs..., else outputs...].
// Branches see the values of the enclosing scopes (ONNX's scoping); their own names shadow.
Status ImportIf(const onnx::NodeProto& np, const std::string& who, const NodeSink& sink,
                const std::vector<graph::NodeGuard>& guards, const std::string& prefix, Scope* scope) {
  graph::Graph& g = *sink.g;
  if (sink.depth >= kMaxIfDepth)
    return Status::InvalidArgument(who + ": If nested deeper than " + std::to_string(kMaxIfDepth));
  if (np.input_size() != 1 || np.input(0).empty())
    return Status::InvalidArgument(who + ": takes exactly one input, the condition");
  const int cond = scope->Find(np.input(0));
  if (cond < 0) {
    return Status::InvalidArgument(who + ": input '" + np.input(0) +
                                   "' is not a graph input, initializer or earlier output");
  }
  const onnx::GraphProto* branches[2] = {nullptr, nullptr};
  for (const auto& a : np.attribute()) {
    const int which = a.name() == "then_branch" ? 0 : a.name() == "else_branch" ? 1 : -1;
    if (which < 0) return Status::InvalidArgument(who + ": unknown attribute '" + a.name() + "'");
    if (a.type() != onnx::AttributeProto::GRAPH || !a.has_g()) {
      return Status::InvalidArgument(who + ": attribute '" + a.name() + "' must be a graph");
    }
    branches[which] = &a.g();
  }
  if (!branches[0] || !branches[1]) return Status::InvalidArgument(who + ": needs both then_branch and else_branch");
  // Inlined values are named "<if name>#<k>.then/<name>": the If's own name cut short and a number,
  // not the names of every enclosing If (those nested 16 deep with 100 KB names would name each
  // inlined value with megabytes): names grow linearly with the model.
  const std::string own = np.name().empty() ? np.output_size() ? np.output(0) : std::string("if") : np.name();
  const std::string name = Utf8Prefix(own, 48) + "#" + std::to_string((*sink.ifs)++);
  std::vector<int> outputs[2];
  for (int which = 0; which < 2; ++which) {
    const onnx::GraphProto& branch = *branches[which];
    const std::string branch_name = which == 0 ? "then_branch" : "else_branch";
    TUNEFARM_RETURN_IF_ERROR(CheckNamesAreUtf8(branch, who + " " + branch_name));
    if (branch.output_size() != np.output_size()) {
      return Status::InvalidArgument(who + ": " + branch_name + " gives " + std::to_string(branch.output_size()) +
                                     " outputs, the node has " + std::to_string(np.output_size()));
    }
    const std::string branch_prefix = name + (which == 0 ? ".then/" : ".else/");
    Scope branch_scope(scope);
    for (const auto& init : branch.initializer()) {
      TUNEFARM_ASSIGN_OR_RETURN(
          ConstantData c,
          ConvertTensor(init, who + " " + branch_name + " initializer '" + init.name() + "'", sink.folder));
      branch_scope.Set(init.name(), g.AddConstant(branch_prefix + init.name(), std::move(c)));
    }
    std::vector<graph::NodeGuard> branch_guards = guards;
    branch_guards.push_back({cond, which == 0});
    TUNEFARM_RETURN_IF_ERROR(ImportNodes(branch.node(), {sink.g, sink.folder, sink.depth + 1, sink.ifs}, branch_guards,
                                         branch_prefix, &branch_scope));
    for (const auto& out : branch.output()) {
      const int produced = branch_scope.Find(out.name());
      if (produced < 0) {
        return Status::InvalidArgument(who + ": " + branch_name + " output '" + out.name() + "' is never produced");
      }
      outputs[which].push_back(produced);
    }
  }
  graph::Node merge;
  merge.name = np.name().empty() ? "" : prefix + np.name();
  merge.op_type = "If";
  merge.guards = guards;
  merge.inputs = {cond};
  for (const auto& list : outputs) merge.inputs.insert(merge.inputs.end(), list.begin(), list.end());
  const int node_index = int(g.nodes.size());
  for (const auto& out : np.output()) {
    graph::Value v;
    v.name = prefix + out;
    v.producer = node_index;
    const int idx = g.AddValue(std::move(v));
    if (!out.empty()) scope->Set(out, idx);
    merge.outputs.push_back(idx);
  }
  g.nodes.push_back(std::move(merge));
  return Status::OK();
}

Status ImportNodes(const google::protobuf::RepeatedPtrField<onnx::NodeProto>& nodes, const NodeSink& sink,
                   const std::vector<graph::NodeGuard>& guards, const std::string& prefix, Scope* scope) {
  graph::Graph& g = *sink.g;
  // In dependency order: ONNX requires a sorted list, not every converter writes one.
  TUNEFARM_ASSIGN_OR_RETURN(const std::vector<int> order,
                            NodeOrder(nodes, prefix.empty() ? "the graph" : "the If branch '" + prefix + "'"));
  for (const int index : order) {
    const onnx::NodeProto& np = nodes[index];
    graph::Node n;
    n.name = np.name().empty() ? "" : prefix + np.name();
    n.op_type = operators::QualifiedOpType(np.domain(), np.op_type());
    n.guards = guards;
    std::string who = "node '" +
                      (np.name().empty() ? (np.output_size() ? np.output(0) : std::string("?")) : np.name()) +
                      "' (op " + n.op_type + ", opset " + std::to_string(g.opset) + ")";
    const bool default_domain = n.op_type == np.op_type();
    if (!default_domain && np.domain() != operators::kMicrosoftDomain) {
      return Status::InvalidArgument(who + ": operator domain '" + np.domain() +
                                     "' is not supported (the default domain and com.microsoft are)");
    }
    if (default_domain && np.op_type() == "If") {
      TUNEFARM_RETURN_IF_ERROR(ImportIf(np, who, sink, guards, prefix, scope));
      continue;
    }
    const operators::OperatorDef* def = operators::FindOperator(n.op_type);
    if (!def && !default_domain) {
      std::string known;
      for (const std::string& op : operators::OperatorNames()) {
        if (op.rfind(std::string(operators::kMicrosoftDomain) + ".", 0) == 0) {
          known += (known.empty() ? "" : ", ") + op.substr(sizeof(operators::kMicrosoftDomain));
        }
      }
      return Status::InvalidArgument(who + ": com.microsoft operator '" + np.op_type() +
                                     "' is not supported (of that domain tunefarm reads " + known + ")");
    }
    if (!def) return Status::InvalidArgument(who + ": unsupported operator");
    for (const auto& in : np.input()) {
      if (in.empty()) {
        n.inputs.push_back(-1);
        continue;
      }
      const int value = scope->Find(in);
      if (value < 0) {
        return Status::InvalidArgument(who + ": input '" + in +
                                       "' is not a graph input, initializer or earlier output");
      }
      n.inputs.push_back(value);
    }
    for (const auto& a : np.attribute()) {
      TUNEFARM_ASSIGN_OR_RETURN(Attribute attr, ConvertAttribute(a, who));
      n.attrs[a.name()] = std::move(attr);
    }
    int node_index = int(g.nodes.size());
    for (const auto& out : np.output()) {
      graph::Value v;
      v.name = prefix + out;
      v.producer = node_index;
      int idx = g.AddValue(std::move(v));
      if (!out.empty()) scope->Set(out, idx);
      n.outputs.push_back(idx);
    }
    g.nodes.push_back(std::move(n));
    TUNEFARM_RETURN_IF_ERROR(operators::CheckAttributes(g, g.nodes.back(), *def));
  }
  return Status::OK();
}

// The bytes the importer will hold for every tensor of gp and of the graphs its nodes hold (their
// declared shapes, widened as ConstantData stores them), those stored as external data counted
// apart: known from the protobuf alone, before anything is allocated.
struct WeightBytes {
  uint64_t inside = 0, external = 0;
};
void AddWeightBytes(const onnx::GraphProto& gp, int depth, WeightBytes* total) {
  auto add = [&](const onnx::TensorProto& t) {
    constexpr uint64_t kMax = uint64_t(1) << 40;  // ConvertTensor refuses more elements
    uint64_t n = 1;
    for (int64_t d : t.dims()) n = d <= 0 ? 0 : (n > kMax / uint64_t(d) ? kMax : n * uint64_t(d));
    const auto edge = graph::OnnxElementType(t.data_type());
    const uint64_t width = edge && runtime::StorageTypeOf(*edge) == ElementType::kFloat32 ? 4 : 8;
    (t.data_location() == onnx::TensorProto::EXTERNAL ? total->external : total->inside) += n * width;
  };
  for (const auto& t : gp.initializer()) add(t);
  if (depth >= kMaxIfDepth) return;
  for (const auto& n : gp.node()) {
    for (const auto& a : n.attribute()) {
      if (a.has_t()) add(a.t());
      if (a.has_g()) AddWeightBytes(a.g(), depth + 1, total);
    }
  }
}

Result<graph::Graph> ImportModel(const std::string& bytes, const std::string& what, const OpenedFile* folder) {
  onnx::ModelProto model;
  if (!model.ParseFromString(bytes)) {
    // protobuf gives no reason; the one a model that starts right can still have is depth.
    return Status::InvalidArgument("malformed ONNX model " + what +
                                   ": not a serialized ModelProto (or one nested past protobuf's 100 levels, as "
                                   "Ifs about 33 deep are; tunefarm takes Ifs " +
                                   std::to_string(kMaxIfDepth) + " deep)");
  }
  graph::Graph g;
  for (const auto& op : model.opset_import()) {
    if (op.domain().empty() || op.domain() == "ai.onnx") g.opset = op.version();
  }
  if (model.opset_import_size() == 0) g.opset = 1;
  if (g.opset < kMinOnnxOpset || g.opset > kMaxOnnxOpset) {
    return Status::InvalidArgument("ONNX model " + what + " uses opset " + std::to_string(g.opset) +
                                   "; supported opsets are " + std::to_string(kMinOnnxOpset) + "-" +
                                   std::to_string(kMaxOnnxOpset));
  }
  const onnx::GraphProto& gp = model.graph();
  if (gp.node_size() == 0) {
    return Status::InvalidArgument("ONNX model " + what + " has no nodes (an empty graph, or not an ONNX model)");
  }
  if (gp.output_size() == 0) {
    return Status::InvalidArgument("ONNX model " + what + " declares no graph outputs: it would compute nothing");
  }
  TUNEFARM_RETURN_IF_ERROR(CheckNamesAreUtf8(gp, what));
  // The whole model's weights against what this process may hold, before any is allocated (each
  // tensor is checked again as it is read).
  WeightBytes weights;
  AddWeightBytes(gp, 0, &weights);
  if (weights.inside + weights.external > MemoryBudgetBytes()) {
    return Status::ResourceExhausted(
        "ONNX model " + what + ": its weights need " + std::to_string((weights.inside + weights.external) >> 20) +
        " MiB in memory (" + std::to_string(weights.external >> 20) +
        " MiB of them external data); this process may use at most " + std::to_string(MemoryBudgetBytes() >> 20) +
        " MiB (physical memory, a container's limit and ulimit -v/-d)");
  }
  Scope by_name;
  for (const auto& init : gp.initializer()) {
    TUNEFARM_ASSIGN_OR_RETURN(ConstantData c, ConvertTensor(init, "initializer '" + init.name() + "'", folder));
    by_name.Set(init.name(), g.AddConstant(init.name(), std::move(c)));
  }
  for (const auto& in : gp.input()) {
    if (by_name.Find(in.name()) >= 0) continue;  // an initializer listed as input (older exporters)
    graph::Value v;
    v.name = in.name();
    if (!in.type().has_tensor_type()) return Status::InvalidArgument("graph input '" + in.name() + "' is not a tensor");
    const auto& tt = in.type().tensor_type();
    TUNEFARM_ASSIGN_OR_RETURN(const ElementType edge,
                              ConvertElementType(tt.elem_type(), "graph input '" + in.name() + "'"));
    v.dtype = graph::StorageDataType(edge);
    if (!runtime::IsStorageType(edge)) v.edge_dtype = edge;
    v.shape_known = tt.has_shape();
    for (const auto& d : tt.shape().dim()) {
      if (d.has_dim_value() && d.dim_value() < 0) {
        return Status::InvalidArgument("graph input '" + in.name() + "' has dimension " +
                                       std::to_string(v.shape.size()) + " of size " + std::to_string(d.dim_value()) +
                                       ": a dimension is a size, never negative");
      }
      if (d.has_dim_value()) {
        v.shape.push_back(d.dim_value());
        v.dim_params.push_back("");
      } else {
        v.shape.push_back(-1);
        v.shape_known = false;
        v.dim_params.push_back(d.has_dim_param() ? d.dim_param() : "");
      }
    }
    int64_t elements = 1;
    for (int64_t d : v.shape) {
      if (d > 0 && elements > (int64_t(1) << 40) / d) {
        return Status::InvalidArgument("graph input '" + in.name() + "' has more than 2^40 elements (" +
                                       operators::ShapeStr(v.shape) + "): tunefarm takes tensors of at most 2^40");
      }
      if (d > 0) elements *= d;
    }
    int idx = g.AddValue(std::move(v));
    by_name.Set(in.name(), idx);
    g.inputs.push_back(idx);
  }
  int ifs = 0;
  TUNEFARM_RETURN_IF_ERROR(ImportNodes(gp.node(), {&g, folder, 0, &ifs}, {}, "", &by_name));
  for (const auto& out : gp.output()) {
    const int produced = by_name.Find(out.name());
    if (produced < 0) return Status::InvalidArgument("graph output '" + out.name() + "' is never produced");
    g.outputs.push_back(produced);
    // A declared type kernels do not compute on (a float16 output) is the output's edge type;
    // lowering checks that the value's inferred type is its storage type.
    if (out.type().has_tensor_type() && out.type().tensor_type().elem_type() != 0) {
      auto edge = ConvertElementType(out.type().tensor_type().elem_type(), "graph output '" + out.name() + "'");
      if (edge.ok() && !runtime::IsStorageType(*edge)) g.values[size_t(produced)].edge_dtype = *edge;
    }
  }
  return g;
}

}  // namespace

Result<uint64_t> ExternalDataBytes(const std::string& path) {
  return NoThrow("reading " + path, [&]() -> Result<uint64_t> {
    TUNEFARM_ASSIGN_OR_RETURN(OpenedFile file, OpenRegularFile(path, "ONNX file"));
    TUNEFARM_ASSIGN_OR_RETURN(std::string bytes, ReadModelFile(file, /*model=*/true));
    onnx::ModelProto model;
    if (!model.ParseFromString(bytes)) {
      return Status::InvalidArgument("malformed ONNX model " + path + ": not a serialized ModelProto");
    }
    WeightBytes total;
    AddWeightBytes(model.graph(), 0, &total);
    return total.external;
  });
}

const std::vector<std::string>& SupportedOnnxOps() {
  static const std::vector<std::string> kOps = operators::OperatorNames();
  return kOps;
}

Result<graph::Graph> ImportOnnxBytes(const std::string& bytes, const std::string& what, const std::string& base_dir) {
  return NoThrow("importing " + what, [&]() -> Result<graph::Graph> {
    if (base_dir.empty()) return ImportModel(bytes, what, nullptr);
    TUNEFARM_ASSIGN_OR_RETURN(OpenedFile folder, OpenDirectory(base_dir, "ONNX model " + what));
    return ImportModel(bytes, what, &folder);
  });
}

Result<graph::Graph> ImportOnnxFile(const std::string& path) {
  return NoThrow("importing " + path, [&]() -> Result<graph::Graph> {
    // The folder first, then the model read from it and every external tensor beneath it: the same
    // folder throughout, whatever its path names by the time the weights are read.
    const size_t slash = path.rfind('/');
    const std::string dir = slash == std::string::npos ? "." : path.substr(0, slash == 0 ? 1 : slash);
    const std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
    TUNEFARM_ASSIGN_OR_RETURN(OpenedFile folder, OpenDirectory(dir, "ONNX file " + path));
    TUNEFARM_ASSIGN_OR_RETURN(OpenedFile file, name.empty() ? OpenRegularFile(path, "ONNX file")
                                                            : OpenRegularFileIn(folder, name, "ONNX file"));
    TUNEFARM_ASSIGN_OR_RETURN(std::string bytes, ReadModelFile(file, /*model=*/true));
    return ImportModel(bytes, path, &folder);
  });
}

Result<graph::ConstantData> ReadOnnxTensorFile(const std::string& path) {
  return NoThrow("importing " + path, [&]() -> Result<graph::ConstantData> {
    TUNEFARM_ASSIGN_OR_RETURN(OpenedFile file, OpenRegularFile(path, "ONNX file"));
    TUNEFARM_ASSIGN_OR_RETURN(std::string bytes, ReadModelFile(file, /*model=*/false));
    onnx::TensorProto t;
    if (!t.ParseFromString(bytes))
      return Status::InvalidArgument("malformed ONNX tensor " + path + ": not a TensorProto");
    return ConvertTensor(t, "tensor " + path);
  });
}

}  // namespace tunefarm::frontend
