// Operators that build IR with the usual C++ syntax. Scalars meeting vectors are broadcast and
// integer immediates meeting floats become float immediates, so template code reads like math:
//   out = max(conv + bias, 0.0f)
#ifndef TUNEFARM_COMPILER_IR_IR_OPERATORS_H_
#define TUNEFARM_COMPILER_IR_IR_OPERATORS_H_

#include "compiler/ir/ir.h"

namespace tunefarm::ir {

Expr operator+(Expr a, Expr b);
Expr operator-(Expr a, Expr b);
Expr operator*(Expr a, Expr b);
Expr operator/(Expr a, Expr b);  // floor division on integers
Expr operator%(Expr a, Expr b);  // floor modulo on integers
Expr operator<(Expr a, Expr b);
Expr operator<=(Expr a, Expr b);
Expr operator>(Expr a, Expr b);
Expr operator>=(Expr a, Expr b);
Expr operator==(Expr a, Expr b);
Expr operator!=(Expr a, Expr b);
Expr operator&&(Expr a, Expr b);
Expr operator||(Expr a, Expr b);
Expr operator!(Expr a);
Expr min(Expr a, Expr b);
Expr max(Expr a, Expr b);
Expr select(Expr c, Expr t, Expr f);
Expr cast(Type t, Expr v);
// The bits of v read as type t (same bit width and lanes): Call "reinterpret", a bitcast in codegen.
inline constexpr const char* kReinterpret = "reinterpret";
Expr reinterpret(Type t, Expr v);
// The int8 dot product every instruction set has a form of, lane-wise on int32 lanes:
//   dot4_u8s8(acc, a, b)[i] = acc[i] + sum_{j<4} u8(byte j of a[i]) * s8(byte j of b[i])
// exact (no intermediate saturation; the int32 sum wraps). Codegen: vpdpbusd where the target has
// AVX-512 VNNI or AVX-VNNI, vpmaddwd pairs on other x86, dp4a.u32.s32 on CUDA, widening
// multiply-adds elsewhere. All three operands int32 of one lane count.
inline constexpr const char* kDot4U8S8 = "dot4_u8s8";
// a ^ b on integers of one type: Call "bitwise_xor".
inline constexpr const char* kBitwiseXor = "bitwise_xor";
Expr dot4_u8s8(Expr acc, Expr a, Expr b);
// The int16 pair product x86 without VNNI has (vpmaddwd), lane-wise on int32 lanes:
//   dot2_i16(acc, a, b)[i] = acc[i] + sum_{j<2} s16(half j of a[i]) * s16(half j of b[i])
// the int32 sum wrapping. The int8 templates hold uint8 activations in a's halves and int8 weights
// widened to int16 in b's, where no pair sum can saturate (vpmaddubsw's u8 x s8 pairs can). Codegen:
// vpmaddwd on x86, widening multiply-adds elsewhere. All three operands int32 of one lane count.
inline constexpr const char* kDot4S8S8 = "dot4_s8s8";
// dot4_u8s8 with both operands' bytes signed (sdot on aarch64 with the dot-product extension,
// smull/saddlp widening multiply-adds on other aarch64, widening arithmetic elsewhere).
Expr dot4_s8s8(Expr acc, Expr a, Expr b);
inline constexpr const char* kDot2I16 = "dot2_i16";
Expr dot2_i16(Expr acc, Expr a, Expr b);
// The int32 whose int16 halves are the uint8 values lo and hi (dot2_i16's input word): Call
// "byte_pair".
inline constexpr const char* kBytePair = "byte_pair";
Expr byte_pair(Expr lo, Expr hi);
// float32 to int32 rounding half to even, lane-wise: cast(int32, roundeven(x)) in one instruction
// where the target has one (vcvtps2dq on x86, fcvtns on aarch64). x must lie within int32's range
// (the requantizing epilogues clamp it first). Call "round_to_int32".
inline constexpr const char* kRoundToInt32 = "round_to_int32";
Expr round_to_int32(Expr x);
inline Expr operator+(const Var& a, Expr b) { return AsExpr(a) + std::move(b); }
inline Expr operator*(const Var& a, Expr b) { return AsExpr(a) * std::move(b); }

// Makes a and b the same type (broadcast, int immediate -> float); returns false if impossible.
bool MatchTypes(Expr* a, Expr* b);

}  // namespace tunefarm::ir

#endif  // TUNEFARM_COMPILER_IR_IR_OPERATORS_H_
