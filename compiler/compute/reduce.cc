// Reductions: pooling, means, softmax.
#include <limits>

#include "compiler/compute/ops.h"
#include "compiler/ir/ir_operators.h"
#include "tunefarm/runtime/check.h"

namespace tunefarm::compute {
namespace {

Expr ToFloat(const Expr& e) { return ir::cast(ir::Type::Float(32), e); }

// Divides every element of sum by a per-element count.
Tensor DivideBy(const Tensor& sum, const std::string& name,
                const std::function<Expr(const std::vector<Expr>&)>& count) {
  return te::Compute(name, sum->shape, [&](const std::vector<Expr>& i) { return te::Read(sum, i) / count(i); });
}

// A reduction over the last axis of more than kLaneSplitMin elements runs as kLanes interleaved
// partial reductions (element r into lane r % kLanes), then one over the lanes. The generic
// schedule vectorizes the first along its lanes; a single running sum or maximum would be a
// scalar chain of dependent operations (LayerNorm's and Softmax's statistics, 768 and 197 wide).
constexpr int64_t kLanes = 16, kLaneSplitMin = 64;

// Reduces fn(i, r) over r in [0, n) for each index i of `kept` (the input's shape with the last
// axis kept as 1).
Tensor LastAxisReduce(const std::string& name, const std::vector<int64_t>& kept, te::ReduceKind kind, int64_t n,
                      const std::function<Expr(const std::vector<Expr>&, const Expr&)>& fn) {
  if (n < kLaneSplitMin) {
    auto r = te::MakeIterVar("r", n, true);
    return te::ComputeReduce(name, kept, kind, {r}, [&](const std::vector<Expr>& i) { return fn(i, te::AxisExpr(r)); });
  }
  // Whole chunks of kLanes into the lanes (dense vector reads); the last n % kLanes elements are
  // reduced on their own and combined at the end.
  const int64_t chunks = n / kLanes, main = chunks * kLanes, tail = n - main;
  std::vector<int64_t> lanes_shape = kept;
  lanes_shape.push_back(kLanes);
  auto ro = te::MakeIterVar("ro", chunks, true);
  Tensor partial = te::ComputeReduce(name + ".lanes", lanes_shape, kind, {ro}, [&](const std::vector<Expr>& i) {
    return fn(std::vector<Expr>(i.begin(), i.end() - 1), te::AxisExpr(ro) * Expr(kLanes) + i.back());
  });
  auto rl = te::MakeIterVar("rl", kLanes, true);
  Tensor lanes =
      te::ComputeReduce(tail == 0 ? name : name + ".main", kept, kind, {rl}, [&](const std::vector<Expr>& i) {
        std::vector<Expr> idx = i;
        idx.push_back(te::AxisExpr(rl));
        return te::Read(partial, idx);
      });
  if (tail == 0) return lanes;
  // The tail in its own reduction (a select would evaluate fn for every lane as well).
  auto rt = te::MakeIterVar("rt", tail, true);
  Tensor rest = te::ComputeReduce(name + ".tail", kept, kind, {rt},
                                  [&](const std::vector<Expr>& i) { return fn(i, te::AxisExpr(rt) + Expr(main)); });
  return te::Compute(name, kept, [&](const std::vector<Expr>& i) {
    return kind == te::ReduceKind::kMax ? ir::max(te::Read(lanes, i), te::Read(rest, i))
                                        : te::Read(lanes, i) + te::Read(rest, i);
  });
}

// idx with its last index replaced by r.
std::vector<Expr> AtLast(std::vector<Expr> idx, const Expr& r) {
  idx.back() = r;
  return idx;
}

}  // namespace

Tensor Pool(const Tensor& x, const PoolParams& p, const std::vector<int64_t>& out_shape) {
  std::vector<te::IterVar> raxes;
  for (size_t d = 0; d < p.spatial_axes.size(); ++d)
    raxes.push_back(te::MakeIterVar("rk" + std::to_string(d), p.kernel[d], true));
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
    return te::ComputeReduce(
        x->name + ".maxpool", out_shape, te::ReduceKind::kMax, raxes, [&](const std::vector<Expr>& i) {
          std::vector<Expr> idx;
          Expr inside = inside_at(i, &idx);
          Expr lowest =
              x->dtype.is_float()
                  ? Expr(-std::numeric_limits<float>::infinity())
                  : ir::cast(
                        x->dtype,
                        Expr(int64_t(x->dtype.code == ir::Type::kUInt ? 0 : -(int64_t(1) << (x->dtype.bits - 1)))));
          return ir::select(inside, te::ClampedRead(x, idx), lowest);
        });
  }
  Tensor sum =
      te::ComputeReduce(x->name + ".avgsum", out_shape, te::ReduceKind::kSum, raxes, [&](const std::vector<Expr>& i) {
        std::vector<Expr> idx;
        Expr inside = inside_at(i, &idx);
        return ir::select(inside, te::ClampedRead(x, idx), Expr(0.0f));
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

  Reduction(const Tensor& x, const std::vector<int64_t>& axes, bool keep)
      : reduced(x->shape.size(), false), keepdims(keep) {
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
  if (op == ReduceOp::kL1 || op == ReduceOp::kLogSum) {  // sum |x|; log of the sum
    const Reduction red(x, axes, keepdims);
    Tensor sum = te::ComputeReduce(x->name + ".sum", red.shape, te::ReduceKind::kSum, red.raxes,
                                   [&](const std::vector<Expr>& i) {
                                     Expr v = te::Read(x, red.InputIndex(i));
                                     if (op == ReduceOp::kLogSum) return v;
                                     return x->dtype.is_float() ? ir::Call::Make(x->dtype, "fabs", {v})
                                                                : ir::max(v, ir::cast(x->dtype, Expr(int64_t(0))) - v);
                                   });
    if (op == ReduceOp::kL1) return sum;
    return te::Compute(x->name + ".logsum", sum->shape, [&](const std::vector<Expr>& i) {
      return ir::Call::Make(ir::Type::Float(32), "log", {te::Read(sum, i)});
    });
  }
  if (op == ReduceOp::kLogSumExp) {
    // m + log(sum(exp(x - m))) with m the max, so nothing overflows; an all -inf row takes m = 0
    // and gives log(0) = -inf, as log(sum(exp(x))) does, never -inf - -inf = NaN.
    const Reduction red(x, axes, keepdims), again(x, axes, keepdims);
    const Expr minus_inf(-std::numeric_limits<float>::infinity());
    Tensor m = te::ComputeReduce(x->name + ".max", red.shape, te::ReduceKind::kMax, red.raxes,
                                 [&](const std::vector<Expr>& i) { return te::Read(x, red.InputIndex(i)); });
    Tensor shift = te::Compute(x->name + ".shift", m->shape, [&](const std::vector<Expr>& i) {
      Expr v = te::Read(m, i);
      return ir::select(v == minus_inf, Expr(0.0f), v);
    });
    Tensor sum = te::ComputeReduce(
        x->name + ".expsum", again.shape, te::ReduceKind::kSum, again.raxes, [&](const std::vector<Expr>& i) {
          return ir::Call::Make(ir::Type::Float(32), "exp", {te::Read(x, again.InputIndex(i)) - te::Read(shift, i)});
        });
    return te::Compute(x->name + ".logsumexp", sum->shape, [&](const std::vector<Expr>& i) {
      return te::Read(shift, i) + ir::Call::Make(ir::Type::Float(32), "log", {te::Read(sum, i)});
    });
  }
  if (op == ReduceOp::kL2) {  // sqrt of the sum of squares
    Tensor sum = Reduce(x, axes, keepdims, ReduceOp::kSumSquare);
    return te::Compute(x->name + ".l2", sum->shape, [&](const std::vector<Expr>& i) {
      return ir::Call::Make(ir::Type::Float(32), "sqrt", {te::Read(sum, i)});
    });
  }
  const Reduction red(x, axes, keepdims);
  // min(x) = -max(-x): the IR reduces by sum and max only.
  const bool negate = op == ReduceOp::kMin;
  auto negated = [&](const Expr& e) {
    return x->dtype.is_float() ? Expr(0.0f) - e : ir::cast(x->dtype, Expr(int64_t(0))) - e;
  };
  const te::ReduceKind kind = op == ReduceOp::kMax || negate ? te::ReduceKind::kMax
                              : op == ReduceOp::kProd        ? te::ReduceKind::kProd
                                                             : te::ReduceKind::kSum;
  Tensor r = te::ComputeReduce(x->name + ".reduce", red.shape, kind, red.raxes, [&](const std::vector<Expr>& i) {
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
  const Reduction red(x, axes, true);
  const Expr count = Expr(float(red.count));
  Tensor mean, sq_sum;
  if (axes.size() == 1) {  // over the last axis: lane-split reductions
    const int64_t n = x->shape.back();
    Tensor sum = LastAxisReduce(x->name + ".sum", red.shape, te::ReduceKind::kSum, n,
                                [&](const std::vector<Expr>& i, const Expr& r) { return te::Read(x, AtLast(i, r)); });
    mean =
        te::Compute(x->name + ".mean", red.shape, [&](const std::vector<Expr>& i) { return te::Read(sum, i) / count; });
    sq_sum = LastAxisReduce(x->name + ".sqsum", red.shape, te::ReduceKind::kSum, n,
                            [&](const std::vector<Expr>& i, const Expr& r) {
                              Expr c = te::Read(x, AtLast(i, r)) - te::Read(mean, i);
                              return c * c;
                            });
  } else {
    mean = ReduceMean(x, axes, true);
    sq_sum = te::ComputeReduce(x->name + ".sqsum", red.shape, te::ReduceKind::kSum, red.raxes,
                               [&](const std::vector<Expr>& i) {
                                 Expr c = te::Read(x, red.InputIndex(i)) - te::Read(mean, i);
                                 return c * c;
                               });
  }
  // The squared deviations come from x and the mean directly (not from `centered`): the generic
  // schedule then computes `centered` one row at a time (RowStages), read only by the output.
  Tensor centered = te::Compute(x->name + ".centered", x->shape, [&](const std::vector<Expr>& i) {
    std::vector<Expr> m = i;
    for (int64_t d : axes) m[size_t(d)] = Expr(0);
    return te::Read(x, i) - te::Read(mean, m);
  });
  Tensor var =
      te::Compute(x->name + ".var", red.shape, [&](const std::vector<Expr>& i) { return te::Read(sq_sum, i) / count; });
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

Tensor GroupNorm(const Tensor& x, const Tensor& scale, const Tensor& bias, int64_t groups, float epsilon) {
  const int64_t C = x->shape[1], per_group = C / groups;
  int64_t elements = per_group;
  for (size_t d = 2; d < x->shape.size(); ++d) elements *= x->shape[d];
  const Expr count = Expr(float(elements));
  const std::vector<int64_t> kept = {x->shape[0], groups};
  // The reduction axes of one group: its channels, then the spatial axes.
  auto group_axes = [&](const std::string& tag) {
    std::vector<te::IterVar> r = {te::MakeIterVar(tag + "c", per_group, true)};
    for (size_t d = 2; d < x->shape.size(); ++d)
      r.push_back(te::MakeIterVar(tag + std::to_string(d), x->shape[d], true));
    return r;
  };
  auto element = [&](const std::vector<Expr>& ng, const std::vector<te::IterVar>& r) {
    std::vector<Expr> idx = {ng[0], ng[1] * Expr(per_group) + te::AxisExpr(r[0])};
    for (size_t d = 1; d < r.size(); ++d) idx.push_back(te::AxisExpr(r[d]));
    return te::Read(x, idx);
  };
  const auto rsum = group_axes("rg"), rvar = group_axes("rv");
  Tensor sum = te::ComputeReduce(x->name + ".groupsum", kept, te::ReduceKind::kSum, rsum,
                                 [&](const std::vector<Expr>& i) { return element(i, rsum); });
  Tensor mean =
      te::Compute(x->name + ".groupmean", kept, [&](const std::vector<Expr>& i) { return te::Read(sum, i) / count; });
  // Two passes (mean, then squared deviations) as LayerNorm: no cancellation in E[x^2] - E[x]^2.
  Tensor dev =
      te::ComputeReduce(x->name + ".groupvar", kept, te::ReduceKind::kSum, rvar, [&](const std::vector<Expr>& i) {
        Expr c = element(i, rvar) - te::Read(mean, i);
        return c * c;
      });
  Tensor inv = te::Compute(x->name + ".groupinv", kept, [&](const std::vector<Expr>& i) {
    return Expr(1.0f) / ir::Call::Make(ir::Type::Float(32), "sqrt", {te::Read(dev, i) / count + Expr(epsilon)});
  });
  const bool per_channel = scale->shape[0] == C;
  return te::Compute(x->name + ".groupnorm", x->shape, [&](const std::vector<Expr>& i) {
    const std::vector<Expr> ng = {i[0], i[1] / Expr(per_group)};
    const std::vector<Expr> affine = {per_channel ? i[1] : ng[1]};
    return (te::Read(x, i) - te::Read(mean, ng)) * te::Read(inv, ng) * te::Read(scale, affine) + te::Read(bias, affine);
  });
}

Tensor LocalResponseNorm(const Tensor& x, int64_t size, float alpha, float beta, float bias) {
  const int64_t C = x->shape[1];
  te::IterVar r = te::MakeIterVar("rlrn", size, true);
  Tensor sum =
      te::ComputeReduce(x->name + ".lrnsum", x->shape, te::ReduceKind::kSum, {r}, [&](const std::vector<Expr>& i) {
        std::vector<Expr> idx = i;
        idx[1] = i[1] - Expr((size - 1) / 2) + te::AxisExpr(r);
        Expr v = te::ClampedRead(x, idx);
        return ir::select(idx[1] >= Expr(0) && idx[1] < Expr(C), v * v, Expr(0.0f));
      });
  return te::Compute(x->name + ".lrn", x->shape, [&](const std::vector<Expr>& i) {
    // base^-beta as exp(-beta log base): base >= bias > 0 for every model's attributes.
    Expr base = Expr(bias) + Expr(alpha / float(size)) * te::Read(sum, i);
    Expr log_base = ir::Call::Make(ir::Type::Float(32), "log", {base});
    return te::Read(x, i) * ir::Call::Make(ir::Type::Float(32), "exp", {Expr(-beta) * log_base});
  });
}

Tensor Softmax(const Tensor& x, int64_t first_axis, int64_t last_axis) {
  if (first_axis == last_axis && last_axis == int64_t(x->shape.size()) - 1 && x->shape.back() >= kLaneSplitMin) {
    // Over a long last axis: lane-split maximum and sum; the sum recomputes its exponentials
    // from x (vectorized) so the output's exponentials can be computed one row at a time.
    const int64_t n = x->shape.back();
    std::vector<int64_t> kept = x->shape;
    kept.back() = 1;
    auto row = [](std::vector<Expr> i) {
      i.back() = Expr(0);
      return i;
    };
    Tensor m = LastAxisReduce(x->name + ".max", kept, te::ReduceKind::kMax, n,
                              [&](const std::vector<Expr>& i, const Expr& r) { return te::Read(x, AtLast(i, r)); });
    Tensor s = LastAxisReduce(
        x->name + ".expsum", kept, te::ReduceKind::kSum, n, [&](const std::vector<Expr>& i, const Expr& r) {
          return ir::Call::Make(ir::Type::Float(32), "exp", {te::Read(x, AtLast(i, r)) - te::Read(m, i)});
        });
    Tensor e = te::Compute(x->name + ".exp", x->shape, [&](const std::vector<Expr>& i) {
      return ir::Call::Make(ir::Type::Float(32), "exp", {te::Read(x, i) - te::Read(m, row(i))});
    });
    return te::Compute(x->name + ".softmax", x->shape,
                       [&](const std::vector<Expr>& i) { return te::Read(e, i) / te::Read(s, row(i)); });
  }
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

Tensor LogSoftmax(const Tensor& x, int64_t first_axis, int64_t last_axis) {
  std::vector<int64_t> kept = x->shape;
  std::vector<int64_t> axes;
  for (int64_t d = first_axis; d <= last_axis; ++d) axes.push_back(d);
  Tensor lse = Reduce(x, axes, true, ReduceOp::kLogSumExp);  // kept as extent-1 axes
  return te::Compute(x->name + ".logsoftmax", x->shape, [&](const std::vector<Expr>& i) {
    std::vector<Expr> k = i;
    for (int64_t d : axes) k[size_t(d)] = Expr(0);
    return te::Read(x, i) - te::Read(lse, k);
  });
}

namespace {

// The row-major position of x's element over axes [first, last] within that block of axes.
Expr FlatPosition(const Tensor& x, const std::vector<Expr>& idx, int64_t first, int64_t last) {
  Expr pos(int64_t(0));
  for (int64_t d = first; d <= last; ++d) pos = pos * Expr(x->shape[size_t(d)]) + idx[size_t(d)];
  return pos;
}

// For each output index (x's with axes [first, last] removed or kept as 1), the row-major position
// of the first (or last) extreme element over those axes: max of x, then the smallest (largest)
// position holding it. Positions are int64; "smallest" is -max(-position).
Tensor ExtremePosition(const Tensor& x, int64_t first, int64_t last, bool keepdims, bool is_max, bool last_index) {
  std::vector<int64_t> axes;
  for (int64_t d = first; d <= last; ++d) axes.push_back(d);
  const Reduction red(x, axes, keepdims), again(x, axes, keepdims);
  auto value = [&](const Expr& v) {  // argmin is argmax of -x
    if (is_max) return v;
    return x->dtype.is_float() ? Expr(0.0f) - v : ir::cast(x->dtype, Expr(int64_t(0))) - v;
  };
  Tensor m = te::ComputeReduce(x->name + ".extreme", red.shape, te::ReduceKind::kMax, red.raxes,
                               [&](const std::vector<Expr>& i) { return value(te::Read(x, red.InputIndex(i))); });
  const ir::Type i64 = ir::Type::Int(64);
  Tensor pos = te::ComputeReduce(
      x->name + ".position", again.shape, te::ReduceKind::kMax, again.raxes, [&](const std::vector<Expr>& i) {
        const std::vector<Expr> idx = again.InputIndex(i);
        Expr p = ir::cast(i64, FlatPosition(x, idx, first, last));
        Expr hit = value(te::Read(x, idx)) == te::Read(m, i);
        // Not the extreme: the identity of max (the most negative int64).
        return ir::select(hit, last_index ? p : Expr(int64_t(0)) - p, Expr(std::numeric_limits<int64_t>::min()));
      });
  if (last_index) return pos;
  return te::Compute(x->name + ".first", pos->shape,
                     [&](const std::vector<Expr>& i) { return Expr(int64_t(0)) - te::Read(pos, i); });
}

}  // namespace

Tensor ArgReduce(const Tensor& x, int64_t axis, bool keepdims, bool is_max, bool last_index) {
  return ExtremePosition(x, axis, axis, keepdims, is_max, last_index);
}

Tensor Hardmax(const Tensor& x, int64_t first_axis, int64_t last_axis) {
  Tensor pos = ExtremePosition(x, first_axis, last_axis, true, true, false);
  return te::Compute(x->name + ".hardmax", x->shape, [&](const std::vector<Expr>& i) {
    std::vector<Expr> k = i;
    for (int64_t d = first_axis; d <= last_axis; ++d) k[size_t(d)] = Expr(0);
    Expr here = ir::cast(ir::Type::Int(64), FlatPosition(x, i, first_axis, last_axis));
    return ir::select(here == te::Read(pos, k), ir::cast(x->dtype, Expr(1.0f)), ir::cast(x->dtype, Expr(0.0f)));
  });
}

Tensor CumSum(const Tensor& x, int64_t axis, bool exclusive, bool reverse) {
  // out[i] = sum of x[k] along `axis` over k <= i (k < i exclusive; k >= i, k > i reversed): a
  // reduction over the whole axis with the others masked, O(n^2) in the axis length but one
  // kernel like every other reduction, tiled and vectorized by the same schedules.
  const int64_t n = x->shape[size_t(axis)];
  te::IterVar k = te::MakeIterVar("k", n, true);
  const Expr zero = x->dtype.is_float() ? Expr(0.0f) : ir::cast(x->dtype, Expr(int64_t(0)));
  return te::ComputeReduce(x->name + ".cumsum", x->shape, te::ReduceKind::kSum, {k}, [&](const std::vector<Expr>& i) {
    std::vector<Expr> at = i;
    at[size_t(axis)] = te::AxisExpr(k);
    const Expr& pos = i[size_t(axis)];
    const Expr kv = te::AxisExpr(k);
    const Expr included = reverse ? (exclusive ? kv > pos : kv >= pos) : (exclusive ? kv < pos : kv <= pos);
    return ir::select(included, te::Read(x, at), zero);
  });
}

Tensor Trilu(const Tensor& x, bool upper, int64_t k) {
  const size_t rank = x->shape.size();
  return te::Compute(x->name + ".trilu", x->shape, [&](const std::vector<Expr>& i) {
    Expr diff = i[rank - 1] - i[rank - 2];  // j - i
    Expr keep = upper ? diff >= Expr(k) : diff <= Expr(k);
    Expr zero = x->dtype.is_float() ? Expr(0.0f) : ir::cast(x->dtype, Expr(int64_t(0)));
    return ir::select(keep, te::Read(x, i), zero);
  });
}

}  // namespace tunefarm::compute
