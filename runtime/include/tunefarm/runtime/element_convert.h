// Element types at a model's edges: kernels compute on six storage types (float32, int64, int32,
// int8, uint8, bool); a model may still take or give float64, float16, bfloat16, int16, uint16,
// uint32 or uint64. Such an input is converted to its storage type when it is set, and such an
// output from it after each run, so every kernel, template and tuning record stays the same.
//
// What the conversions keep: float16 and bfloat16 to float32 and back are exact for every value
// (float32 -> float16/bfloat16 rounds to nearest even, overflows to infinity, keeps NaN); float64
// is computed in float32 (about 7 significant digits, range 3.4e38); int16, uint16 and uint32 are
// exact in int64; uint64 inputs above 2^63-1 are refused, since int64 cannot hold them.
#ifndef TUNEFARM_RUNTIME_ELEMENT_CONVERT_H_
#define TUNEFARM_RUNTIME_ELEMENT_CONVERT_H_

#include <cstdint>
#include <string>

#include "tunefarm/runtime/artifact.h"
#include "tunefarm/runtime/status.h"

namespace tunefarm::runtime {

// Whether kernels compute on `t` (the first six types).
bool IsStorageType(ElementType t);
// The storage type values of `t` live in: float32 for the floating types, int64 for the integer
// types that are not storage types, `t` itself for storage types.
ElementType StorageTypeOf(ElementType t);

// `n` elements of `edge` at `from` into StorageTypeOf(edge) at `to`. InvalidArgument naming
// `what` and the element when a value does not fit (a uint64 above 2^63-1).
Status ConvertToStorage(ElementType edge, const void* from, void* to, int64_t n, const std::string& what);
// `n` elements of StorageTypeOf(edge) at `from` into `edge` at `to` (integers wrap as C++ casts).
void ConvertFromStorage(ElementType edge, const void* from, void* to, int64_t n);

float HalfToFloat(uint16_t bits);
uint16_t FloatToHalf(float value);
float BFloat16ToFloat(uint16_t bits);
uint16_t FloatToBFloat16(float value);

}  // namespace tunefarm::runtime

#endif  // TUNEFARM_RUNTIME_ELEMENT_CONVERT_H_
