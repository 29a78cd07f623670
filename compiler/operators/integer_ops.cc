// The integer family: ONNX's convolutions and matrix products over 8-bit integers.
//   ConvInteger, MatMulInteger     int32 out = sum (x - x_zero_point) * (w - w_zero_point)
//   QLinearConv, QLinearMatMul     the same sum (plus QLinearConv's int32 bias), requantized:
//                                  saturate(round(acc * x_scale * w_scale / y_scale) + y_zero_point)
// The products accumulate in int32, never in float: a float32 sum of 8-bit products stops being
// exact past 2^24 (a 3x3x512 convolution reaches 2^27), and ONNX Runtime's integer kernels are exact.
// Zero points and scales are per tensor, or per output channel for the weight (the convolution's
// M, the product's columns) and per row for MatMul's A. Padding contributes 0 after the zero point
// is subtracted, i.e. the input is padded with its zero point, as ONNX Runtime pads.
#include <algorithm>
#include <string>
#include <vector>

#include "compiler/compute/ops.h"
#include "compiler/ir/ir_operators.h"
#include "compiler/operators/infer_context.h"
#include "compiler/operators/kernel_inputs.h"
#include "compiler/operators/linear_shapes.h"
#include "compiler/operators/lower_api.h"
#include "compiler/operators/node_workload.h"
#include "compiler/operators/registry.h"
#include "compiler/operators/template_lowering.h"
#include "compiler/schedule/template_table.h"
#include "compiler/schedule/templates/template_util.h"

namespace tunefarm::operators {
namespace {

using graph::DataType;
using graph::Node;

bool Is8Bit(DataType t) { return t == DataType::kUInt8 || t == DataType::kInt8; }

// The inputs of one operator: where its operands, zero points and scales are.
struct QuantInputs {
  size_t a, a_scale, a_zero, b, b_scale, b_zero, y_scale, y_zero, bias;
};
constexpr size_t kAbsent = 99;
// ConvInteger / MatMulInteger: (a, b, a_zero_point, b_zero_point); no scales.
constexpr QuantInputs kIntegerInputs = {0, kAbsent, 2, 1, kAbsent, 3, kAbsent, kAbsent, kAbsent};
// QLinearConv / QLinearMatMul: (a, a_scale, a_zero_point, b, b_scale, b_zero_point, y_scale,
// y_zero_point[, bias]).
constexpr QuantInputs kQLinearInputs = {0, 1, 2, 3, 4, 5, 6, 7, 8};

bool Present(const NodeView& v, size_t i) { return i != kAbsent && v.HasInput(i); }

// How a quantization parameter is laid out: per tensor (one element), or one per index of an axis.
enum class ParamLayout { kPerTensor, kPerAxis };

// Checks a scale (float32) or zero point (the operand's type) of `role`: one element, or, where
// `per_axis_extent` > 0, a 1-D tensor of that many. Absent parameters are fine (zero points are
// optional; the callers require the scales).
Result<ParamLayout> CheckParameter(const NodeView& v, size_t i, const std::string& role, DataType dtype,
                                   int64_t per_axis_extent, const char* per_axis_what) {
  if (!Present(v, i)) return ParamLayout::kPerTensor;
  if (v.In(i).dtype != dtype) {
    return v.Fail(role + " must be " + graph::DataTypeName(dtype) + ", got " + graph::DataTypeName(v.In(i).dtype));
  }
  const std::vector<int64_t>& s = v.Shape(i);
  if (Product(s) == 1) return ParamLayout::kPerTensor;
  if (per_axis_extent > 0 && s.size() == 1 && s[0] == per_axis_extent) return ParamLayout::kPerAxis;
  std::string allowed = "a single value";
  if (per_axis_extent > 0) allowed += " or [" + std::to_string(per_axis_extent) + "] (" + per_axis_what + ")";
  return v.Fail(role + " " + ShapeStr(s) + " must be " + allowed);
}

// The parameters of the two operands and of the output; `a_rows`/`b_columns` are the per-axis
// extents each operand's parameters may have (0: per tensor only).
struct QuantLayout {
  ParamLayout a = ParamLayout::kPerTensor, b = ParamLayout::kPerTensor;
};
Result<QuantLayout> CheckQuantization(const NodeView& v, const QuantInputs& in, int64_t a_rows, const char* a_what,
                                      int64_t b_columns, const char* b_what) {
  const DataType a = v.In(in.a).dtype, b = v.In(in.b).dtype;
  if (!Is8Bit(a) || !Is8Bit(b)) {
    return v.Fail(std::string("takes uint8 or int8 operands, got ") + graph::DataTypeName(a) + " and " +
                  graph::DataTypeName(b));
  }
  for (size_t scale : {in.a_scale, in.b_scale, in.y_scale}) {
    if (scale != kAbsent && !v.HasInput(scale))
      return v.Fail("input " + std::to_string(scale) + " (a scale) is missing");
  }
  QuantLayout layout;
  TUNEFARM_ASSIGN_OR_RETURN(ParamLayout a_zero,
                            CheckParameter(v, in.a_zero, "the first operand's zero point", a, a_rows, a_what));
  TUNEFARM_ASSIGN_OR_RETURN(ParamLayout b_zero,
                            CheckParameter(v, in.b_zero, "the second operand's zero point", b, b_columns, b_what));
  layout.a = a_zero;
  layout.b = b_zero;
  if (in.a_scale != kAbsent) {
    TUNEFARM_ASSIGN_OR_RETURN(ParamLayout a_scale, CheckParameter(v, in.a_scale, "the first operand's scale",
                                                                  DataType::kFloat32, a_rows, a_what));
    TUNEFARM_ASSIGN_OR_RETURN(ParamLayout b_scale, CheckParameter(v, in.b_scale, "the second operand's scale",
                                                                  DataType::kFloat32, b_columns, b_what));
    TUNEFARM_RETURN_IF_ERROR(CheckParameter(v, in.y_scale, "the output's scale", DataType::kFloat32, 0, "").status());
    if (a_scale == ParamLayout::kPerAxis) layout.a = a_scale;
    if (b_scale == ParamLayout::kPerAxis) layout.b = b_scale;
  }
  return layout;
}

// The output type of a QLinear operator: its zero point's, uint8 without one.
Result<DataType> QLinearOutputType(const NodeView& v, const QuantInputs& in) {
  if (!Present(v, in.y_zero)) return DataType::kUInt8;
  const DataType t = v.In(in.y_zero).dtype;
  if (!Is8Bit(t))
    return v.Fail(std::string("the output's zero point must be uint8 or int8, got ") + graph::DataTypeName(t));
  TUNEFARM_RETURN_IF_ERROR(CheckParameter(v, in.y_zero, "the output's zero point", t, 0, "").status());
  return t;
}

// --- the convolutions -------------------------------------------------------------------------
Status InferIntegerConv(InferContext& cx, const QuantInputs& in, bool requantized) {
  TUNEFARM_ASSIGN_OR_RETURN(std::vector<int64_t> out, InferConvShape(cx, in.b, in.bias));
  TUNEFARM_RETURN_IF_ERROR(CheckQuantization(cx, in, 0, "", out[1], "one per output channel").status());
  if (Present(cx, in.bias) && cx.In(in.bias).dtype != DataType::kInt32) {
    return cx.Fail(std::string("the bias must be int32, got ") + graph::DataTypeName(cx.In(in.bias).dtype));
  }
  DataType out_type = DataType::kInt32;
  if (requantized) {
    TUNEFARM_ASSIGN_OR_RETURN(out_type, QLinearOutputType(cx, in));
  }
  cx.SetOut(0, out_type, out);
  return Status::OK();
}
Status InferConvInteger(InferContext& cx) { return InferIntegerConv(cx, kIntegerInputs, false); }
Status InferQLinearConv(InferContext& cx) { return InferIntegerConv(cx, kQLinearInputs, true); }

int64_t AxisOf(ParamLayout layout, int64_t axis) { return layout == ParamLayout::kPerAxis ? axis : -1; }

// The requantization of a QLinear operator's accumulator; a_axis/b_axis index the accumulator.
compute::Requantization RequantizationOf(const KernelInputs& k, const std::vector<ir::Tensor>& t, const QuantInputs& in,
                                         const QuantLayout& layout, int64_t a_axis, int64_t b_axis, ir::Type out) {
  compute::Requantization r;
  r.a_scale = k.Of(t, in.a_scale);
  r.b_scale = k.Of(t, in.b_scale);
  r.y_scale = k.Of(t, in.y_scale);
  r.y_zero_point = k.Of(t, in.y_zero);
  r.a_axis = AxisOf(layout.a, a_axis);
  r.b_axis = AxisOf(layout.b, b_axis);
  r.out = out;
  return r;
}

Status LowerIntegerConv(LowerApi& cx, const Node& n, const QuantInputs& in, bool requantized) {
  const std::vector<compiler::Workload> implementations = TunableImplementations(cx, n);
  if (!implementations.empty()) return LowerInt8Task(cx, n, implementations);
  const NodeView v(cx.graph(), n);
  const std::vector<int64_t> shape = cx.V(n.outputs[0]).shape;
  TUNEFARM_ASSIGN_OR_RETURN(QuantLayout layout, CheckQuantization(v, in, 0, "", shape[1], "one per output channel"));
  const compute::ConvParams window = ConvWindow(n);
  const KernelInputs k(n);
  const ir::Type out = ToIRType(cx.OutType(n));
  const ir::Type product = requantized ? ProductType(cx, n, in.y_zero) : out;
  return cx.EmitPlain(n, k.inputs(), [=](const std::vector<ir::Tensor>& t) {
    const ir::Tensor x = compute::SubtractZeroPoint(k.Of(t, in.a), k.Of(t, in.a_zero), -1);
    const ir::Tensor w = compute::SubtractZeroPoint(k.Of(t, in.b), k.Of(t, in.b_zero), AxisOf(layout.b, 0));
    ir::Tensor acc = compute::ConvDirect(x, w, k.Of(t, in.bias), window, shape);
    if (!requantized) return acc;
    const ir::Tensor q = compute::Requantize(acc, RequantizationOf(k, t, in, layout, -1, 1, product));
    return ClampToFusedActivation(AddFusedResidual(q, n, t, in.y_scale, out), n);
  });
}
Status LowerConvInteger(LowerApi& cx, const Node& n) { return LowerIntegerConv(cx, n, kIntegerInputs, false); }
Status LowerQLinearConv(LowerApi& cx, const Node& n) { return LowerIntegerConv(cx, n, kQLinearInputs, true); }

// --- the matrix products ----------------------------------------------------------------------
// Per-row parameters of A need a 2-D (or higher) A; per-column ones of B a 2-D (or higher) B.
int64_t Rows(const std::vector<int64_t>& a) { return a.size() >= 2 ? a[a.size() - 2] : 0; }
int64_t Columns(const std::vector<int64_t>& b) { return b.size() >= 2 ? b.back() : 0; }

Status InferIntegerMatMul(InferContext& cx, const QuantInputs& in, bool requantized) {
  if (!cx.HasInput(in.b)) return cx.Fail("the second operand is missing");
  TUNEFARM_ASSIGN_OR_RETURN(std::vector<int64_t> out, InferMatMulShape(cx, in.a, in.b));
  TUNEFARM_RETURN_IF_ERROR(CheckQuantization(cx, in, Rows(cx.Shape(in.a)), "one per row of the first operand",
                                             Columns(cx.Shape(in.b)), "one per column of the second operand")
                               .status());
  DataType out_type = DataType::kInt32;
  if (requantized) {
    TUNEFARM_ASSIGN_OR_RETURN(out_type, QLinearOutputType(cx, in));
  }
  cx.SetOut(0, out_type, out);
  return Status::OK();
}
Status InferMatMulInteger(InferContext& cx) { return InferIntegerMatMul(cx, kIntegerInputs, false); }
Status InferQLinearMatMul(InferContext& cx) { return InferIntegerMatMul(cx, kQLinearInputs, true); }

Status LowerIntegerMatMul(LowerApi& cx, const Node& n, const QuantInputs& in, bool requantized) {
  const std::vector<compiler::Workload> implementations = TunableImplementations(cx, n);
  if (!implementations.empty()) return LowerInt8Task(cx, n, implementations);
  const NodeView v(cx.graph(), n);
  const int64_t a_rank = int64_t(v.Shape(in.a).size()), b_rank = int64_t(v.Shape(in.b).size());
  TUNEFARM_ASSIGN_OR_RETURN(QuantLayout layout,
                            CheckQuantization(v, in, Rows(v.Shape(in.a)), "one per row of the first operand",
                                              Columns(v.Shape(in.b)), "one per column of the second operand"));
  const int64_t out_rank = int64_t(cx.V(n.outputs[0]).shape.size());
  const KernelInputs k(n);
  const ir::Type out = ToIRType(cx.OutType(n));
  const ir::Type product = requantized ? ProductType(cx, n, in.y_zero) : out;
  return cx.EmitPlain(n, k.inputs(), [=](const std::vector<ir::Tensor>& t) {
    const ir::Tensor a = compute::SubtractZeroPoint(k.Of(t, in.a), k.Of(t, in.a_zero), AxisOf(layout.a, a_rank - 2));
    const ir::Tensor b = compute::SubtractZeroPoint(k.Of(t, in.b), k.Of(t, in.b_zero), AxisOf(layout.b, b_rank - 1));
    ir::Tensor acc = compute::MatMul(a, b);
    if (!requantized) return acc;
    const ir::Tensor q =
        compute::Requantize(acc, RequantizationOf(k, t, in, layout, out_rank - 2, out_rank - 1, product));
    return ClampToFusedActivation(AddFusedResidual(q, n, t, in.y_scale, out), n);
  });
}
Status LowerMatMulInteger(LowerApi& cx, const Node& n) { return LowerIntegerMatMul(cx, n, kIntegerInputs, false); }
Status LowerQLinearMatMul(LowerApi& cx, const Node& n) { return LowerIntegerMatMul(cx, n, kQLinearInputs, true); }

}  // namespace

// A requantized output clamped to the bounds of the activation the QDQ rewrite fused (graph.h's
// NodeEpilogue on an integer node), or as it is.
ir::Tensor ClampToFusedActivation(const ir::Tensor& q, const Node& n) {
  if (n.epilogue.activation != graph::FusedActivation::kClip) return q;
  const ir::Type t = q->dtype;
  const int64_t lo = int64_t(n.epilogue.clip_min), hi = int64_t(n.epilogue.clip_max);
  return te::Compute(q->name + ".clamp", q->shape, [&](const std::vector<ir::Expr>& idx) {
    return ir::min(ir::max(te::Read(q, idx), ir::cast(t, ir::Expr(lo))), ir::cast(t, ir::Expr(hi)));
  });
}

ir::Tensor AddFusedResidual(const ir::Tensor& q, const Node& n, const std::vector<ir::Tensor>& tensors, size_t y_scale,
                            ir::Type out) {
  if (n.inputs.size() <= compiler::kFusedResidual) return q;
  const KernelInputs k(n);
  const size_t r = compiler::kFusedResidual;
  const ir::Tensor sum = compute::Binary(
      compute::Dequantize(q, k.Of(tensors, y_scale), k.Of(tensors, y_scale + 1), -1),
      compute::Dequantize(k.Of(tensors, r), k.Of(tensors, r + 1), k.Of(tensors, r + 2), -1), compute::BinaryKind::kAdd);
  return compute::Quantize(sum, k.Of(tensors, r + 3), k.Of(tensors, r + 4), -1, out);
}

ir::Type ProductType(LowerApi& cx, const Node& n, size_t y_zero) {
  const bool present = y_zero < n.inputs.size() && n.inputs[y_zero] >= 0;
  return ToIRType(present ? ToElementType(cx.V(n.inputs[y_zero]).dtype) : ElementType::kUInt8);
}

// --- int8 tasks ---------------------------------------------------------------------------------
namespace {

// The epilogue of an int8 task node: the input's zero point, the bias, and the requantization with
// the fused activation's bounds within the output type's range.
compiler::Epilogue Int8Epilogue(const Node& n, const compiler::Int8Constants& k) {
  compiler::Epilogue ep;
  ep.bias = !k.bias.empty();
  ep.input_zero_point = k.a_zero;
  ep.input_zero_point_argument = k.a_zero_value >= 0;
  ep.weight_zero_point = k.b_zero;
  if (!k.requantized) return ep;
  compiler::Requantize& r = ep.requantize;
  r.enabled = true;
  r.is_signed = k.y_signed;
  r.zero_point = k.y_zero;
  // The bounds are the final output's: the sum's type with a fused residual add.
  const bool out_signed = k.residual_value >= 0 ? k.sum_signed : k.y_signed;
  r.min = out_signed ? -128 : 0;
  r.max = out_signed ? 127 : 255;
  if (k.residual_value >= 0) {
    ep.residual = true;
    compiler::IntegerResidual& s = ep.integer_residual;
    s.enabled = true;
    s.residual_signed = k.residual_signed;
    s.sum_signed = k.sum_signed;
    s.scale = k.y_scale;
    s.residual_scale = k.residual_scale;
    s.sum_scale = k.sum_scale;
    s.residual_zero_point = k.residual_zero;
    s.sum_zero_point = k.sum_zero;
  }
  if (n.epilogue.activation == graph::FusedActivation::kClip) {
    r.min = std::max(r.min, int32_t(n.epilogue.clip_min));
    r.max = std::min(r.max, int32_t(n.epilogue.clip_max));
  }
  return ep;
}

// A product of two activations: both operands and the output in plain layouts, their batch
// dimensions folded (the kernel's [B, M, K] is the node's [..., M, K]: the same elements).
Status EmitInt8BatchMatmul(LowerApi& cx, const Node& n, const compiler::IntegerOperands& in,
                           const LowerApi::Choice& choice, compiler::KernelDef def, const compiler::Epilogue& ep,
                           const compiler::Int8Constants& k) {
  std::vector<int> args;
  for (int operand : {in.a, in.b}) {
    TUNEFARM_ASSIGN_OR_RETURN(int t, cx.Get(n.inputs[size_t(operand)], 0));
    args.push_back(t);
  }
  if (ep.requantize.enabled) {
    args.push_back(cx.ParamFloats(cx.V(n.outputs[0]).name + ".multipliers", def.args[2]->shape, k.multipliers));
  }
  const int out =
      cx.NewTensor(cx.V(n.outputs[0]).name, ArtifactTensor::kIntermediate, cx.OutType(n), cx.V(n.outputs[0]).shape);
  args.push_back(out);
  cx.Define(n.outputs[0], out, 0);
  AddTemplateKernel(cx, n, choice, std::move(def), ep, std::move(args));
  return Status::OK();
}

// -(zero point) * the sum of each output channel's weights, `weights` as the node holds them:
// [channels, ...] (a conv's, Gemm's with transB) or [..., channels] (MatMul's): what a dot-product
// kernel adds to its raw products (template_util.h).
std::vector<int32_t> Compensation(const std::vector<int8_t>& weights, int64_t channels, bool channels_first,
                                  int32_t zero_point) {
  std::vector<int32_t> sums(size_t(channels), 0);
  const size_t per_channel = weights.size() / size_t(channels);
  for (size_t e = 0; e < weights.size(); ++e) {
    sums[channels_first ? e / per_channel : e % size_t(channels)] += weights[e];
  }
  for (int32_t& s : sums) s *= -zero_point;
  return sums;
}

}  // namespace

// A QLinearConv, ConvInteger, QLinearMatMul, MatMulInteger or QGemm through the best of its
// tunable int8 implementations: the input read in the template's layout, the weights (their zero
// point subtracted) packed as int8, the int32 bias and the per-channel multipliers as parameters.
Status LowerInt8Task(LowerApi& cx, const Node& n, const std::vector<compiler::Workload>& implementations) {
  TUNEFARM_ASSIGN_OR_RETURN(compiler::Int8Constants k, compiler::Int8ConstantsOf(cx.graph(), n));
  TUNEFARM_ASSIGN_OR_RETURN(LowerApi::Choice choice, cx.ChooseImplementation(implementations));
  const compiler::Workload& w = choice.workload;
  TUNEFARM_ASSIGN_OR_RETURN(const compiler::TemplateRow* row, compiler::FindTemplateRow(w.implementation));
  const compiler::ConfigSpace space = row->get()->Space(w, cx.target());
  TUNEFARM_ASSIGN_OR_RETURN(compiler::Config cfg, space.Get(choice.config_index));
  const compiler::Epilogue ep = Int8Epilogue(n, k);
  compiler::KernelDef def = row->get()->Instantiate(w, ep, cfg, cx.target());
  const compiler::IntegerOperands& in = *compiler::IntegerOperandsOf(n.op_type);
  if (w.is_batch_matmul()) return EmitInt8BatchMatmul(cx, n, in, choice, std::move(def), ep, k);
  const graph::Value& b = cx.V(n.inputs[size_t(in.b)]);
  const bool is_conv = w.op == compiler::OpKind::kConv2d;
  // CPU convolutions keep activations in NCHW[x]c blocks (5-D); the CUDA templates in plain NCHW.
  const bool blocked = is_conv && def.args[0]->shape.size() == 5;
  const int64_t block = blocked ? def.args.back()->shape.back() : 0;
  std::vector<int> args;
  TUNEFARM_ASSIGN_OR_RETURN(int x, cx.Get(n.inputs[size_t(in.a)], blocked ? def.args[0]->shape.back() : 0));
  args.push_back(x);
  std::vector<int8_t> packed;
  switch (row->weights) {
    case compiler::WeightPacking::kConvBlocked:
      packed = PackConvWeights(k.weights, b.shape, def, /*depthwise=*/false);
      break;
    case compiler::WeightPacking::kDepthwiseBlocked:
      packed = PackConvWeights(k.weights, b.shape, def, /*depthwise=*/true);
      break;
    case compiler::WeightPacking::kConvAsStored:
      packed = k.weights;
      break;
    case compiler::WeightPacking::kDense:
      packed = PackDenseWeights(k.weights, n.GetInt("transB", 0) != 0, w.dense.in_features, w.dense.out_features,
                                def.args[1]->shape, def.weight_word);
      break;
    case compiler::WeightPacking::kWinograd:
    case compiler::WeightPacking::kNone:
      return cx.Fail(n, "template " + w.implementation + " computes no int8 weights");
  }
  // int32 words of four int8 or two int16 weights for the dot-product kernels (template_util.h),
  // else int8.
  const bool words = def.weight_word > 0;
  if (def.weight_word == 2) packed = WidenToInt16(packed);
  args.push_back(cx.AddParam(b.name + ".packed", words ? ElementType::kInt32 : ElementType::kInt8, def.args[1]->shape,
                             packed.data(), packed.size()));
  size_t at = 2;
  if (ep.bias) {
    const graph::Value& bias = cx.V(n.inputs[size_t(in.bias)]);
    args.push_back(
        cx.AddParam(bias.name, ElementType::kInt32, def.args[at++]->shape, k.bias.data(), k.bias.size() * 4));
  }
  if (ep.residual) {  // the fused add's other operand, in the output's layout
    TUNEFARM_ASSIGN_OR_RETURN(int r, cx.Get(k.residual_value, block));
    args.push_back(r);
    ++at;
  }
  if (ep.requantize.enabled) {
    args.push_back(cx.ParamFloats(cx.V(n.outputs[0]).name + ".multipliers", def.args[at++]->shape, k.multipliers));
  }
  if (ep.input_zero_point_argument) {
    TUNEFARM_ASSIGN_OR_RETURN(int zero, cx.Get(k.a_zero_value, 0));
    // A one-element tensor of any rank (a scalar, [1]) is the kernel's [1].
    args.push_back(cx.T(zero).shape == std::vector<int64_t>{1}
                       ? zero
                       : cx.View(zero, {1}, cx.V(n.outputs[0]).name + ".input_zero_point"));
  }
  if (std::find(def.roles.begin(), def.roles.end(), compiler::BufferRole::kCompensation) != def.roles.end()) {
    const bool channels_first = is_conv || n.GetInt("transB", 0) != 0;
    const std::vector<int32_t> compensation =
        Compensation(k.weights, is_conv ? b.shape[0] : w.dense.out_features, channels_first,
                     compiler::DotProductZeroPoint(w, ep, cx.target().int8_products));
    args.push_back(cx.AddParam(cx.V(n.outputs[0]).name + ".compensation", ElementType::kInt32,
                               def.args[def.args.size() - 2]->shape, compensation.data(), compensation.size() * 4));
  }
  // A dense layer over a product's leading dimensions writes [rows, N] into the node's [..., N].
  const int out = cx.NewTensor(cx.V(n.outputs[0]).name, ArtifactTensor::kIntermediate, cx.OutType(n),
                               is_conv ? def.args.back()->shape : cx.V(n.outputs[0]).shape);
  args.push_back(out);
  cx.Define(n.outputs[0], out, block);
  AddTemplateKernel(cx, n, choice, std::move(def), ep, std::move(args));
  return Status::OK();
}

std::vector<OperatorDef> IntegerOperators() {
  const std::vector<AttrSpec> window = {{"auto_pad", kString},   {"dilations", kInts}, {"group", kInt},
                                        {"kernel_shape", kInts}, {"pads", kInts},      {"strides", kInts}};
  return {
      {"ConvInteger", "integer", window, InferConvInteger, nullptr, LowerConvInteger,
       "uint8/int8; zero points per tensor (x) and per output channel (w); int32 accumulation", false, 2},
      {"QLinearConv", "integer", window, InferQLinearConv, nullptr, LowerQLinearConv,
       "uint8/int8; w's scale and zero point per output channel; int32 accumulation and bias, requantized with "
       "round half to even",
       false, 2},
      {"MatMulInteger",
       "integer",
       {},
       InferMatMulInteger,
       nullptr,
       LowerMatMulInteger,
       "uint8/int8; zero points per tensor, per row of A, per column of B; int32 accumulation",
       false,
       2},
      {"QLinearMatMul",
       "integer",
       {},
       InferQLinearMatMul,
       nullptr,
       LowerQLinearMatMul,
       "uint8/int8; scales and zero points per tensor, per row of A, per column of B; int32 accumulation, "
       "requantized with round half to even",
       false,
       2},
  };
}

}  // namespace tunefarm::operators
