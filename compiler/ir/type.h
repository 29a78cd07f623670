// Type: the scalar or vector type of an IR expression (Halide's Type without the bells).
#ifndef TUNEFARM_COMPILER_IR_TYPE_H_
#define TUNEFARM_COMPILER_IR_TYPE_H_

#include <cstdint>
#include <string>

namespace tunefarm::ir {

struct Type {
  enum Code : uint8_t { kInt, kUInt, kFloat, kBool, kHandle };
  Code code = kInt;
  uint8_t bits = 64;
  uint16_t lanes = 1;

  static Type Int(int bits = 64, int lanes = 1) { return {kInt, uint8_t(bits), uint16_t(lanes)}; }
  static Type Float(int bits = 32, int lanes = 1) { return {kFloat, uint8_t(bits), uint16_t(lanes)}; }
  static Type Bool(int lanes = 1) { return {kBool, 1, uint16_t(lanes)}; }
  static Type Handle() { return {kHandle, 64, 1}; }

  bool is_int() const { return code == kInt || code == kUInt; }
  bool is_float() const { return code == kFloat; }
  bool is_bool() const { return code == kBool; }
  bool is_handle() const { return code == kHandle; }
  bool is_vector() const { return lanes > 1; }
  Type element_of() const { return {code, bits, 1}; }
  Type with_lanes(int n) const { return {code, bits, uint16_t(n)}; }
  int bytes() const { return (bits + 7) / 8; }

  bool operator==(const Type& o) const { return code == o.code && bits == o.bits && lanes == o.lanes; }
  bool operator!=(const Type& o) const { return !(*this == o); }
  // "float32", "int64x16", "bool", "handle".
  std::string ToString() const;
};

}  // namespace tunefarm::ir

#endif  // TUNEFARM_COMPILER_IR_TYPE_H_
