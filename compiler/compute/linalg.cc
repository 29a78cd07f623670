// Untuned linear algebra: batched matmul, general Gemm, direct NCHW convolution.
#include <map>
#include <string>

#include "compiler/compute/ops.h"
#include "compiler/ir/ir_operators.h"
#include "tunefarm/runtime/check.h"

namespace tunefarm::compute {

Tensor MatMul(const Tensor& a, const Tensor& b) {
  // The generic schedule vectorizes the output's last axis only when 4 or more lanes divide it: a
  // product whose columns do not (ViT's attention scores, 197 x 197) would run scalar. B's columns
  // are padded with zeros to a multiple of 16 instead (a copy of k x n per batch, small beside the
  // m x k x n product), and the real columns copied out.
  if (b->shape.size() >= 2 && b->shape.back() >= 16 && b->shape.back() % 4 != 0) {
    const int64_t n = b->shape.back(), padded_n = (n + 15) / 16 * 16;
    std::vector<int64_t> padded_shape = b->shape;
    padded_shape.back() = padded_n;
    Tensor padded_b = te::Compute(b->name + ".padded", padded_shape, [&](const std::vector<Expr>& i) {
      std::vector<Expr> idx = i;
      idx.back() = ir::min(i.back(), Expr(n - 1));
      return ir::select(i.back() < Expr(n), te::Read(b, idx), ZeroOf(b->dtype));
    });
    Tensor product = MatMul(a, padded_b);
    std::vector<int64_t> shape = product->shape;
    shape.back() = n;
    return te::Compute(a->name + ".matmul", shape, [&](const std::vector<Expr>& i) { return te::Read(product, i); });
  }
  std::vector<int64_t> as = a->shape, bs = b->shape;
  const bool a_vec = as.size() == 1, b_vec = bs.size() == 1;
  if (a_vec) as.insert(as.begin(), 1);
  if (b_vec) bs.push_back(1);
  const int64_t m = as[as.size() - 2], k = as.back(), n = bs.back();
  TUNEFARM_CHECK(bs[bs.size() - 2] == k);
  std::vector<int64_t> abatch(as.begin(), as.end() - 2), bbatch(bs.begin(), bs.end() - 2);
  std::vector<int64_t> batch = BroadcastShape(abatch.empty() ? std::vector<int64_t>{1} : abatch,
                                              bbatch.empty() ? std::vector<int64_t>{1} : bbatch);
  if (abatch.empty() && bbatch.empty()) batch.clear();
  std::vector<int64_t> shape = batch;
  if (!a_vec) shape.push_back(m);
  if (!b_vec) shape.push_back(n);
  auto rk = te::MakeIterVar("k", k, true);
  return te::ComputeReduce(a->name + ".matmul", shape, te::ReduceKind::kSum, {rk}, [&](const std::vector<Expr>& i) {
    const size_t nb = batch.size();
    Expr row = a_vec ? Expr(0) : i[nb], col = b_vec ? Expr(0) : i[nb + (a_vec ? 0 : 1)];
    auto operand_index = [&](const std::vector<int64_t>& own_batch, const Expr& r, const Expr& c, bool vec, bool is_a) {
      std::vector<Expr> idx;
      size_t offset = nb - own_batch.size();
      for (size_t d = 0; d < own_batch.size(); ++d) idx.push_back(own_batch[d] == 1 ? Expr(0) : i[offset + d]);
      if (is_a) {
        if (!vec) idx.push_back(r);
        idx.push_back(c);
      } else {
        idx.push_back(r);
        if (!vec) idx.push_back(c);
      }
      return idx;
    };
    Expr kk = te::AxisExpr(rk);
    return te::Read(a, operand_index(abatch, row, kk, a_vec, true)) *
           te::Read(b, operand_index(bbatch, kk, col, b_vec, false));
  });
}

Tensor Gemm(const Tensor& a, const Tensor& b, const Tensor& c, bool trans_a, bool trans_b, float alpha, float beta) {
  const int64_t m = trans_a ? a->shape[1] : a->shape[0], k = trans_a ? a->shape[0] : a->shape[1];
  const int64_t n = trans_b ? b->shape[0] : b->shape[1];
  auto rk = te::MakeIterVar("k", k, true);
  Tensor prod =
      te::ComputeReduce(a->name + ".gemm", {m, n}, te::ReduceKind::kSum, {rk}, [&](const std::vector<Expr>& i) {
        Expr kk = te::AxisExpr(rk);
        Expr av = trans_a ? te::Read(a, {kk, i[0]}) : te::Read(a, {i[0], kk});
        Expr bv = trans_b ? te::Read(b, {i[1], kk}) : te::Read(b, {kk, i[1]});
        return av * bv;
      });
  return te::Compute(a->name + ".gemm_out", {m, n}, [&](const std::vector<Expr>& i) {
    Expr v = te::Read(prod, i);
    if (alpha != 1.0f) v = v * Expr(alpha);
    if (!c || beta == 0.0f) return v;
    std::vector<Expr> idx;
    size_t offset = 2 - c->shape.size();
    for (size_t d = 0; d < c->shape.size(); ++d) idx.push_back(c->shape[d] == 1 ? Expr(0) : i[offset + d]);
    Expr cv = te::Read(c, idx);
    return v + (beta == 1.0f ? cv : cv * Expr(beta));
  });
}

Tensor ConvDirect(const Tensor& x, const Tensor& w, const Tensor& bias, const ConvParams& p,
                  const std::vector<int64_t>& out_shape) {
  const size_t sp = x->shape.size() - 2;
  const int64_t cg = w->shape[1], kg = out_shape[1] / p.groups;
  std::vector<te::IterVar> raxes = {te::MakeIterVar("rc", cg, true)};
  for (size_t d = 0; d < sp; ++d) raxes.push_back(te::MakeIterVar("r" + std::to_string(d), w->shape[2 + d], true));
  Tensor conv =
      te::ComputeReduce(x->name + ".conv", out_shape, te::ReduceKind::kSum, raxes, [&](const std::vector<Expr>& i) {
        std::vector<Expr> xi = {i[0], (i[1] / Expr(kg)) * Expr(cg) + te::AxisExpr(raxes[0])};
        std::vector<Expr> wi = {i[1], te::AxisExpr(raxes[0])};
        Expr inside;
        for (size_t d = 0; d < sp; ++d) {
          Expr pos =
              i[2 + d] * Expr(p.strides[d]) + te::AxisExpr(raxes[1 + d]) * Expr(p.dilations[d]) - Expr(p.pads_begin[d]);
          Expr ok = pos >= Expr(0) && pos < Expr(x->shape[2 + d]);
          inside = inside.defined() ? (inside && ok) : ok;
          xi.push_back(pos);
          wi.push_back(te::AxisExpr(raxes[1 + d]));
        }
        Expr xv = ir::select(inside, te::ClampedRead(x, xi), ZeroOf(x->dtype));
        return xv * te::Read(w, wi);
      });
  if (!bias) return conv;
  return te::Compute(x->name + ".conv_bias", out_shape,
                     [&](const std::vector<Expr>& i) { return te::Read(conv, i) + te::Read(bias, {i[1]}); });
}

Tensor ConvTransposeDirect(const Tensor& x, const Tensor& w, const Tensor& bias, const ConvParams& p,
                           const std::vector<int64_t>& out_shape) {
  const size_t sp = x->shape.size() - 2;
  const int64_t cg = x->shape[1] / p.groups, mg = w->shape[1];
  std::vector<te::IterVar> raxes = {te::MakeIterVar("rc", cg, true)};
  for (size_t d = 0; d < sp; ++d) raxes.push_back(te::MakeIterVar("r" + std::to_string(d), w->shape[2 + d], true));
  Tensor conv = te::ComputeReduce(
      x->name + ".conv_transpose", out_shape, te::ReduceKind::kSum, raxes, [&](const std::vector<Expr>& i) {
        const Expr ic = (i[1] / Expr(mg)) * Expr(cg) + te::AxisExpr(raxes[0]);
        std::vector<Expr> xi = {i[0], ic};
        std::vector<Expr> wi = {ic, i[1] % Expr(mg)};
        Expr inside;
        for (size_t d = 0; d < sp; ++d) {
          // The input position whose tap k lands on output o: (o + pad - k * dilation) / stride, when exact.
          const Expr num = i[2 + d] + Expr(p.pads_begin[d]) - te::AxisExpr(raxes[1 + d]) * Expr(p.dilations[d]);
          const Expr pos = num / Expr(p.strides[d]);
          Expr ok = num >= Expr(0) && pos < Expr(x->shape[2 + d]);
          if (p.strides[d] > 1) ok = ok && num % Expr(p.strides[d]) == Expr(0);
          inside = inside.defined() ? (inside && ok) : ok;
          xi.push_back(pos);
          wi.push_back(te::AxisExpr(raxes[1 + d]));
        }
        return ir::select(inside, te::ClampedRead(x, xi), ZeroOf(x->dtype)) * te::Read(w, wi);
      });
  if (!bias) return conv;
  return te::Compute(x->name + ".conv_transpose_bias", out_shape,
                     [&](const std::vector<Expr>& i) { return te::Read(conv, i) + te::Read(bias, {i[1]}); });
}

Tensor Einsum(const std::vector<Tensor>& inputs, const std::vector<std::string>& input_labels,
              const std::string& output_labels) {
  std::map<char, int64_t> extent;
  for (size_t k = 0; k < inputs.size(); ++k) {
    for (size_t d = 0; d < input_labels[k].size(); ++d) extent[input_labels[k][d]] = inputs[k]->shape[d];
  }
  std::vector<int64_t> shape;
  for (char c : output_labels) shape.push_back(extent.at(c));
  // Labels that appear in no output dimension are summed over.
  std::vector<te::IterVar> raxes;
  std::map<char, size_t> reduce_at;
  for (const auto& [c, n] : extent) {
    if (output_labels.find(c) != std::string::npos) continue;
    reduce_at[c] = raxes.size();
    raxes.push_back(te::MakeIterVar(std::string("r_") + c, n, true));
  }
  auto body = [&](const std::vector<Expr>& i) {
    auto index_of = [&](char c) {
      const size_t at = output_labels.find(c);
      return at != std::string::npos ? i[at] : te::AxisExpr(raxes[reduce_at.at(c)]);
    };
    Expr product;
    for (size_t k = 0; k < inputs.size(); ++k) {
      std::vector<Expr> idx;
      for (char c : input_labels[k]) idx.push_back(index_of(c));
      Expr v = te::Read(inputs[k], idx);
      product = product.defined() ? product * v : v;
    }
    return product;
  };
  if (raxes.empty()) return te::Compute(inputs[0]->name + ".einsum", shape, body);
  return te::ComputeReduce(inputs[0]->name + ".einsum", shape, te::ReduceKind::kSum, raxes, body);
}

}  // namespace tunefarm::compute
