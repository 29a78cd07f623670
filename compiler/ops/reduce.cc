// Reductions: pooling, means, softmax.
#include <limits>

#include "compiler/ir/ir_operators.h"
#include "compiler/ops/ops.h"
#include "compiler/schedule/templates/template_util.h"
#include "tunefarm/runtime/check.h"

namespace tunefarm::ops {
namespace {

Expr ToFloat(const Expr& e) { return ir::cast(ir::Type::Float(32), e); }

// Divides every element of sum by a per-element count.
Tensor DivideBy(const Tensor& sum, const std::string& name, const std::function<Expr(const std::vector<Expr>&)>& count) {
  return te::Compute(name, sum->shape, [&](const std::vector<Expr>& i) { return te::Read(sum, i) / count(i); });
}

}  // namespace

Tensor Pool(const Tensor& x, const PoolParams& p, const std::vector<int64_t>& out_shape) {
  std::vector<te::IterVar> raxes;
  for (size_t d = 0; d < p.spatial_axes.size(); ++d) raxes.push_back(te::MakeIterVar("rk" + std::to_string(d), p.kernel[d], true));
  // The input position a window element reads, per spatial axis.
  auto position = [&](const std::vector<Expr>& i, size_t d, const Expr& k) {
    return i[size_t(p.spatial_axes[d])] * Expr(p.strides[d]) + k * Expr(p.dilations[d]) - Expr(p.pads_begin[d]);
  };
  auto inside_at = [&](const std::vector<Expr>& i, std::vector<Expr>* idx) {
    Expr inside;
    *idx = i;
    for (size_t d = 0; d < raxes.size(); ++d) {
      Expr pos = position(i, d, te::AxisExpr(raxes[d]));
      Expr ok = pos >= Expr(0) && pos < Expr(x->shape[size_t(p.spatial_axes[d])]);
      inside = inside.defined() ? (inside && ok) : ok;
      (*idx)[size_t(p.spatial_axes[d])] = pos;
    }
    return inside;
  };
  if (p.is_max) {
    return te::ComputeReduce(x->name + ".maxpool", out_shape, te::ReduceKind::kMax, raxes, [&](const std::vector<Expr>& i) {
      std::vector<Expr> idx;
      Expr inside = inside_at(i, &idx);
      Expr lowest = x->dtype.is_float() ? Expr(-std::numeric_limits<float>::infinity())
                                        : ir::cast(x->dtype, Expr(int64_t(x->dtype.code == ir::Type::kUInt ? 0 : -(int64_t(1) << (x->dtype.bits - 1)))));
      return ir::select(inside, compiler::ClampedRead(x, idx), lowest);
    });
  }
  Tensor sum = te::ComputeReduce(x->name + ".avgsum", out_shape, te::ReduceKind::kSum, raxes, [&](const std::vector<Expr>& i) {
    std::vector<Expr> idx;
    Expr inside = inside_at(i, &idx);
    return ir::select(inside, compiler::ClampedRead(x, idx), Expr(0.0f));
  });
  return DivideBy(sum, x->name + ".avgpool", [&](const std::vector<Expr>& i) {
    // Window elements inside the input (or inside the padded input with count_include_pad).
    Expr count(int64_t(1));
    for (size_t d = 0; d < raxes.size(); ++d) {
      const int64_t n = x->shape[size_t(p.spatial_axes[d])];
      Expr start = position(i, d, Expr(0));
      Expr end = start + Expr((p.kernel[d] - 1) * p.dilations[d] + 1);
      int64_t lo = p.count_include_pad ? -p.pads_begin[d] : 0;
      int64_t hi = p.count_include_pad ? n + p.pads_end[d] : n;
      if (p.dilations[d] == 1) {
        count = count * (ir::min(end, Expr(hi)) - ir::max(start, Expr(lo)));
        continue;
      }
      // Dilated windows (opset 19): taps k in [0, K) with lo <= start + k * dil < hi. The IR's
      // integer division floors, so ceil(a / d) = -floor(-a / d).
      const Expr dil(p.dilations[d]);
      Expr k_min = ir::max(Expr(0) - (start - Expr(lo)) / dil, Expr(0));
      Expr k_max = ir::min((Expr(hi - 1) - start) / dil, Expr(p.kernel[d] - 1));
      count = count * ir::max(k_max - k_min + Expr(1), Expr(0));
    }
    return ToFloat(count);
  });
}

Tensor GlobalAveragePool(const Tensor& x, const std::vector<int64_t>& spatial_axes) {
  return ReduceMean(x, spatial_axes, true);
}

namespace {

// The reduction of x over axes: the output shape (reduced axes kept as 1 with keepdims), one
// reduce axis per reduced dimension, and x's index for an output index and those axes.
struct Reduction {
  std::vector<int64_t> shape;
  std::vector<te::IterVar> raxes;
  std::vector<bool> reduced;
  int64_t count = 1;  // elements reduced into each output
  bool keepdims;

  Reduction(const Tensor& x, const std::vector<int64_t>& axes, bool keep) : reduced(x->shape.size(), false), keepdims(keep) {
    for (int64_t a : axes) reduced[size_t(a)] = true;
    for (size_t d = 0; d < x->shape.size(); ++d) {
      if (reduced[d]) {
        raxes.push_back(te::MakeIterVar("r" + std::to_string(d), x->shape[d], true));
        count *= x->shape[d];
        if (keepdims) shape.push_back(1);
      } else {
        shape.push_back(x->shape[d]);
      }
    }
  }
  std::vector<Expr> InputIndex(const std::vector<Expr>& out) const {
    std::vector<Expr> idx;
    size_t out_d = 0, r = 0;
    for (size_t d = 0; d < reduced.size(); ++d) {
      if (reduced[d]) {
        idx.push_back(te::AxisExpr(raxes[r++]));
        if (keepdims) ++out_d;
      } else {
        idx.push_back(out[out_d++]);
      }
    }
    return idx;
  }
};

}  // namespace

Tensor ReduceMean(const Tensor& x, const std::vector<int64_t>& axes, bool keepdims) {
  const Reduction red(x, axes, keepdims);
  Tensor sum = te::ComputeReduce(x->name + ".sum", red.shape, te::ReduceKind::kSum, red.raxes,
                                 [&](const std::vector<Expr>& i) { return te::Read(x, red.InputIndex(i)); });
  const int64_t count = red.count;
  return DivideBy(sum, x->name + ".mean", [&](const std::vector<Expr>&) { return Expr(float(count)); });
}

Tensor Reduce(const Tensor& x, const std::vector<int64_t>& axes, bool keepdims, ReduceOp op) {
  if (op == ReduceOp::kMean) return ReduceMean(x, axes, keepdims);
  if (op == ReduceOp::kL2) {  // sqrt of the sum of squares
    Tensor sum = Reduce(x, axes, keepdims, ReduceOp::kSumSquare);
    return te::Compute(x->name + ".l2", sum->shape, [&](const std::vector<Expr>& i) {
      return ir::Call::Make(ir::Type::Float(32), "sqrt", {te::Read(sum, i)});
    });
  }
  const Reduction red(x, axes, keepdims);
  // min(x) = -max(-x): the IR reduces by sum and max only.
  const bool negate = op == ReduceOp::kMin;
  auto negated = [&](const Expr& e) { return x->dtype.is_float() ? Expr(0.0f) - e : ir::cast(x->dtype, Expr(int64_t(0))) - e; };
  Tensor r = te::ComputeReduce(x->name + ".reduce", red.shape, op == ReduceOp::kMax || negate ? te::ReduceKind::kMax : te::ReduceKind::kSum,
                               red.raxes, [&](const std::vector<Expr>& i) {
    Expr v = te::Read(x, red.InputIndex(i));
    if (op == ReduceOp::kSumSquare) return v * v;
    return negate ? negated(v) : v;
  });
  if (!negate) return r;
  return te::Compute(x->name + ".min", red.shape, [&](const std::vector<Expr>& i) { return negated(te::Read(r, i)); });
}

Tensor LayerNorm(const Tensor& x, const Tensor& scale, const Tensor& bias, int64_t axis, float epsilon) {
  std::vector<int64_t> axes;
  for (int64_t d = axis; d < int64_t(x->shape.size()); ++d) axes.push_back(d);
  Tensor mean = ReduceMean(x, axes, true);
  Tensor centered = te::Compute(x->name + ".centered", x->shape, [&](const std::vector<Expr>& i) {
    std::vector<Expr> m = i;
    for (int64_t d : axes) m[size_t(d)] = Expr(0);
    return te::Read(x, i) - te::Read(mean, m);
  });
  Tensor var = ReduceMean(te::Compute(x->name + ".sq", x->shape, [&](const std::vector<Expr>& i) {
                            Expr c = te::Read(centered, i);
                            return c * c;
                          }),
                          axes, true);
  auto trailing = [&](const Tensor& t, const std::vector<Expr>& i) {
    std::vector<Expr> idx(i.end() - int64_t(t->shape.size()), i.end());
    for (size_t d = 0; d < idx.size(); ++d) {
      if (t->shape[d] == 1) idx[d] = Expr(0);
    }
    return te::Read(t, idx);
  };
  return te::Compute(x->name + ".layernorm", x->shape, [&](const std::vector<Expr>& i) {
    std::vector<Expr> m = i;
    for (int64_t d : axes) m[size_t(d)] = Expr(0);
    Expr inv = Expr(1.0f) / ir::Call::Make(ir::Type::Float(32), "sqrt", {te::Read(var, m) + Expr(epsilon)});
    Expr y = te::Read(centered, i) * inv * trailing(scale, i);
    return bias ? y + trailing(bias, i) : y;
  });
}

Tensor Softmax(const Tensor& x, int64_t first_axis, int64_t last_axis) {
  std::vector<int64_t> kept = x->shape;
  std::vector<te::IterVar> rmax, rsum;
  for (int64_t d = first_axis; d <= last_axis; ++d) {
    kept[size_t(d)] = 1;
    rmax.push_back(te::MakeIterVar("rm" + std::to_string(d), x->shape[size_t(d)], true));
    rsum.push_back(te::MakeIterVar("rs" + std::to_string(d), x->shape[size_t(d)], true));
  }
  auto with_axes = [&](std::vector<Expr> i, const std::vector<te::IterVar>& r) {
    for (int64_t d = first_axis; d <= last_axis; ++d) i[size_t(d)] = te::AxisExpr(r[size_t(d - first_axis)]);
    return i;
  };
  auto kept_index = [&](std::vector<Expr> i) {
    for (int64_t d = first_axis; d <= last_axis; ++d) i[size_t(d)] = Expr(0);
    return i;
  };
  Tensor m = te::ComputeReduce(x->name + ".max", kept, te::ReduceKind::kMax, rmax,
                               [&](const std::vector<Expr>& i) { return te::Read(x, with_axes(i, rmax)); });
  Tensor e = te::Compute(x->name + ".exp", x->shape, [&](const std::vector<Expr>& i) {
    return ir::Call::Make(ir::Type::Float(32), "exp", {te::Read(x, i) - te::Read(m, kept_index(i))});
  });
  Tensor s = te::ComputeReduce(x->name + ".expsum", kept, te::ReduceKind::kSum, rsum,
                               [&](const std::vector<Expr>& i) { return te::Read(e, with_axes(i, rsum)); });
  return te::Compute(x->name + ".softmax", x->shape,
                     [&](const std::vector<Expr>& i) { return te::Read(e, i) / te::Read(s, kept_index(i)); });
}

}  // namespace tunefarm::ops
