#include "compiler/ir/ir_operators.h"

#include <string>

#include "tunefarm/runtime/check.h"

namespace tunefarm::ir {

bool MatchTypes(Expr* a, Expr* b) {
  Type ta = a->type(), tb = b->type();
  if (ta.element_of() != tb.element_of()) {
    if (ta.is_float() && tb.is_int()) {
      if (const IntImm* i = b->as<IntImm>()) {
        *b = FloatImm::Make(ta.element_of(), double(i->value));
      } else {
        *b = Cast::Make(ta.element_of().with_lanes(tb.lanes), *b);
      }
    } else if (tb.is_float() && ta.is_int()) {
      if (const IntImm* i = a->as<IntImm>()) {
        *a = FloatImm::Make(tb.element_of(), double(i->value));
      } else {
        *a = Cast::Make(tb.element_of().with_lanes(ta.lanes), *a);
      }
    } else if (ta.is_int() && tb.is_int()) {
      if (b->as<IntImm>()) {
        *b = IntImm::Make(ta.element_of(), b->as<IntImm>()->value);
      } else if (a->as<IntImm>()) {
        *a = IntImm::Make(tb.element_of(), a->as<IntImm>()->value);
      } else {
        return false;
      }
    } else {
      return false;
    }
  }
  ta = a->type();
  tb = b->type();
  if (ta.lanes != tb.lanes) {
    if (ta.lanes == 1) {
      *a = Broadcast::Make(*a, tb.lanes);
    } else if (tb.lanes == 1) {
      *b = Broadcast::Make(*b, ta.lanes);
    } else {
      return false;
    }
  }
  return true;
}

namespace {
template <typename T>
Expr MakeBinary(Expr a, Expr b) {
  TUNEFARM_CHECK_MSG(MatchTypes(&a, &b), (a.type().ToString() + " vs " + b.type().ToString()).c_str());
  return T::Make(std::move(a), std::move(b));
}
}  // namespace

Expr operator+(Expr a, Expr b) { return MakeBinary<Add>(std::move(a), std::move(b)); }
Expr operator-(Expr a, Expr b) { return MakeBinary<Sub>(std::move(a), std::move(b)); }
Expr operator*(Expr a, Expr b) { return MakeBinary<Mul>(std::move(a), std::move(b)); }
Expr operator/(Expr a, Expr b) { return MakeBinary<Div>(std::move(a), std::move(b)); }
Expr operator%(Expr a, Expr b) { return MakeBinary<Mod>(std::move(a), std::move(b)); }
Expr operator<(Expr a, Expr b) { return MakeBinary<LT>(std::move(a), std::move(b)); }
Expr operator<=(Expr a, Expr b) { return MakeBinary<LE>(std::move(a), std::move(b)); }
Expr operator>(Expr a, Expr b) { return MakeBinary<GT>(std::move(a), std::move(b)); }
Expr operator>=(Expr a, Expr b) { return MakeBinary<GE>(std::move(a), std::move(b)); }
Expr operator==(Expr a, Expr b) { return MakeBinary<EQ>(std::move(a), std::move(b)); }
Expr operator!=(Expr a, Expr b) { return MakeBinary<NE>(std::move(a), std::move(b)); }
Expr operator&&(Expr a, Expr b) { return MakeBinary<And>(std::move(a), std::move(b)); }
Expr operator||(Expr a, Expr b) { return MakeBinary<Or>(std::move(a), std::move(b)); }
Expr operator!(Expr a) { return Not::Make(std::move(a)); }
Expr min(Expr a, Expr b) { return MakeBinary<Min>(std::move(a), std::move(b)); }
Expr max(Expr a, Expr b) { return MakeBinary<Max>(std::move(a), std::move(b)); }
Expr select(Expr c, Expr t, Expr f) {
  TUNEFARM_CHECK(MatchTypes(&t, &f));
  return Select::Make(std::move(c), std::move(t), std::move(f));
}
Expr cast(Type t, Expr v) {
  if (v.type() == t) return v;
  return Cast::Make(t, std::move(v));
}
Expr reinterpret(Type t, Expr v) {
  TUNEFARM_CHECK_MSG(t.bits * t.lanes == v.type().bits * v.type().lanes,
                     ("reinterpret " + v.type().ToString() + " as " + t.ToString()).c_str());
  return Call::Make(t, kReinterpret, {std::move(v)});
}

namespace {
Expr DotProduct(const char* name, Expr acc, Expr a, Expr b) {
  const Type t = acc.type();
  TUNEFARM_CHECK_MSG(t.code == Type::kInt && t.bits == 32 && a.type() == t && b.type() == t,
                     (std::string(name) + " on " + t.ToString() + ", " + a.type().ToString() + ", " +
                      b.type().ToString() + ": all three must be int32 of one lane count")
                         .c_str());
  return Call::Make(t, name, {std::move(acc), std::move(a), std::move(b)});
}
}  // namespace

Expr dot4_u8s8(Expr acc, Expr a, Expr b) { return DotProduct(kDot4U8S8, std::move(acc), std::move(a), std::move(b)); }
Expr dot4_s8s8(Expr acc, Expr a, Expr b) { return DotProduct(kDot4S8S8, std::move(acc), std::move(a), std::move(b)); }
Expr dot2_i16(Expr acc, Expr a, Expr b) { return DotProduct(kDot2I16, std::move(acc), std::move(a), std::move(b)); }
Expr round_to_int32(Expr x) {
  TUNEFARM_CHECK_MSG(x.type().code == Type::kFloat && x.type().bits == 32,
                     ("round_to_int32 of " + x.type().ToString() + ": must be float32").c_str());
  const Type ints = Type::Int(32).with_lanes(x.type().lanes);
  return Call::Make(ints, kRoundToInt32, {std::move(x)});
}
Expr byte_pair(Expr lo, Expr hi) {
  const Type u8{Type::kUInt, 8, lo.type().lanes};
  TUNEFARM_CHECK_MSG(
      lo.type() == u8 && hi.type() == u8,
      ("byte_pair of " + lo.type().ToString() + ", " + hi.type().ToString() + ": both must be uint8").c_str());
  return Call::Make(Type::Int(32).with_lanes(u8.lanes), kBytePair, {std::move(lo), std::move(hi)});
}

}  // namespace tunefarm::ir
