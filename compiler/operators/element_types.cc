// The element types of graph values as the artifact and the kernels see them (lower_api.h).
#include "compiler/operators/lower_api.h"
#include "tunefarm/runtime/element_convert.h"

namespace tunefarm::operators {

using graph::DataType;

ElementType ToElementType(DataType t) {
  switch (t) {
    case DataType::kFloat32:
      return ElementType::kFloat32;
    case DataType::kInt64:
      return ElementType::kInt64;
    case DataType::kInt32:
      return ElementType::kInt32;
    case DataType::kInt8:
      return ElementType::kInt8;
    case DataType::kUInt8:
      return ElementType::kUInt8;
    case DataType::kBool:
      return ElementType::kBool;
  }
  return ElementType::kFloat32;
}

// Kernels see bool as its storage byte, and an edge type as its storage type.
ir::Type ToIRType(ElementType t) {
  switch (runtime::StorageTypeOf(t)) {
    case ElementType::kFloat32:
      return ir::Type::Float(32);
    case ElementType::kInt64:
      return ir::Type::Int(64);
    case ElementType::kInt32:
      return ir::Type::Int(32);
    case ElementType::kInt8:
      return ir::Type::Int(8);
    case ElementType::kUInt8:
    case ElementType::kBool:
      return ir::Type{ir::Type::kUInt, 8, 1};
    default:
      return ir::Type::Float(32);
  }
}

}  // namespace tunefarm::operators
