// Element-wise operators: activations, broadcasting arithmetic, inference batch normalization.
#include <algorithm>
#include <cmath>

#include "compiler/ir/ir_operators.h"
#include "compiler/ops/ops.h"
#include "tunefarm/runtime/check.h"

namespace tunefarm::ops {
namespace {

Expr F(float v) { return Expr(v); }

Expr Sigmoid(const Expr& x) {
  return F(1.0f) / (F(1.0f) + ir::Call::Make(x.type(), "exp", {F(0.0f) - x}));
}

// Index of an operand of shape `in` read at output indices `out_idx` under numpy broadcasting.
std::vector<Expr> BroadcastIndex(const std::vector<int64_t>& in, const std::vector<Expr>& out_idx) {
  std::vector<Expr> idx;
  size_t offset = out_idx.size() - in.size();
  for (size_t d = 0; d < in.size(); ++d) idx.push_back(in[d] == 1 ? Expr(0) : out_idx[offset + d]);
  return idx;
}

}  // namespace

Expr ApplyUnary(const Expr& x, const UnaryParams& p) {
  switch (p.kind) {
    case UnaryKind::kIdentity: return x;
    case UnaryKind::kRelu: return ir::max(x, F(0.0f));
    case UnaryKind::kLeakyRelu: return ir::select(x < F(0.0f), x * F(p.alpha), x);
    case UnaryKind::kSigmoid: return Sigmoid(x);
    case UnaryKind::kHardSigmoid: return ir::min(ir::max(x * F(p.alpha) + F(p.beta), F(0.0f)), F(1.0f));
    case UnaryKind::kHardSwish: return x * ir::min(ir::max(x * F(1.0f / 6.0f) + F(0.5f), F(0.0f)), F(1.0f));
    case UnaryKind::kTanh: return ir::Call::Make(x.type(), "tanh", {x});
    case UnaryKind::kClip: {
      if (x.type().is_float()) return ir::min(ir::max(x, F(p.lo)), F(p.hi));
      // Integer tensors: the bounds clamped to the type's range, as integers of its type.
      const ir::Type t = x.type().element_of();
      const double lo_t = t.code == ir::Type::kUInt ? 0.0 : -std::ldexp(1.0, t.bits - 1);
      const double hi_t = std::ldexp(1.0, t.code == ir::Type::kUInt ? t.bits : t.bits - 1) - 1;
      auto bound = [&](float v) { return ir::IntImm::Make(t, int64_t(std::max(lo_t, std::min(hi_t, double(v))))); };
      return ir::min(ir::max(x, bound(p.lo)), bound(p.hi));
    }
  }
  return x;
}

Tensor Unary(const Tensor& x, const UnaryParams& p) {
  return te::Compute(x->name + ".act", x->shape, [&](const std::vector<Expr>& i) { return ApplyUnary(te::Read(x, i), p); });
}

std::vector<int64_t> BroadcastShape(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  size_t rank = std::max(a.size(), b.size());
  std::vector<int64_t> out(rank, 1);
  for (size_t d = 0; d < rank; ++d) {
    int64_t da = d + a.size() >= rank ? a[d + a.size() - rank] : 1;
    int64_t db = d + b.size() >= rank ? b[d + b.size() - rank] : 1;
    TUNEFARM_CHECK(da == db || da == 1 || db == 1);
    out[d] = da == 1 ? db : da;
  }
  return out;
}

Tensor Binary(const Tensor& a, const Tensor& b, BinaryKind kind) {
  std::vector<int64_t> shape = BroadcastShape(a->shape, b->shape);
  return te::Compute(a->name + ".bin", shape, [&](const std::vector<Expr>& i) {
    Expr x = te::Read(a, BroadcastIndex(a->shape, i)), y = te::Read(b, BroadcastIndex(b->shape, i));
    switch (kind) {
      case BinaryKind::kAdd: return x + y;
      case BinaryKind::kSub: return x - y;
      case BinaryKind::kMul: return x * y;
      case BinaryKind::kDiv: break;
    }
    return x / y;
  });
}

Tensor BatchNorm(const Tensor& x, const Tensor& scale, const Tensor& bias, const Tensor& mean, const Tensor& var,
                 float epsilon) {
  return te::Compute(x->name + ".bn", x->shape, [&](const std::vector<Expr>& i) {
    Expr c = i[1];
    Expr inv = ir::Call::Make(ir::Type::Float(32), "sqrt", {te::Read(var, {c}) + F(epsilon)});
    return (te::Read(x, i) - te::Read(mean, {c})) / inv * te::Read(scale, {c}) + te::Read(bias, {c});
  });
}

}  // namespace tunefarm::ops
