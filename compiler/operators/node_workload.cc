#include "compiler/operators/node_workload.h"

#include <algorithm>

namespace tunefarm::compiler {

namespace {

bool Recognize(const graph::Graph& g, const graph::Node& n, Workload* w) {
  auto value = [&](size_t i) -> const graph::Value& { return g.values[size_t(n.inputs[i])]; };
  if (n.op_type == "Conv") {
    if (n.inputs.size() < 2 || !value(1).constant || value(0).dtype != graph::DataType::kFloat32) return false;
    auto x = value(0).shape, k = value(1).shape;
    if (x.size() != 4 || k.size() != 4) return false;
    auto pads = n.GetInts("pads"), strides = n.GetInts("strides"), dil = n.GetInts("dilations");
    if (pads.size() != 4 || strides.size() != 2 || dil.size() != 2) return false;
    int64_t groups = n.GetInt("group", 1);
    *w = Conv2dWorkload(x[0], x[1], x[2], x[3], k[0], k[2], k[3], strides[0], pads[0], dil[0], groups);
    w->conv.stride_w = strides[1];
    w->conv.pad_left = pads[1];
    w->conv.pad_bottom = pads[2];
    w->conv.pad_right = pads[3];
    w->conv.dilation_w = dil[1];
    return true;
  }
  bool gemm = n.op_type == "Gemm", matmul = n.op_type == "MatMul";
  // A MatMul of any rank >= 2 by a constant matrix is a dense layer over the rows of its leading
  // dimensions ([B, S, K] x [K, N]: B*S rows), as transformers' projections and sequence models'
  // heads are; the output keeps the input's leading dimensions (the same elements, row-major).
  if (!(gemm || matmul) || n.inputs.size() < 2 || n.inputs[0] < 0 || n.inputs[1] < 0) return false;
  const size_t rank_a = value(0).shape.size();
  if (value(1).constant && (rank_a == 2 || (matmul && rank_a > 2)) && value(1).shape.size() == 2 &&
      value(0).dtype == graph::DataType::kFloat32) {
    if (gemm && n.GetInt("transA", 0)) return false;  // a transposed activation: not a dense layer
    if (gemm && n.inputs.size() > 2 && n.inputs[2] >= 0) {
      // C becomes the template's per-output-channel bias (alpha and beta scale the packed
      // parameters at compile time), so it must be a constant that broadcasts along rows.
      const graph::Value& c = value(2);
      const int64_t out_features = n.GetInt("transB", 0) ? value(1).shape[0] : value(1).shape[1];
      if (!c.constant || c.constant->dtype != graph::DataType::kFloat32 || c.shape.size() > 2) return false;
      if (c.constant->num_elements() != 1 &&
          (c.shape.empty() || c.shape.back() != out_features || c.constant->num_elements() != out_features)) {
        return false;
      }
    }
    bool trans_b = gemm && n.GetInt("transB", 0);
    auto a = value(0).shape, b = value(1).shape;
    int64_t in = trans_b ? b[1] : b[0], out = trans_b ? b[0] : b[1];
    int64_t rows = 1;
    for (size_t d = 0; d + 1 < a.size(); ++d) rows *= a[d];
    if (rows < 1) return false;
    *w = DenseWorkload(rows, in, out);
    return true;
  }
  // A MatMul of two activations with the same batch dimensions (attention's Q K^T and A V over
  // [batch, heads, tokens, ...]): a batched product over the folded batch dimensions.
  const auto& a = value(0).shape;
  const auto& b = value(1).shape;
  if (matmul && !value(1).constant && value(0).dtype == graph::DataType::kFloat32 &&
      value(1).dtype == graph::DataType::kFloat32 && a.size() >= 2 && a.size() == b.size() &&
      std::equal(a.begin(), a.end() - 2, b.begin()) && a.back() == b[b.size() - 2]) {
    int64_t batch = 1;
    for (size_t d = 0; d + 2 < a.size(); ++d) batch *= a[d];
    *w = BatchMatmulWorkload(batch, a[a.size() - 2], a.back(), b.back());
    return true;
  }
  return false;
}

}  // namespace

bool NodeWorkload(const graph::Graph& g, const graph::Node& n, Workload* w) {
  if (!Recognize(g, n, w)) return false;
  w->implementation.clear();  // target-neutral: Implementations() lists the target's templates
  return true;
}

}  // namespace tunefarm::compiler
