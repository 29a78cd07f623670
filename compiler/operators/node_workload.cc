#include "compiler/operators/node_workload.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace tunefarm::compiler {

const IntegerOperands* IntegerOperandsOf(const std::string& op_type) {
  static const std::map<std::string, IntegerOperands> kOperands = {
      {"ConvInteger", {0, -1, 2, 1, -1, 3, -1, -1, -1}},    {"MatMulInteger", {0, -1, 2, 1, -1, 3, -1, -1, -1}},
      {"QLinearConv", {0, 1, 2, 3, 4, 5, 8, 6, 7}},         {"QLinearMatMul", {0, 1, 2, 3, 4, 5, -1, 6, 7}},
      {"com.microsoft.QGemm", {0, 1, 2, 3, 4, 5, 6, 7, 8}},
  };
  auto it = kOperands.find(op_type);
  return it == kOperands.end() ? nullptr : &it->second;
}

namespace {

using graph::DataType;

bool Is8Bit(DataType t) { return t == DataType::kUInt8 || t == DataType::kInt8; }

// The axis of b that runs along the output channels: a convolution's M (0), a product's columns
// (1), QGemm's transposed B's rows (0).
int OutputChannelAxis(const graph::Node& n) {
  if (n.op_type == "QLinearConv" || n.op_type == "ConvInteger") return 0;
  return n.op_type == "com.microsoft.QGemm" && n.GetInt("transB", 0) ? 0 : 1;
}

}  // namespace

Result<Int8Constants> Int8ConstantsOf(const graph::Graph& g, const graph::Node& n) {
  const IntegerOperands* in = IntegerOperandsOf(n.op_type);
  if (!in) return Status::InvalidArgument(n.op_type + " is not an integer convolution or product");
  auto present = [&](int i) { return i >= 0 && size_t(i) < n.inputs.size() && n.inputs[size_t(i)] >= 0; };
  auto value = [&](int i) -> const graph::Value& { return g.values[size_t(n.inputs[size_t(i)])]; };
  auto no = [](const std::string& why) { return Status::InvalidArgument(why); };
  if (!present(in->a) || !present(in->b)) return no("an operand is missing");
  const graph::Value& a = value(in->a);
  const graph::Value& b = value(in->b);
  if (!Is8Bit(a.dtype) || !Is8Bit(b.dtype)) return no("the operands are not 8-bit");
  const bool product = n.op_type == "QLinearMatMul" || n.op_type == "MatMulInteger";
  const bool activations = !b.constant;  // a batched product of two activations
  if (activations && !(product && a.dtype == b.dtype))
    return no("the weights are not a constant (nor the second operand of a product of one type)");
  const int axis = activations ? int(b.shape.size()) - 1 : OutputChannelAxis(n);
  if (b.shape.size() < 2) return no("the weights have fewer than 2 dimensions");
  const int64_t channels = b.shape[size_t(axis)];
  // A parameter's elements: one (per tensor) or, where per_channel, one per output channel.
  auto parameter = [&](int i, bool per_channel) -> Result<const graph::ConstantData*> {
    if (!present(i)) return static_cast<const graph::ConstantData*>(nullptr);
    const graph::Value& v = value(i);
    if (!v.constant) return no("input " + std::to_string(i) + " is not a constant");
    const int64_t elements = v.constant->num_elements();
    if (elements != 1 && !(per_channel && elements == channels))
      return no("input " + std::to_string(i) + " is not per tensor" + (per_channel ? " or per channel" : ""));
    return v.constant.get();
  };
  auto element = [](const graph::ConstantData* c, int64_t i) -> double {
    if (!c) return 0;
    const size_t at = c->num_elements() == 1 ? 0 : size_t(i);
    return c->dtype == DataType::kFloat32 ? double(c->f32[at]) : double(c->i64[at]);
  };
  Int8Constants k;
  if (present(in->a_zero) && !value(in->a_zero).constant) {
    const graph::Value& z = value(in->a_zero);
    int64_t elements = 1;
    for (int64_t d : z.shape) elements *= d;
    if (z.dtype != a.dtype || elements != 1) return no("the input's zero point is not one value of its type");
    k.a_zero_value = n.inputs[size_t(in->a_zero)];
  }
  TUNEFARM_ASSIGN_OR_RETURN(const graph::ConstantData* a_zero, parameter(k.a_zero_value >= 0 ? -1 : in->a_zero, false));
  TUNEFARM_ASSIGN_OR_RETURN(const graph::ConstantData* b_zero, parameter(in->b_zero, !activations));
  k.a_zero = int32_t(element(a_zero, 0));
  if (activations && k.a_zero_value >= 0) return no("the zero point of a batched product's input is not a constant");
  if (activations) k.b_zero = int32_t(element(b_zero, 0));
  // The weights minus their zero point, each within int8.
  const int64_t inner = [&] {
    int64_t p = 1;
    for (size_t d = size_t(axis) + 1; d < b.shape.size(); ++d) p *= b.shape[d];
    return p;
  }();
  for (int64_t i = 0; !activations && i < b.constant->num_elements(); ++i) {
    const int64_t v = b.constant->i64[size_t(i)] - int64_t(element(b_zero, (i / inner) % channels));
    if (v < -128 || v > 127) return no("a weight minus its zero point is outside int8");
    k.weights.push_back(int8_t(v));
  }
  if (present(in->bias)) {
    const graph::Value& bias = value(in->bias);
    if (!bias.constant || bias.dtype != DataType::kInt32 || bias.constant->num_elements() != channels)
      return no("the bias is not an int32 constant of one value per output channel");
    k.bias.assign(bias.constant->i64.begin(), bias.constant->i64.end());
  }
  k.requantized = present(in->y_scale);
  if (!k.requantized) {
    if (n.op_type == "com.microsoft.QGemm") return no("a QGemm without y_scale has a float output");
    return k;
  }
  TUNEFARM_ASSIGN_OR_RETURN(const graph::ConstantData* a_scale, parameter(in->a_scale, false));
  TUNEFARM_ASSIGN_OR_RETURN(const graph::ConstantData* b_scale, parameter(in->b_scale, !activations));
  TUNEFARM_ASSIGN_OR_RETURN(const graph::ConstantData* y_scale, parameter(in->y_scale, false));
  TUNEFARM_ASSIGN_OR_RETURN(const graph::ConstantData* y_zero, parameter(in->y_zero, false));
  if (!a_scale || !b_scale || !y_scale) return no("a scale is missing");
  k.y_zero = int32_t(element(y_zero, 0));
  k.y_signed = y_zero && y_zero->dtype == DataType::kInt8;
  const float alpha = n.op_type == "com.microsoft.QGemm" ? n.GetFloat("alpha", 1.0f) : 1.0f;
  k.y_scale = float(element(y_scale, 0));
  for (int64_t c = 0; c < channels; ++c) {
    // Formed as the untuned kernels form it (compute::Requantize; QGemm's alpha before the
    // division), so both round alike.
    float m = float(element(a_scale, 0)) * float(element(b_scale, c));
    if (alpha != 1.0f) m = m * alpha;
    m = m / k.y_scale;
    if (!std::isfinite(m)) return no("a requantization multiplier is not finite");
    k.multipliers.push_back(m);
  }
  if (n.inputs.size() > kFusedResidual) {
    const int r = int(kFusedResidual);
    if (!present(r) || activations) return no("a fused residual needs its value and constant weights");
    TUNEFARM_ASSIGN_OR_RETURN(const graph::ConstantData* r_scale, parameter(r + 1, false));
    TUNEFARM_ASSIGN_OR_RETURN(const graph::ConstantData* r_zero, parameter(r + 2, false));
    TUNEFARM_ASSIGN_OR_RETURN(const graph::ConstantData* sum_scale, parameter(r + 3, false));
    TUNEFARM_ASSIGN_OR_RETURN(const graph::ConstantData* sum_zero, parameter(r + 4, false));
    if (!r_scale || !sum_scale) return no("a fused residual's scale is missing");
    k.residual_value = n.inputs[kFusedResidual];
    k.residual_signed = value(r).dtype == DataType::kInt8;
    k.residual_scale = float(element(r_scale, 0));
    k.residual_zero = int32_t(element(r_zero, 0));
    k.sum_scale = float(element(sum_scale, 0));
    k.sum_zero = int32_t(element(sum_zero, 0));
    k.sum_signed = sum_zero && sum_zero->dtype == DataType::kInt8;
  }
  return k;
}

namespace {

// The window of a convolution whose shape inference canonicalized its attributes.
bool ConvWorkload(const graph::Node& n, const std::vector<int64_t>& x, const std::vector<int64_t>& k, Workload* w) {
  if (x.size() != 4 || k.size() != 4) return false;
  auto pads = n.GetInts("pads"), strides = n.GetInts("strides"), dil = n.GetInts("dilations");
  if (pads.size() != 4 || strides.size() != 2 || dil.size() != 2) return false;
  *w = Conv2dWorkload(x[0], x[1], x[2], x[3], k[0], k[2], k[3], strides[0], pads[0], dil[0], n.GetInt("group", 1));
  w->conv.stride_w = strides[1];
  w->conv.pad_left = pads[1];
  w->conv.pad_bottom = pads[2];
  w->conv.pad_right = pads[3];
  w->conv.dilation_w = dil[1];
  return true;
}

// An int8 task: a convolution, or a product by a constant 2-D matrix over its leading rows.
bool RecognizeInteger(const graph::Graph& g, const graph::Node& n, const IntegerOperands& in, Workload* w) {
  if (!Int8ConstantsOf(g, n).ok()) return false;
  const graph::Value& a = g.values[size_t(n.inputs[size_t(in.a)])];
  const std::vector<int64_t>& b = g.values[size_t(n.inputs[size_t(in.b)])].shape;
  const bool conv = n.op_type == "QLinearConv" || n.op_type == "ConvInteger";
  if (conv) {
    if (!ConvWorkload(n, a.shape, b, w)) return false;
  } else if (!g.values[size_t(n.inputs[size_t(in.b)])].constant) {
    // Two activations with the same batch dimensions: a batched product over them folded.
    const std::vector<int64_t>& x = a.shape;
    if (x.size() < 2 || x.size() != b.size() || !std::equal(x.begin(), x.end() - 2, b.begin()) ||
        x.back() != b[b.size() - 2]) {
      return false;
    }
    int64_t batch = 1;
    for (size_t d = 0; d + 2 < x.size(); ++d) batch *= x[d];
    *w = BatchMatmulWorkload(batch, x[x.size() - 2], x.back(), b.back());
  } else {
    if (a.shape.size() < 2 || b.size() != 2 || n.GetInt("transA", 0)) return false;
    const bool trans_b = n.GetInt("transB", 0) != 0;
    int64_t rows = 1;
    for (size_t d = 0; d + 1 < a.shape.size(); ++d) rows *= a.shape[d];
    if (rows < 1) return false;
    *w = DenseWorkload(rows, trans_b ? b[1] : b[0], trans_b ? b[0] : b[1]);
  }
  w->dtype = graph::DataTypeName(a.dtype);
  return true;
}

bool Recognize(const graph::Graph& g, const graph::Node& n, Workload* w) {
  auto value = [&](size_t i) -> const graph::Value& { return g.values[size_t(n.inputs[i])]; };
  if (const IntegerOperands* in = IntegerOperandsOf(n.op_type)) return RecognizeInteger(g, n, *in, w);
  if (n.op_type == "Conv") {
    if (n.inputs.size() < 2 || !value(1).constant || value(0).dtype != graph::DataType::kFloat32) return false;
    return ConvWorkload(n, value(0).shape, value(1).shape, w);
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
