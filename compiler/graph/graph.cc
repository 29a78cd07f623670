#include "compiler/graph/graph.h"

#include <sstream>

#include "tunefarm/runtime/element_convert.h"

namespace tunefarm::graph {

const char* DataTypeName(DataType t) {
  switch (t) {
    case DataType::kFloat32:
      return "float32";
    case DataType::kInt64:
      return "int64";
    case DataType::kInt32:
      return "int32";
    case DataType::kInt8:
      return "int8";
    case DataType::kUInt8:
      return "uint8";
    case DataType::kBool:
      return "bool";
  }
  return "?";
}

std::optional<runtime::ElementType> OnnxElementType(int64_t code) {
  using runtime::ElementType;
  switch (code) {  // TensorProto.DataType
    case 1:
      return ElementType::kFloat32;
    case 2:
      return ElementType::kUInt8;
    case 3:
      return ElementType::kInt8;
    case 4:
      return ElementType::kUInt16;
    case 5:
      return ElementType::kInt16;
    case 6:
      return ElementType::kInt32;
    case 7:
      return ElementType::kInt64;
    case 9:
      return ElementType::kBool;
    case 10:
      return ElementType::kFloat16;
    case 11:
      return ElementType::kFloat64;
    case 12:
      return ElementType::kUInt32;
    case 13:
      return ElementType::kUInt64;
    case 16:
      return ElementType::kBFloat16;
    default:
      return std::nullopt;  // string, complex, float8, 4-bit types
  }
}

std::string SupportedElementTypes() {
  std::string known;
  for (int t = 0; t <= int(runtime::ElementType::kUInt64); ++t) {
    known += std::string(known.empty() ? "" : ", ") + runtime::ElementTypeName(runtime::ElementType(t));
  }
  return known;
}

DataType StorageDataType(runtime::ElementType t) {
  switch (runtime::StorageTypeOf(t)) {
    case runtime::ElementType::kInt64:
      return DataType::kInt64;
    case runtime::ElementType::kInt32:
      return DataType::kInt32;
    case runtime::ElementType::kInt8:
      return DataType::kInt8;
    case runtime::ElementType::kUInt8:
      return DataType::kUInt8;
    case runtime::ElementType::kBool:
      return DataType::kBool;
    default:
      return DataType::kFloat32;
  }
}

int64_t ConstantData::num_elements() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

int64_t Node::GetInt(const std::string& name, int64_t def) const {
  auto it = attrs.find(name);
  return it != attrs.end() && it->second.kind == Attribute::kInt ? it->second.i : def;
}
float Node::GetFloat(const std::string& name, float def) const {
  auto it = attrs.find(name);
  return it != attrs.end() && it->second.kind == Attribute::kFloat ? it->second.f : def;
}
std::vector<int64_t> Node::GetInts(const std::string& name, const std::vector<int64_t>& def) const {
  auto it = attrs.find(name);
  return it != attrs.end() && it->second.kind == Attribute::kInts ? it->second.ints : def;
}
std::string Node::GetString(const std::string& name, const std::string& def) const {
  auto it = attrs.find(name);
  return it != attrs.end() && it->second.kind == Attribute::kString ? it->second.s : def;
}

int Graph::AddValue(Value v) {
  values.push_back(std::move(v));
  return int(values.size()) - 1;
}

int Graph::AddConstant(const std::string& name, ConstantData data) {
  Value v;
  v.name = name;
  v.dtype = data.dtype;
  v.shape = data.shape;
  v.shape_known = true;
  v.constant = std::make_shared<const ConstantData>(std::move(data));
  return AddValue(std::move(v));
}

std::string Graph::Describe(const Node& n) const {
  return "node '" +
         (n.name.empty() ? (n.outputs.empty() ? std::string("?") : values[size_t(n.outputs[0])].name) : n.name) +
         "' (" + n.op_type + (opset > 0 ? ", opset " + std::to_string(opset) : std::string()) + ")";
}

namespace {
std::string ShapeString(const Value& v) {
  if (!v.shape_known) return "?";
  std::string s = "[";
  for (size_t i = 0; i < v.shape.size(); ++i) s += (i ? "," : "") + std::to_string(v.shape[i]);
  return s + "]";
}
}  // namespace

std::string Graph::ToString() const {
  std::ostringstream os;
  for (const Node& n : nodes) {
    for (size_t i = 0; i < n.outputs.size(); ++i) {
      const Value& v = values[size_t(n.outputs[i])];
      os << (i ? ", " : "") << v.name << ":" << ShapeString(v);
    }
    os << " = " << n.op_type << "(";
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      os << (i ? ", " : "");
      if (n.inputs[i] < 0) {
        os << "_";
        continue;
      }
      const Value& v = values[size_t(n.inputs[i])];
      os << (v.constant ? "const " : "") << v.name;
    }
    os << ")\n";
  }
  return os.str();
}

}  // namespace tunefarm::graph
