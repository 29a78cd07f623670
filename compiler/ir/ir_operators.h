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
inline Expr operator+(const Var& a, Expr b) { return AsExpr(a) + std::move(b); }
inline Expr operator*(const Var& a, Expr b) { return AsExpr(a) * std::move(b); }

// Makes a and b the same type (broadcast, int immediate -> float); returns false if impossible.
bool MatchTypes(Expr* a, Expr* b);

}  // namespace tunefarm::ir

#endif  // TUNEFARM_COMPILER_IR_IR_OPERATORS_H_
