// Data-movement operators: reshape, transpose, slice, concat, pad, gather and layout changes.
#include "compiler/compute/ops.h"
#include "compiler/ir/ir_operators.h"
#include "tunefarm/runtime/check.h"

namespace tunefarm::compute {

Tensor Reshape(const Tensor& x, const std::vector<int64_t>& shape) {
  return te::Compute(x->name + ".reshape", shape, [&](const std::vector<Expr>& i) {
    if (shape == x->shape) return te::Read(x, i);
    Expr flat(int64_t(0));
    for (size_t d = 0; d < shape.size(); ++d) flat = flat * Expr(shape[d]) + i[d];
    std::vector<Expr> idx(x->shape.size());
    for (size_t d = x->shape.size(); d-- > 0;) {
      idx[d] = d == 0 ? flat : flat % Expr(x->shape[d]);
      if (d > 0) flat = flat / Expr(x->shape[d]);
    }
    return te::Read(x, idx);
  });
}

Tensor Transpose(const Tensor& x, const std::vector<int64_t>& perm) {
  std::vector<int64_t> shape;
  shape.reserve(perm.size());
  for (int64_t p : perm) shape.push_back(x->shape[size_t(p)]);
  return te::Compute(x->name + ".transpose", shape, [&](const std::vector<Expr>& i) {
    std::vector<Expr> idx(perm.size());
    for (size_t d = 0; d < perm.size(); ++d) idx[size_t(perm[d])] = i[d];
    return te::Read(x, idx);
  });
}

Tensor StridedSlice(const Tensor& x, const std::vector<int64_t>& starts, const std::vector<int64_t>& steps,
                    const std::vector<int64_t>& out_shape) {
  return te::Compute(x->name + ".slice", out_shape, [&](const std::vector<Expr>& i) {
    std::vector<Expr> idx;
    for (size_t d = 0; d < i.size(); ++d) idx.push_back(Expr(starts[d]) + i[d] * Expr(steps[d]));
    return te::Read(x, idx);
  });
}

Tensor Concat(const std::vector<Tensor>& inputs, int64_t axis) {
  TUNEFARM_CHECK(!inputs.empty());
  std::vector<int64_t> shape = inputs[0]->shape;
  shape[size_t(axis)] = 0;
  for (const auto& t : inputs) shape[size_t(axis)] += t->shape[size_t(axis)];
  return te::Compute(inputs[0]->name + ".concat", shape, [&](const std::vector<Expr>& i) {
    // Built from the last input backwards: select(i < end_0, in_0, select(i < end_1, in_1, ...)).
    std::vector<int64_t> begins;
    int64_t offset = 0;
    for (const auto& t : inputs) {
      begins.push_back(offset);
      offset += t->shape[size_t(axis)];
    }
    Expr value;
    for (size_t k = inputs.size(); k-- > 0;) {
      if (inputs[k]->shape[size_t(axis)] == 0) continue;
      std::vector<Expr> idx = i;
      idx[size_t(axis)] = i[size_t(axis)] - Expr(begins[k]);
      Expr v = te::ClampedRead(inputs[k], idx);
      value = value.defined() ? ir::select(i[size_t(axis)] < Expr(begins[k] + inputs[k]->shape[size_t(axis)]), v, value)
                              : v;
    }
    return value;
  });
}

Expr ReadScalar(const Tensor& t) { return te::Read(t, std::vector<Expr>(t->shape.size(), Expr(0))); }

Tensor Pad(const Tensor& x, const std::vector<int64_t>& begin, const std::vector<int64_t>& end, PadMode mode,
           float value, const Tensor& value_tensor) {
  std::vector<int64_t> shape = x->shape;
  for (size_t d = 0; d < shape.size(); ++d) shape[d] += begin[d] + end[d];
  return te::Compute(x->name + ".pad", shape, [&](const std::vector<Expr>& i) {
    std::vector<Expr> idx;
    Expr inside;
    for (size_t d = 0; d < i.size(); ++d) {
      Expr r = i[d] - Expr(begin[d]);
      const int64_t n = x->shape[d];
      if (begin[d] != 0 || end[d] != 0) {
        Expr in_range = r >= Expr(0) && r < Expr(n);
        inside = inside.defined() ? (inside && in_range) : in_range;
        if (mode == PadMode::kReflect) {
          r = ir::select(r < Expr(0), Expr(0) - r, r);
          r = ir::select(r >= Expr(n), Expr(2 * (n - 1)) - r, r);
        } else if (mode == PadMode::kWrap) {
          r = r % Expr(n);  // the IR's integer modulo floors: -1 -> n - 1
        }
      }
      idx.push_back(r);
    }
    Expr v = te::ClampedRead(x, idx);
    if (mode != PadMode::kConstant || !inside.defined()) return v;
    Expr fill = value_tensor          ? ReadScalar(value_tensor)
                : x->dtype.is_float() ? Expr(value)
                                      : ir::cast(x->dtype, Expr(int64_t(value)));
    return ir::select(inside, v, fill);
  });
}

Tensor Gather(const Tensor& x, const Tensor& indices, int64_t axis) {
  std::vector<int64_t> shape(x->shape.begin(), x->shape.begin() + axis);
  shape.insert(shape.end(), indices->shape.begin(), indices->shape.end());
  shape.insert(shape.end(), x->shape.begin() + axis + 1, x->shape.end());
  const size_t r = indices->shape.size();
  return te::Compute(x->name + ".gather", shape, [&](const std::vector<Expr>& i) {
    std::vector<Expr> idx(i.begin(), i.begin() + axis);
    std::vector<Expr> at(i.begin() + axis, i.begin() + axis + int64_t(r));
    Expr k = te::Read(indices, at);
    if (k.type() != ir::Type::Int(64)) k = ir::cast(ir::Type::Int(64), k);
    const int64_t n = x->shape[size_t(axis)];
    // Negative indices count from the end; the clamp keeps an index out of range (which the executor
    // reports before the kernel runs, runtime::IndexCheck) from reading outside the table.
    k = ir::select(k < Expr(0), k + Expr(n), k);
    idx.push_back(ir::min(ir::max(k, Expr(int64_t(0))), Expr(std::max<int64_t>(n - 1, 0))));
    idx.insert(idx.end(), i.begin() + axis + int64_t(r), i.end());
    return te::Read(x, idx);
  });
}

Tensor GatherElements(const Tensor& x, const Tensor& indices, int64_t axis) {
  return te::Compute(x->name + ".gather_elements", indices->shape, [&](const std::vector<Expr>& i) {
    Expr k = te::Read(indices, i);
    if (k.type() != ir::Type::Int(64)) k = ir::cast(ir::Type::Int(64), k);
    const int64_t n = x->shape[size_t(axis)];
    k = ir::select(k < Expr(int64_t(0)), k + Expr(n), k);
    std::vector<Expr> idx = i;
    idx[size_t(axis)] = ir::min(ir::max(k, Expr(int64_t(0))), Expr(n - 1));
    return te::Read(x, idx);
  });
}

std::vector<int64_t> PhysicalShape(const std::vector<int64_t>& logical, int64_t block) {
  if (block == 0) return logical;
  TUNEFARM_CHECK(logical.size() == 4 && logical[1] % block == 0);
  return {logical[0], logical[1] / block, logical[2], logical[3], block};
}

Tensor ChangeLayout(const Tensor& x, const std::vector<int64_t>& logical, int64_t from_block, int64_t to_block) {
  return te::Compute(x->name + ".layout", PhysicalShape(logical, to_block), [&](const std::vector<Expr>& i) {
    Expr c = to_block ? i[1] * Expr(to_block) + i[4] : i[1];
    if (from_block == 0) return te::Read(x, {i[0], c, i[2], i[3]});
    return te::Read(x, {i[0], c / Expr(from_block), i[2], i[3], c % Expr(from_block)});
  });
}

}  // namespace tunefarm::compute
