// Indexed reads and writes: GatherND, ScatterElements, OneHot and TopK. Every index a kernel reads
// from a tensor is normalized (negative counts from the end) and clamped into its axis, so a read
// never leaves its tensor whatever the data; ScatterElements' inference refuses out-of-range
// constant indices by name. TopK assumes no NaN (ranks of NaNs tie).
#include <cstddef>
#include <cstdint>

#include "compiler/compute/ops.h"
#include "compiler/ir/ir_operators.h"

namespace tunefarm::compute {
namespace {

Expr AsInt64(const Expr& e) { return e.type() == ir::Type::Int(64) ? e : ir::cast(ir::Type::Int(64), e); }

// An index into an axis of extent n: negative counts from the end, then clamped into [0, n).
Expr NormalizedIndex(Expr k, int64_t n) {
  k = AsInt64(k);
  k = ir::select(k < Expr(int64_t(0)), k + Expr(n), k);
  return ir::min(ir::max(k, Expr(int64_t(0))), Expr(n - 1));
}

Expr True() { return Expr(int64_t(0)) == Expr(int64_t(0)); }

// The lowest value of t: the identity of a max reduction.
Expr Lowest(const ir::Type& t) {
  if (t.is_float()) return Expr(-3.4028234e38f);
  if (t.code == ir::Type::kUInt || t.is_bool()) return ir::cast(t, Expr(int64_t(0)));
  return ir::cast(t, Expr(t.bits >= 64 ? INT64_MIN : -(int64_t(1) << (t.bits - 1))));
}

// An order-reversing involution of t's values (min(a, b) = Flip(max(Flip(a), Flip(b)))): negation,
// or for unsigned types the distance from the largest value, so it never wraps.
Expr Flip(const ir::Type& t, const Expr& v) {
  if (t.code == ir::Type::kUInt || t.is_bool()) return ir::cast(t, Expr((int64_t(1) << t.bits) - 1)) - v;
  return ZeroOf(t) - v;
}

}  // namespace

Tensor GatherND(const Tensor& data, const Tensor& indices, int64_t batch_dims) {
  const size_t q = indices->shape.size();
  const int64_t m = indices->shape.back();
  std::vector<int64_t> shape(indices->shape.begin(), indices->shape.end() - 1);
  shape.insert(shape.end(), data->shape.begin() + batch_dims + m, data->shape.end());
  return te::Compute(data->name + ".gather_nd", shape, [&](const std::vector<Expr>& i) {
    std::vector<Expr> at(i.begin(), i.begin() + batch_dims);  // the batch dimensions
    std::vector<Expr> row(i.begin(), i.begin() + std::ptrdiff_t(q - 1));
    for (int64_t j = 0; j < m; ++j) {
      std::vector<Expr> idx = row;
      idx.push_back(Expr(j));
      at.push_back(NormalizedIndex(te::Read(indices, idx), data->shape[size_t(batch_dims + j)]));
    }
    at.insert(at.end(), i.begin() + std::ptrdiff_t(q - 1), i.end());  // the slice each index names
    return te::Read(data, at);
  });
}

Tensor ScatterElements(const Tensor& data, const Tensor& indices, const Tensor& updates, int64_t axis,
                       ScatterReduction reduction) {
  // out[p] = data[p] combined with every updates[r] whose index names p: a reduction over the
  // indices' extent along the axis at p's other coordinates (where those lie inside the indices).
  const int64_t n = indices->shape[size_t(axis)], extent = data->shape[size_t(axis)];
  const ir::Type t = data->dtype;
  // min is a max of the flipped updates (te has no min reduction).
  const bool negate = reduction == ScatterReduction::kMin;
  const te::ReduceKind kind = reduction == ScatterReduction::kMul ? te::ReduceKind::kProd
                              : reduction == ScatterReduction::kMax || reduction == ScatterReduction::kMin
                                  ? te::ReduceKind::kMax
                                  : te::ReduceKind::kSum;
  auto hits = [&](const std::vector<Expr>& p, const Expr& r) {
    Expr inside = True();
    std::vector<Expr> at = p;
    at[size_t(axis)] = r;
    for (size_t d = 0; d < p.size(); ++d) {
      if (int64_t(d) == axis) continue;
      inside = inside && p[d] < Expr(indices->shape[d]);
      at[d] = ir::min(p[d], Expr(indices->shape[d] - 1));
    }
    return std::make_pair(inside && NormalizedIndex(te::Read(indices, at), extent) == p[size_t(axis)], at);
  };
  te::IterVar r1 = te::MakeIterVar("r", n, true), r2 = te::MakeIterVar("r", n, true);
  Tensor count = te::ComputeReduce(
      data->name + ".scatter_hits", data->shape, te::ReduceKind::kSum, {r1}, [&](const std::vector<Expr>& p) {
        return ir::select(hits(p, te::AxisExpr(r1)).first, Expr(int64_t(1)), Expr(int64_t(0)));
      });
  Tensor combined =
      te::ComputeReduce(data->name + ".scatter_updates", data->shape, kind, {r2}, [&](const std::vector<Expr>& p) {
        const auto [hit, at] = hits(p, te::AxisExpr(r2));
        // Not a hit: the reduction's identity (0 for sums, 1 for products, the lowest value for max).
        const Expr identity = kind == te::ReduceKind::kProd
                                  ? (t.is_float() ? Expr(1.0f) : ir::cast(t, Expr(int64_t(1))))
                              : kind == te::ReduceKind::kMax ? Lowest(t)
                                                             : ZeroOf(t);
        const Expr u = te::Read(updates, at);
        return ir::select(hit, negate ? Flip(t, u) : u, identity);
      });
  return te::Compute(data->name + ".scatter", data->shape, [&](const std::vector<Expr>& p) {
    const Expr none = te::Read(count, p) == Expr(int64_t(0));
    const Expr old = te::Read(data, p), u = te::Read(combined, p);
    Expr merged;
    switch (reduction) {
      case ScatterReduction::kNone:
        merged = u;
        break;  // ONNX leaves duplicate indices undefined: their sum
      case ScatterReduction::kAdd:
        merged = old + u;
        break;
      case ScatterReduction::kMul:
        merged = old * u;
        break;
      case ScatterReduction::kMax:
        merged = ir::max(old, u);
        break;
      case ScatterReduction::kMin:
        merged = ir::min(old, Flip(t, u));
        break;
    }
    return ir::select(none, old, merged);
  });
}

Tensor OneHot(const Tensor& indices, const Tensor& values, int64_t depth, int64_t axis) {
  std::vector<int64_t> shape = indices->shape;
  shape.insert(shape.begin() + axis, depth);
  return te::Compute(indices->name + ".one_hot", shape, [&](const std::vector<Expr>& i) {
    std::vector<Expr> at = i;
    const Expr d = at[size_t(axis)];
    at.erase(at.begin() + axis);
    Expr k = AsInt64(te::Read(indices, at));
    k = ir::select(k < Expr(int64_t(0)), k + Expr(depth), k);  // outside [-depth, depth): all off
    return ir::select(k == d, te::Read(values, {Expr(int64_t(1))}), te::Read(values, {Expr(int64_t(0))}));
  });
}

TopKResult TopK(const Tensor& x, int64_t axis, int64_t k, bool largest) {
  // rank[i] = how many elements come before x[i] in the order (larger first for `largest`; ties
  // by index, lower first, as ONNX says); output j is the element of rank j. O(n^2) per row: TopK
  // in the models this serves runs over class scores and sequence positions.
  const int64_t n = x->shape[size_t(axis)];
  te::IterVar e = te::MakeIterVar("e", n, true);
  Tensor rank =
      te::ComputeReduce(x->name + ".rank", x->shape, te::ReduceKind::kSum, {e}, [&](const std::vector<Expr>& i) {
        std::vector<Expr> other = i;
        other[size_t(axis)] = te::AxisExpr(e);
        const Expr a = te::Read(x, other), b = te::Read(x, i);
        const Expr before = (largest ? a > b : a < b) || (a == b && te::AxisExpr(e) < i[size_t(axis)]);
        return ir::select(before, Expr(int64_t(1)), Expr(int64_t(0)));
      });
  std::vector<int64_t> shape = x->shape;
  shape[size_t(axis)] = k;
  te::IterVar s = te::MakeIterVar("s", n, true);
  Tensor index =
      te::ComputeReduce(x->name + ".topk_index", shape, te::ReduceKind::kMax, {s}, [&](const std::vector<Expr>& j) {
        std::vector<Expr> at = j;
        at[size_t(axis)] = te::AxisExpr(s);
        return ir::select(te::Read(rank, at) == j[size_t(axis)], te::AxisExpr(s), Expr(int64_t(-1)));
      });
  Tensor values = te::Compute(x->name + ".topk_values", shape, [&](const std::vector<Expr>& j) {
    std::vector<Expr> at = j;
    at[size_t(axis)] = ir::max(te::Read(index, j), Expr(int64_t(0)));
    return te::Read(x, at);
  });
  return {values, index};
}

}  // namespace tunefarm::compute
