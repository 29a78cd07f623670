#include "tunefarm/runtime/element_convert.h"

#include <cmath>
#include <cstring>
#include <limits>

namespace tunefarm::runtime {

namespace {

uint32_t Bits(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}

float FromBits(uint32_t b) {
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}

// Element i of a typed array at untyped `p`, by memcpy: callers' buffers need not be aligned.
template <typename T>
T Load(const void* p, int64_t i) {
  T v;
  std::memcpy(&v, static_cast<const char*>(p) + i * int64_t(sizeof(T)), sizeof(T));
  return v;
}

template <typename T>
void Store(void* p, int64_t i, T v) {
  std::memcpy(static_cast<char*>(p) + i * int64_t(sizeof(T)), &v, sizeof(T));
}

}  // namespace

bool IsStorageType(ElementType t) { return StorageTypeOf(t) == t; }

ElementType StorageTypeOf(ElementType t) {
  switch (t) {
    case ElementType::kFloat64:
    case ElementType::kFloat16:
    case ElementType::kBFloat16:
      return ElementType::kFloat32;
    case ElementType::kInt16:
    case ElementType::kUInt16:
    case ElementType::kUInt32:
    case ElementType::kUInt64:
      return ElementType::kInt64;
    default:
      return t;
  }
}

float HalfToFloat(uint16_t h) {
  const uint32_t sign = uint32_t(h & 0x8000u) << 16;
  const uint32_t exponent = (h >> 10) & 0x1fu, mantissa = h & 0x3ffu;
  if (exponent == 0) {  // zero or subnormal: mantissa * 2^-24, exact in float32
    const float magnitude = std::ldexp(float(mantissa), -24);
    return sign ? -magnitude : magnitude;
  }
  if (exponent == 31) return FromBits(sign | 0x7f800000u | (mantissa << 13));  // infinity, NaN
  return FromBits(sign | ((exponent + 112) << 23) | (mantissa << 13));         // rebias 15 -> 127
}

uint16_t FloatToHalf(float value) {
  const uint32_t x = Bits(value);
  const uint16_t sign = uint16_t((x >> 16) & 0x8000u);
  const uint32_t magnitude = x & 0x7fffffffu;
  if (magnitude > 0x7f800000u) return uint16_t(sign | 0x7e00u);   // NaN stays a (quiet) NaN
  if (magnitude >= 0x477ff000u) return uint16_t(sign | 0x7c00u);  // >= 65520 rounds to infinity
  if (magnitude < 0x38800000u) {
    // Below 2^-14: a float16 subnormal, a multiple of 2^-24. The scaling is exact and nearbyint
    // rounds to nearest even in the default rounding mode; 0x400 is the smallest normal's code.
    return uint16_t(sign | uint16_t(std::nearbyint(FromBits(magnitude) * 16777216.0f)));
  }
  // A normal: drop 13 mantissa bits rounding to nearest even (a carry moves into the exponent),
  // then rebias the exponent from 127 to 15.
  const uint32_t rounded = magnitude + 0xfffu + ((magnitude >> 13) & 1u);
  return uint16_t(sign | ((rounded - 0x38000000u) >> 13));
}

float BFloat16ToFloat(uint16_t bits) { return FromBits(uint32_t(bits) << 16); }

uint16_t FloatToBFloat16(float value) {
  const uint32_t x = Bits(value);
  if ((x & 0x7fffffffu) > 0x7f800000u) return uint16_t((x >> 16) | 0x40u);  // quiet NaN
  return uint16_t((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);                  // nearest even
}

Status ConvertToStorage(ElementType edge, const void* from, void* to, int64_t n, const std::string& what) {
  switch (edge) {
    case ElementType::kFloat64:
      for (int64_t i = 0; i < n; ++i) Store<float>(to, i, float(Load<double>(from, i)));
      return Status::OK();
    case ElementType::kFloat16:
      for (int64_t i = 0; i < n; ++i) Store<float>(to, i, HalfToFloat(Load<uint16_t>(from, i)));
      return Status::OK();
    case ElementType::kBFloat16:
      for (int64_t i = 0; i < n; ++i) Store<float>(to, i, BFloat16ToFloat(Load<uint16_t>(from, i)));
      return Status::OK();
    case ElementType::kInt16:
      for (int64_t i = 0; i < n; ++i) Store<int64_t>(to, i, Load<int16_t>(from, i));
      return Status::OK();
    case ElementType::kUInt16:
      for (int64_t i = 0; i < n; ++i) Store<int64_t>(to, i, Load<uint16_t>(from, i));
      return Status::OK();
    case ElementType::kUInt32:
      for (int64_t i = 0; i < n; ++i) Store<int64_t>(to, i, Load<uint32_t>(from, i));
      return Status::OK();
    case ElementType::kUInt64:
      for (int64_t i = 0; i < n; ++i) {
        const uint64_t v = Load<uint64_t>(from, i);
        if (v > uint64_t(std::numeric_limits<int64_t>::max())) {
          return Status::InvalidArgument(what + ": element " + std::to_string(i) + " is " + std::to_string(v) +
                                         "; uint64 values are computed in int64 and must be at most 2^63-1");
        }
        Store<int64_t>(to, i, int64_t(v));
      }
      return Status::OK();
    default:
      std::memcpy(to, from, size_t(n) * size_t(ElementSize(edge)));
      return Status::OK();
  }
}

void ConvertFromStorage(ElementType edge, const void* from, void* to, int64_t n) {
  switch (edge) {
    case ElementType::kFloat64:
      for (int64_t i = 0; i < n; ++i) Store<double>(to, i, double(Load<float>(from, i)));
      return;
    case ElementType::kFloat16:
      for (int64_t i = 0; i < n; ++i) Store<uint16_t>(to, i, FloatToHalf(Load<float>(from, i)));
      return;
    case ElementType::kBFloat16:
      for (int64_t i = 0; i < n; ++i) Store<uint16_t>(to, i, FloatToBFloat16(Load<float>(from, i)));
      return;
    case ElementType::kInt16:
      for (int64_t i = 0; i < n; ++i) Store<int16_t>(to, i, int16_t(Load<int64_t>(from, i)));
      return;
    case ElementType::kUInt16:
      for (int64_t i = 0; i < n; ++i) Store<uint16_t>(to, i, uint16_t(Load<int64_t>(from, i)));
      return;
    case ElementType::kUInt32:
      for (int64_t i = 0; i < n; ++i) Store<uint32_t>(to, i, uint32_t(Load<int64_t>(from, i)));
      return;
    case ElementType::kUInt64:
      for (int64_t i = 0; i < n; ++i) Store<uint64_t>(to, i, uint64_t(Load<int64_t>(from, i)));
      return;
    default:
      std::memcpy(to, from, size_t(n) * size_t(ElementSize(edge)));
      return;
  }
}

}  // namespace tunefarm::runtime
