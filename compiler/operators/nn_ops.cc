// Neural-network operators: Conv, ConvTranspose, Gemm, MatMul, Einsum (tunable templates where the
// workload fits, a direct untuned kernel otherwise) and pooling; normalization, Softmax and Dropout
// are norm_ops.cc's.
#include <algorithm>
#include <cctype>
#include <map>

#include "compiler/compute/ops.h"
#include "compiler/ir/ir_operators.h"
#include "compiler/operators/constant_eval.h"
#include "compiler/operators/conv_transpose_window.h"
#include "compiler/operators/infer_context.h"
#include "compiler/operators/linear_shapes.h"
#include "compiler/operators/lower_api.h"
#include "compiler/operators/node_workload.h"
#include "compiler/operators/registry.h"
#include "compiler/operators/template_lowering.h"
#include "compiler/schedule/op_template.h"
#include "compiler/schedule/template_table.h"
#include "tunefarm/compiler/kernel.h"
#include "tunefarm/compiler/winograd.h"

namespace tunefarm::operators {

Result<TransposeWindow> ParseConvTranspose(const NodeView& v) {
  const graph::Node& n = v.node();
  const auto& x = v.Shape(0);
  if (!v.HasInput(1)) return v.Fail("missing the weight input");
  const auto& w = v.Shape(1);
  if (x.size() < 3 || x.size() > 5)
    return v.Fail("ConvTranspose needs an input of rank 3 to 5 (N, C, spatial...), got " + ShapeStr(x));
  if (w.size() != x.size())
    return v.Fail("weight " + ShapeStr(w) + " does not match the input rank " + std::to_string(x.size()));
  const size_t sp = x.size() - 2;
  TransposeWindow t;
  t.params.groups = n.GetInt("group", 1);
  if (t.params.groups < 1 || x[1] != w[0] || w[0] % t.params.groups != 0) {
    return v.Fail("input channels " + std::to_string(x[1]) + " do not match weight " + ShapeStr(w) + " with group " +
                  std::to_string(t.params.groups));
  }
  const std::vector<int64_t> kernel = n.GetInts("kernel_shape", std::vector<int64_t>(w.begin() + 2, w.end()));
  t.params.strides = n.GetInts("strides", std::vector<int64_t>(sp, 1));
  t.params.dilations = n.GetInts("dilations", std::vector<int64_t>(sp, 1));
  const std::vector<int64_t> output_padding = n.GetInts("output_padding", std::vector<int64_t>(sp, 0));
  if (kernel.size() != sp || t.params.strides.size() != sp || t.params.dilations.size() != sp ||
      output_padding.size() != sp) {
    return v.Fail("kernel_shape, strides, dilations and output_padding must have " + std::to_string(sp) + " values");
  }
  if (!std::equal(kernel.begin(), kernel.end(), w.begin() + 2)) {
    return v.Fail("kernel_shape " + ShapeStr(kernel) + " differs from the weight " + ShapeStr(w));
  }
  for (size_t i = 0; i < sp; ++i) {
    const int64_t s = t.params.strides[i], d = t.params.dilations[i];
    if (s < 1 || d < 1 || s > kMaxWindowAttribute || d > kMaxWindowAttribute) {
      return v.Fail("strides " + ShapeStr(t.params.strides) + " and dilations " + ShapeStr(t.params.dilations) +
                    " must be in [1, " + std::to_string(kMaxWindowAttribute) + "]");
    }
    if (output_padding[i] < 0 || output_padding[i] >= std::max(s, d)) {
      return v.Fail("output_padding " + ShapeStr(output_padding) + " must be below the stride or dilation");
    }
  }
  std::vector<int64_t> natural(sp);  // the extent with no padding
  for (size_t i = 0; i < sp; ++i) {
    natural[i] = t.params.strides[i] * (x[2 + i] - 1) + output_padding[i] + (kernel[i] - 1) * t.params.dilations[i] + 1;
  }
  const std::string auto_pad = n.GetString("auto_pad", "NOTSET");
  std::vector<int64_t> wanted = n.GetInts("output_shape");
  if (wanted.size() == sp + 2) wanted.erase(wanted.begin(), wanted.begin() + 2);
  if (!wanted.empty() && wanted.size() != sp) return v.Fail("output_shape must have " + std::to_string(sp) + " values");
  if (wanted.empty() && (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER")) {
    for (size_t i = 0; i < sp; ++i) wanted.push_back(x[2 + i] * t.params.strides[i]);
  }
  std::vector<int64_t> pads(2 * sp, 0);
  if (!wanted.empty()) {
    for (size_t i = 0; i < sp; ++i) {
      if (wanted[i] < 1 || wanted[i] > (int64_t(1) << 31))
        return v.Fail("output_shape " + ShapeStr(wanted) + " is out of range");
      const int64_t total = natural[i] - wanted[i];
      const int64_t half = total >= 0 ? total / 2 : -((1 - total) / 2);  // floor(total / 2), as ONNX's reference
      pads[i] = auto_pad == "SAME_UPPER" ? half : total - half;
      pads[sp + i] = total - pads[i];
    }
  } else if (auto_pad == "NOTSET") {
    pads = n.GetInts("pads", pads);
    if (pads.size() != 2 * sp) return v.Fail("pads must have " + std::to_string(2 * sp) + " values");
    for (int64_t p : pads) {
      if (p < 0 || p > kMaxWindowAttribute)
        return v.Fail("pads " + ShapeStr(pads) + " must be in [0, " + std::to_string(kMaxWindowAttribute) + "]");
    }
  } else if (auto_pad != "VALID") {
    return v.Fail("unsupported auto_pad '" + auto_pad + "'");
  }
  for (size_t i = 0; i < sp; ++i) {
    t.params.pads_begin.push_back(pads[i]);
    t.out.push_back(natural[i] - pads[i] - pads[sp + i]);
    if (t.out.back() < 1) return v.Fail("the padding leaves no output (extent " + std::to_string(t.out.back()) + ")");
  }
  return t;
}

namespace {

using graph::Attribute;
using graph::DataType;
using graph::Node;

// --- windows (Conv, pooling) ----------------------------------------------------------------
// Output extent of a windowed op along one spatial axis.
Result<int64_t> WindowOut(int64_t in, int64_t k, int64_t stride, int64_t dil, int64_t pad_begin, int64_t pad_end,
                          bool ceil_mode) {
  const int64_t eff = dil * (k - 1) + 1;
  const int64_t span = in + pad_begin + pad_end - eff;
  if (k < 1 || dil < 1) return Status::InvalidArgument("kernel and dilation must be positive");
  if (span < 0 || stride < 1) return Status::InvalidArgument("window larger than the padded input");
  return (ceil_mode ? (span + stride - 1) / stride : span / stride) + 1;
}

// Resolves ONNX auto_pad into explicit pads [begin..., end...].
Status ResolvePads(const Node& n, const std::vector<int64_t>& in, const std::vector<int64_t>& kernel,
                   const std::vector<int64_t>& strides, const std::vector<int64_t>& dil, std::vector<int64_t>* pads) {
  const size_t sp = kernel.size();
  const std::string auto_pad = n.GetString("auto_pad", "NOTSET");
  if (auto_pad == "NOTSET") {
    *pads = n.GetInts("pads", std::vector<int64_t>(2 * sp, 0));
    if (pads->size() != 2 * sp) return Status::InvalidArgument("pads must have " + std::to_string(2 * sp) + " values");
    for (int64_t p : *pads) {
      if (p < 0) return Status::InvalidArgument("negative pads");
    }
    return Status::OK();
  }
  pads->assign(2 * sp, 0);
  if (auto_pad == "VALID") return Status::OK();
  if (auto_pad != "SAME_UPPER" && auto_pad != "SAME_LOWER")
    return Status::InvalidArgument("unsupported auto_pad '" + auto_pad + "'");
  for (size_t i = 0; i < sp; ++i) {
    const int64_t out = (in[i] + strides[i] - 1) / strides[i];
    const int64_t total = std::max<int64_t>(0, (out - 1) * strides[i] + dil[i] * (kernel[i] - 1) + 1 - in[i]);
    const int64_t small = total / 2, big = total - small;
    (*pads)[i] = auto_pad == "SAME_UPPER" ? small : big;
    (*pads)[i + sp] = auto_pad == "SAME_UPPER" ? big : small;
  }
  return Status::OK();
}

// Writes the resolved window back as plain attributes (auto_pad becomes explicit pads), so the
// lowering and the workload read one form.
void Canonicalize(Node* n, const std::vector<int64_t>& kernel, const std::vector<int64_t>& strides,
                  const std::vector<int64_t>& dil, const std::vector<int64_t>& pads) {
  auto set = [&](const char* name, const std::vector<int64_t>& v) {
    Attribute a;
    a.kind = Attribute::kInts;
    a.ints = v;
    n->attrs[name] = a;
  };
  set("kernel_shape", kernel);
  set("strides", strides);
  set("dilations", dil);
  set("pads", pads);
  n->attrs.erase("auto_pad");
}

}  // namespace

Result<std::vector<int64_t>> InferWindow(InferContext& cx, std::vector<int64_t> kernel, bool dilated, bool ceil_mode) {
  const auto& x = cx.Shape(0);
  const size_t sp = x.size() - 2;
  std::vector<int64_t> strides = cx.node().GetInts("strides", std::vector<int64_t>(sp, 1));
  std::vector<int64_t> dil =
      dilated ? cx.node().GetInts("dilations", std::vector<int64_t>(sp, 1)) : std::vector<int64_t>(sp, 1);
  if (kernel.size() != sp || strides.size() != sp || dil.size() != sp) {
    return cx.Fail("kernel_shape, strides and dilations must have " + std::to_string(sp) + " values");
  }
  for (size_t i = 0; i < sp; ++i) {
    if (kernel[i] < 1 || strides[i] < 1 || dil[i] < 1) {
      return cx.Fail("kernel_shape " + ShapeStr(kernel) + ", strides " + ShapeStr(strides) + " and dilations " +
                     ShapeStr(dil) + " must be positive");
    }
    if (kernel[i] > kMaxWindowAttribute || strides[i] > kMaxWindowAttribute || dil[i] > kMaxWindowAttribute) {
      return cx.Fail("kernel_shape " + ShapeStr(kernel) + ", strides " + ShapeStr(strides) + " and dilations " +
                     ShapeStr(dil) + " must be at most " + std::to_string(kMaxWindowAttribute));
    }
  }
  std::vector<int64_t> pads;
  Status s = ResolvePads(cx.node(), std::vector<int64_t>(x.begin() + 2, x.end()), kernel, strides, dil, &pads);
  if (!s.ok()) return cx.Fail(s.message());
  for (int64_t p : pads) {
    if (p > kMaxWindowAttribute) {
      return cx.Fail("pads " + ShapeStr(pads) + " must be at most " + std::to_string(kMaxWindowAttribute));
    }
  }
  Canonicalize(&cx.mutable_node(), kernel, strides, dil, pads);
  std::vector<int64_t> out;
  for (size_t i = 0; i < sp; ++i) {
    auto o = WindowOut(x[2 + i], kernel[i], strides[i], dil[i], pads[i], pads[sp + i], ceil_mode);
    if (!o.ok()) return cx.Fail(o.status().message());
    out.push_back(*o);
  }
  return out;
}

// --- Conv -----------------------------------------------------------------------------------

Result<std::vector<int64_t>> InferConvShape(InferContext& cx, size_t weight, size_t bias) {
  const auto& x = cx.Shape(0);
  if (!cx.HasInput(weight)) return cx.Fail("missing the weight input");
  const auto& w = cx.Shape(weight);
  if (x.size() < 3 || x.size() > 5)
    return cx.Fail("Conv needs an input of rank 3 to 5 (N, C, spatial...), got " + ShapeStr(x));
  if (w.size() != x.size())
    return cx.Fail("Conv weight " + ShapeStr(w) + " does not match the input rank " + std::to_string(x.size()));
  const int64_t group = cx.node().GetInt("group", 1);
  if (group < 1 || x[1] != w[1] * group || w[0] % group != 0) {
    return cx.Fail("input channels " + std::to_string(x[1]) + " do not match weight " + ShapeStr(w) + " with group " +
                   std::to_string(group));
  }
  if (cx.HasInput(bias) && (cx.Shape(bias).size() != 1 || cx.Shape(bias)[0] != w[0])) {
    return cx.Fail("bias " + ShapeStr(cx.Shape(bias)) + " must be [" + std::to_string(w[0]) + "]");
  }
  std::vector<int64_t> kernel = cx.node().GetInts("kernel_shape", std::vector<int64_t>(w.begin() + 2, w.end()));
  if (kernel.size() == w.size() - 2 && !std::equal(kernel.begin(), kernel.end(), w.begin() + 2)) {
    return cx.Fail("kernel_shape " + ShapeStr(kernel) + " differs from the weight " + ShapeStr(w));
  }
  TUNEFARM_ASSIGN_OR_RETURN(std::vector<int64_t> spatial, InferWindow(cx, kernel, true, false));
  std::vector<int64_t> out = {x[0], w[0]};
  out.insert(out.end(), spatial.begin(), spatial.end());
  return out;
}

compute::ConvParams ConvWindow(const Node& n) {
  compute::ConvParams cp;
  cp.strides = n.GetInts("strides");
  cp.dilations = n.GetInts("dilations");
  const auto pads = n.GetInts("pads");
  cp.pads_begin.assign(pads.begin(), pads.begin() + int64_t(pads.size() / 2));
  cp.groups = n.GetInt("group", 1);
  return cp;
}

compute::PoolParams PoolWindow(const Node& n, const std::vector<int64_t>& spatial_axes, bool is_max) {
  compute::PoolParams p;
  p.is_max = is_max;
  p.spatial_axes = spatial_axes;
  p.kernel = n.GetInts("kernel_shape");
  p.strides = n.GetInts("strides");
  p.dilations = n.GetInts("dilations");
  const auto pads = n.GetInts("pads");
  p.pads_begin.assign(pads.begin(), pads.begin() + int64_t(spatial_axes.size()));
  p.pads_end.assign(pads.begin() + int64_t(spatial_axes.size()), pads.end());
  p.count_include_pad = n.GetInt("count_include_pad", 0) != 0;
  return p;
}

namespace {

Status InferConv(InferContext& cx) {
  TUNEFARM_ASSIGN_OR_RETURN(std::vector<int64_t> out, InferConvShape(cx, 1, 2));
  cx.SetOut(0, DataType::kFloat32, out);
  return Status::OK();
}

// The untuned activation a fused node applies last.
compute::UnaryParams FusedActivation(const Node& n) {
  compute::UnaryParams p;
  if (n.epilogue.activation == graph::FusedActivation::kRelu) p.kind = compute::UnaryKind::kRelu;
  if (n.epilogue.activation == graph::FusedActivation::kGelu) p.kind = compute::UnaryKind::kGelu;
  if (n.epilogue.activation == graph::FusedActivation::kGeluTanh) p.kind = compute::UnaryKind::kGeluTanh;
  if (n.epilogue.activation == graph::FusedActivation::kClip) {
    p.kind = compute::UnaryKind::kClip;
    p.lo = n.epilogue.clip_min;
    p.hi = n.epilogue.clip_max;
  }
  return p;
}

compiler::Epilogue TemplateEpilogue(const Node& n) {
  compiler::Epilogue ep;
  ep.bias = n.inputs.size() > 2 && n.inputs[2] >= 0;
  ep.residual = n.inputs.size() > 3 && n.inputs[3] >= 0;
  switch (n.epilogue.activation) {
    case graph::FusedActivation::kNone:
      break;
    case graph::FusedActivation::kRelu:
      ep.activation = compiler::Activation::kRelu;
      break;
    case graph::FusedActivation::kClip:
      ep.activation = n.epilogue.clip_min == 0.0f && n.epilogue.clip_max == 6.0f ? compiler::Activation::kRelu6
                                                                                 : compiler::Activation::kClip;
      ep.clip_min = n.epilogue.clip_min;
      ep.clip_max = n.epilogue.clip_max;
      break;
    case graph::FusedActivation::kPRelu:
      ep.activation = compiler::Activation::kPRelu;
      break;
    case graph::FusedActivation::kGelu:
      ep.activation = compiler::Activation::kGelu;
      break;
    case graph::FusedActivation::kGeluTanh:
      ep.activation = compiler::Activation::kGeluTanh;
      break;
  }
  return ep;
}

// A batched product of two activations: both operands and the output in plain layouts, their
// batch dimensions folded (the kernel's [B, M, K] is the node's [..., M, K]: the same elements).
Status EmitBatchMatmul(LowerApi& cx, const Node& n, const LowerApi::Choice& choice, compiler::KernelDef def,
                       const compiler::Epilogue& ep) {
  // FuseEpilogues attaches nothing to a product without constant weights (no per-channel axis).
  if (ep.ToString() != "none") return cx.Fail(n, "a batched product takes no fused epilogue, got " + ep.ToString());
  std::vector<int> args;
  for (size_t i = 0; i < 2; ++i) {
    TUNEFARM_ASSIGN_OR_RETURN(int operand, cx.Get(n.inputs[i], 0));
    args.push_back(operand);
  }
  const int out = cx.NewTensor(cx.V(n.outputs[0]).name, ArtifactTensor::kIntermediate, ElementType::kFloat32,
                               cx.V(n.outputs[0]).shape);
  args.push_back(out);
  cx.Define(n.outputs[0], out, 0);
  AddTemplateKernel(cx, n, choice, std::move(def), ep, std::move(args));
  return Status::OK();
}

// A convolution or dense layer through the best of its tunable implementations.
Status LowerTemplate(LowerApi& cx, const Node& n, const std::vector<compiler::Workload>& implementations) {
  TUNEFARM_ASSIGN_OR_RETURN(LowerApi::Choice choice, cx.ChooseImplementation(implementations));
  const compiler::Workload& w = choice.workload;
  const int64_t index = choice.config_index;
  TUNEFARM_ASSIGN_OR_RETURN(const compiler::TemplateRow* row, compiler::FindTemplateRow(w.implementation));
  const compiler::OpTemplate* tmpl = row->get();
  compiler::ConfigSpace space = tmpl->Space(w, cx.target());
  TUNEFARM_ASSIGN_OR_RETURN(compiler::Config cfg, space.Get(index));
  const compiler::Epilogue ep = TemplateEpilogue(n);
  compiler::KernelDef def = tmpl->Instantiate(w, ep, cfg, cx.target());
  if (w.is_batch_matmul()) return EmitBatchMatmul(cx, n, choice, std::move(def), ep);
  const graph::ConstantData& wc = *cx.V(n.inputs[1]).constant;
  const ir::Tensor& out_t = def.args.back();
  const bool is_conv = n.op_type == "Conv";
  // Gemm's alpha scales the packed weights and beta the bias: the kernel computes alpha A B + beta C.
  const float alpha = n.op_type == "Gemm" ? n.GetFloat("alpha", 1.0f) : 1.0f;
  const float beta = n.op_type == "Gemm" ? n.GetFloat("beta", 1.0f) : 1.0f;
  const int64_t channels = is_conv ? wc.shape[0] : w.dense.out_features;
  std::vector<float> bias;
  if (ep.bias) {
    const auto& b = *cx.V(n.inputs[2]).constant;
    for (int64_t k = 0; k < channels; ++k) bias.push_back(beta * b.f32[b.f32.size() == 1 ? 0 : size_t(k)]);
  }
  // CPU convolutions keep activations in NCHW[x]c blocks (5-D); the CUDA templates in plain NCHW.
  const bool blocked = is_conv && def.args[0]->shape.size() == 5;
  const int64_t block = blocked ? out_t->shape.back() : 0;
  std::vector<int> args;
  TUNEFARM_ASSIGN_OR_RETURN(int x, cx.Get(n.inputs[0], blocked ? def.args[0]->shape.back() : 0));
  args.push_back(x);
  // The weights in the layout the template's row names (schedule/template_table.h).
  std::vector<float> packed;
  switch (row->weights) {
    case compiler::WeightPacking::kWinograd: {
      // Transformed here, once (tunefarm/compiler/winograd.h), for the tile and output-channel
      // block of the chosen config.
      TUNEFARM_ASSIGN_OR_RETURN(const compiler::WinogradMatrices* wm, compiler::WinogradFor(def.winograd_tile));
      const int64_t oc_block = def.args[1]->shape.size() == 6 ? def.args[1]->shape.back() : 1;
      packed = compiler::WinogradWeightTransform(wc.f32, w.conv.out_channels, w.conv.in_channels, oc_block, *wm);
      break;
    }
    case compiler::WeightPacking::kConvBlocked:
      packed = PackConvWeights(wc.f32, wc.shape, def, /*depthwise=*/false);
      break;
    case compiler::WeightPacking::kDepthwiseBlocked:
      packed = PackConvWeights(wc.f32, wc.shape, def, /*depthwise=*/true);
      break;
    case compiler::WeightPacking::kConvAsStored:
      packed = wc.f32;
      break;  // [K, C/groups, KH, KW]
    case compiler::WeightPacking::kDense: {
      const bool trans_b = n.op_type == "Gemm" && n.GetInt("transB", 0);
      std::vector<float> scaled = wc.f32;
      if (alpha != 1.0f) {
        for (float& v : scaled) v *= alpha;
      }
      packed = PackDenseWeights(scaled, trans_b, w.dense.in_features, w.dense.out_features, def.args[1]->shape);
      break;
    }
    case compiler::WeightPacking::kNone:
      return cx.Fail(n, "template " + w.implementation + " takes no constant weights");
  }
  args.push_back(cx.ParamFloats(cx.V(n.inputs[1]).name + ".packed", def.args[1]->shape, packed));
  if (ep.bias) args.push_back(cx.ParamFloats(cx.V(n.inputs[2]).name, def.args[2]->shape, bias));
  if (ep.residual) {
    TUNEFARM_ASSIGN_OR_RETURN(int r, cx.Get(n.inputs[3], block));
    args.push_back(r);
  }
  if (ep.activation == compiler::Activation::kPRelu) {  // laid out as the bias (DeclareEpilogueArgs)
    const graph::ConstantData& s = *cx.V(n.inputs[4]).constant;
    args.push_back(cx.ParamFloats(cx.V(n.inputs[4]).name, def.args[args.size()]->shape, s.f32));
  }
  // A dense layer over a MatMul's leading dimensions writes [rows, N] into the node's [..., N]
  // output: the same elements, so the tensor keeps the graph's shape for its readers.
  const int out = cx.NewTensor(cx.V(n.outputs[0]).name, ArtifactTensor::kIntermediate, ElementType::kFloat32,
                               is_conv ? out_t->shape : cx.V(n.outputs[0]).shape);
  args.push_back(out);
  cx.Define(n.outputs[0], out, block);
  AddTemplateKernel(cx, n, choice, std::move(def), ep, std::move(args));
  return Status::OK();
}

// Conv, Gemm and MatMul: the template when the node's workload has a config space on the target,
// else the untuned form with whatever FuseEpilogues attached.
Status LowerLinear(LowerApi& cx, const Node& n) {
  const std::vector<compiler::Workload> implementations = TunableImplementations(cx, n);
  if (!implementations.empty()) return LowerTemplate(cx, n, implementations);
  const std::string op = n.op_type;
  std::vector<size_t> inputs;
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    if (n.inputs[i] >= 0) inputs.push_back(i);
  }
  // Positions in `inputs` (absent ones are skipped): bias 2, residual 3, PRelu's slopes 4.
  auto position = [&inputs](size_t input) {
    return size_t(std::find(inputs.begin(), inputs.end(), input) - inputs.begin());
  };
  const bool has_c = n.inputs.size() > 2 && n.inputs[2] >= 0, has_res = n.inputs.size() > 3 && n.inputs[3] >= 0;
  const bool prelu = n.epilogue.activation == graph::FusedActivation::kPRelu;
  const size_t res_at = position(3), slope_at = position(4);
  const compute::UnaryParams act = FusedActivation(n);
  const compute::ConvParams cp = op == "Conv" ? ConvWindow(n) : compute::ConvParams{};
  const bool ta = n.GetInt("transA", 0) != 0, tb = n.GetInt("transB", 0) != 0;
  const float alpha = n.GetFloat("alpha", 1.0f), beta = n.GetFloat("beta", 1.0f);
  const auto shape = cx.V(n.outputs[0]).shape;
  return cx.EmitPlain(n, inputs, [=](const std::vector<ir::Tensor>& i) {
    const ir::Tensor c = has_c ? i[2] : ir::Tensor();
    ir::Tensor t = op == "Conv"   ? compute::ConvDirect(i[0], i[1], c, cp, shape)
                   : op == "Gemm" ? compute::Gemm(i[0], i[1], c, ta, tb, alpha, beta)
                                  : compute::MatMul(i[0], i[1]);
    if (op == "MatMul" && has_c) t = compute::Binary(t, c, compute::BinaryKind::kAdd);
    if (has_res) t = compute::Binary(t, i[res_at], compute::BinaryKind::kAdd);
    if (act.kind != compute::UnaryKind::kIdentity) t = compute::Unary(t, act);
    if (prelu) t = compute::Binary(t, i[slope_at], compute::BinaryKind::kPRelu);
    return t;
  });
}

// --- ConvTranspose -------------------------------------------------------------------------
Status InferConvTranspose(InferContext& cx) {
  TUNEFARM_ASSIGN_OR_RETURN(TransposeWindow t, ParseConvTranspose(cx));
  const auto& x = cx.Shape(0);
  const int64_t m = cx.Shape(1)[1] * t.params.groups;
  if (cx.HasInput(2) && (cx.Shape(2).size() != 1 || cx.Shape(2)[0] != m)) {
    return cx.Fail("bias " + ShapeStr(cx.Shape(2)) + " must be [" + std::to_string(m) + "]");
  }
  std::vector<int64_t> out = {x[0], m};
  out.insert(out.end(), t.out.begin(), t.out.end());
  if (!CheckedElements(out)) return cx.Fail("the output " + ShapeStr(out) + " is too large");
  cx.SetOut(0, DataType::kFloat32, out);
  return Status::OK();
}

Status LowerConvTranspose(LowerApi& cx, const Node& n) {
  TUNEFARM_ASSIGN_OR_RETURN(TransposeWindow t, ParseConvTranspose(NodeView(cx.graph(), n)));
  const bool has_bias = n.inputs.size() > 2 && n.inputs[2] >= 0;
  const auto shape = cx.V(n.outputs[0]).shape;
  std::vector<size_t> inputs = {0, 1};
  if (has_bias) inputs.push_back(2);
  const compute::ConvParams params = t.params;
  return cx.EmitPlain(n, inputs, [params, shape, has_bias](const std::vector<ir::Tensor>& i) {
    return compute::ConvTransposeDirect(i[0], i[1], has_bias ? i[2] : ir::Tensor(), params, shape);
  });
}

// --- Gemm, MatMul ---------------------------------------------------------------------------
Status InferGemm(InferContext& cx) {
  TUNEFARM_RETURN_IF_ERROR(cx.NeedRank(0, 2, "Gemm"));
  TUNEFARM_RETURN_IF_ERROR(cx.NeedRank(1, 2, "Gemm B"));
  auto a = cx.Shape(0), b = cx.Shape(1);
  if (cx.node().GetInt("transA", 0)) std::swap(a[0], a[1]);
  if (cx.node().GetInt("transB", 0)) std::swap(b[0], b[1]);
  if (a[1] != b[0]) return cx.Fail("inner dimensions differ: " + ShapeStr(a) + " x " + ShapeStr(b));
  if (cx.HasInput(2)) {  // C broadcasts to [M, N]
    const auto& c = cx.Shape(2);
    const std::vector<int64_t> mn = {a[0], b[1]};
    auto s = c.size() <= 2 ? BroadcastShapes(c, mn) : Result<std::vector<int64_t>>(Status::InvalidArgument(""));
    if (!s.ok() || *s != mn) return cx.Fail("C " + ShapeStr(c) + " does not broadcast to " + ShapeStr(mn));
  }
  cx.SetOut(0, DataType::kFloat32, {a[0], b[1]});
  return Status::OK();
}

}  // namespace

std::vector<compiler::Workload> TunableImplementations(LowerApi& cx, const Node& n) {
  compiler::Workload w;
  std::vector<compiler::Workload> implementations;
  if (!compiler::NodeWorkload(cx.graph(), n, &w)) return implementations;
  for (const compiler::Workload& impl : compiler::Implementations(w, cx.target())) {
    if (compiler::GetConfigSpace(impl, cx.target()).ok()) implementations.push_back(impl);
  }
  return implementations;
}

void AddTemplateKernel(LowerApi& cx, const Node& n, const LowerApi::Choice& choice, compiler::KernelDef def,
                       const compiler::Epilogue& ep, std::vector<int> args) {
  compiler::PlannedKernel k;
  k.op = choice.workload.implementation + (ep.ToString() == "none" ? "" : "+" + ep.ToString());
  k.def = std::move(def);
  k.args = std::move(args);
  k.workload = choice.workload;
  k.node = n.name.empty() ? cx.V(n.outputs[0]).name : n.name;
  k.config_index = choice.config_index;
  k.config_origin = choice.source;
  k.candidate_workloads = choice.candidates;
  cx.AddTunableKernel(std::move(k));
}

Result<std::vector<int64_t>> InferMatMulShape(const NodeView& v, size_t a_input, size_t b_input) {
  auto a = v.Shape(a_input), b = v.Shape(b_input);
  if (a.empty() || b.empty()) return v.Fail("MatMul of a scalar");
  const bool a1 = a.size() == 1, b1 = b.size() == 1;
  if (a1) a.insert(a.begin(), 1);
  if (b1) b.push_back(1);
  if (a.back() != b[b.size() - 2])
    return v.Fail("inner dimensions differ: " + ShapeStr(v.Shape(a_input)) + " x " + ShapeStr(v.Shape(b_input)));
  std::vector<int64_t> ba(a.begin(), a.end() - 2), bb(b.begin(), b.end() - 2);
  const size_t rank = std::max(ba.size(), bb.size());
  std::vector<int64_t> out(rank);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t x = i + ba.size() >= rank ? ba[i + ba.size() - rank] : 1,
                  y = i + bb.size() >= rank ? bb[i + bb.size() - rank] : 1;
    if (x != y && x != 1 && y != 1)
      return v.Fail("batch dimensions " + ShapeStr(ba) + " and " + ShapeStr(bb) + " do not broadcast");
    out[i] = x == 1 ? y : x;
  }
  if (!a1) out.push_back(a[a.size() - 2]);
  if (!b1) out.push_back(b.back());
  return out;
}

namespace {

Status InferMatMul(InferContext& cx) {
  TUNEFARM_ASSIGN_OR_RETURN(std::vector<int64_t> out, InferMatMulShape(cx, 0, 1));
  cx.SetOut(0, DataType::kFloat32, out);
  return Status::OK();
}

// --- Einsum -------------------------------------------------------------------------------
struct EinsumArgs {
  std::vector<std::string> inputs;
  std::string output;
};

Result<EinsumArgs> ParseEinsum(const NodeView& v) {
  std::string eq;
  for (char c : v.node().GetString("equation", "")) {
    if (c != ' ') eq += c;
  }
  if (eq.find("...") != std::string::npos) return v.Fail("equations with an ellipsis are not supported: " + eq);
  EinsumArgs a;
  const size_t arrow = eq.find("->");
  const std::string lhs = eq.substr(0, arrow);
  for (size_t start = 0;;) {
    const size_t comma = lhs.find(',', start);
    a.inputs.push_back(lhs.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  for (size_t k = 0; k < v.num_inputs(); ++k) {
    if (!v.HasInput(k)) return v.Fail("input " + std::to_string(k) + " is missing");
  }
  if (a.inputs.size() != v.num_inputs()) {
    return v.Fail("equation '" + eq + "' has " + std::to_string(a.inputs.size()) + " operands for " +
                  std::to_string(v.num_inputs()) + " inputs");
  }
  std::map<char, int64_t> extent, count;
  for (size_t k = 0; k < a.inputs.size(); ++k) {
    const std::string& labels = a.inputs[k];
    if (labels.size() != v.Shape(k).size()) {
      return v.Fail("operand " + std::to_string(k) + " '" + labels + "' does not match its rank " +
                    std::to_string(v.Shape(k).size()));
    }
    for (size_t d = 0; d < labels.size(); ++d) {
      const char c = labels[d];
      if (!std::isalpha(static_cast<unsigned char>(c)))
        return v.Fail(std::string("bad label '") + c + "' in '" + eq + "'");
      if (std::count(labels.begin(), labels.end(), c) > 1)
        return v.Fail(std::string("repeated label '") + c + "' within an operand (a diagonal) is not supported");
      auto [it, inserted] = extent.emplace(c, v.Shape(k)[d]);
      if (!inserted && it->second != v.Shape(k)[d]) {
        return v.Fail(std::string("label '") + c + "' has extents " + std::to_string(it->second) + " and " +
                      std::to_string(v.Shape(k)[d]));
      }
      ++count[c];
    }
  }
  if (arrow != std::string::npos) {
    a.output = eq.substr(arrow + 2);
    if (a.output.find("->") != std::string::npos) return v.Fail("equation '" + eq + "' has more than one '->'");
    for (char c : a.output) {
      if (!std::isalpha(static_cast<unsigned char>(c)))
        return v.Fail(std::string("bad output label '") + c + "' in '" + eq + "'");
      if (!extent.count(c)) return v.Fail(std::string("output label '") + c + "' is not in any operand");
      // numpy and the ONNX spec refuse it: an output has each label once.
      if (std::count(a.output.begin(), a.output.end(), c) > 1)
        return v.Fail(std::string("output label '") + c + "' is repeated in '" + eq + "'");
    }
  } else {
    for (const auto& [c, n] : count) {  // implicit form: the labels seen once, alphabetically
      if (n == 1) a.output += c;
    }
  }
  return a;
}

Status InferEinsum(InferContext& cx) {
  TUNEFARM_ASSIGN_OR_RETURN(EinsumArgs a, ParseEinsum(cx));
  std::vector<int64_t> out;
  for (char c : a.output) {
    for (size_t k = 0; k < a.inputs.size(); ++k) {
      const size_t at = a.inputs[k].find(c);
      if (at != std::string::npos) {
        out.push_back(cx.Shape(k)[at]);
        break;
      }
    }
  }
  cx.SetOut(0, DataType::kFloat32, out);
  return Status::OK();
}

Status LowerEinsum(LowerApi& cx, const Node& n) {
  TUNEFARM_ASSIGN_OR_RETURN(EinsumArgs a, ParseEinsum(NodeView(cx.graph(), n)));
  std::vector<size_t> inputs;
  for (size_t i = 0; i < n.inputs.size(); ++i) inputs.push_back(i);
  return cx.EmitPlain(n, inputs,
                      [a](const std::vector<ir::Tensor>& i) { return compute::Einsum(i, a.inputs, a.output); });
}

// --- pooling --------------------------------------------------------------------------------
Status InferPool(InferContext& cx) {
  const bool is_max = cx.node().op_type == "MaxPool";
  const auto& x = cx.Shape(0);
  if (x.size() < 3)
    return cx.Fail(cx.node().op_type + " needs an input of rank >= 3 (N, C, spatial...), got " + ShapeStr(x));
  const bool dilated = is_max || cx.opset() >= 19;
  TUNEFARM_ASSIGN_OR_RETURN(std::vector<int64_t> spatial, InferWindow(cx, cx.node().GetInts("kernel_shape"), dilated,
                                                                      cx.node().GetInt("ceil_mode", 0) != 0));
  std::vector<int64_t> out = {x[0], x[1]};
  out.insert(out.end(), spatial.begin(), spatial.end());
  cx.SetOut(0, cx.In(0).dtype, out);
  if (is_max && cx.num_outputs() > 1) cx.SetOut(1, DataType::kInt64, out);  // the argmax indices
  return Status::OK();
}

Status InferGlobalPool(InferContext& cx) {
  const auto& x = cx.Shape(0);
  if (x.size() < 3) return cx.Fail(cx.node().op_type + " needs an input of rank >= 3, got " + ShapeStr(x));
  std::vector<int64_t> out = {x[0], x[1]};
  out.resize(x.size(), 1);
  cx.SetOut(0, cx.In(0).dtype, out);
  return Status::OK();
}

Status LowerPool(LowerApi& cx, const Node& n) {
  if (n.outputs.size() > 1) return cx.Fail(n, "the Indices output of MaxPool is not supported");
  const int in = n.inputs[0];
  const auto& xs = cx.V(in).shape;
  const int64_t block = xs.size() == 4 ? cx.Preferred(in) : 0;
  TUNEFARM_ASSIGN_OR_RETURN(int x, cx.Get(in, block));
  std::vector<int64_t> spatial;
  for (size_t d = 2; d < (block ? 4 : xs.size()); ++d) spatial.push_back(int64_t(d));
  const auto out_shape = compute::PhysicalShape(cx.V(n.outputs[0]).shape, block);
  TensorFn fn;
  if (n.op_type == "GlobalAveragePool" || n.op_type == "GlobalMaxPool") {
    const bool is_max = n.op_type == "GlobalMaxPool";
    fn = [spatial, is_max](const std::vector<ir::Tensor>& i) {
      return is_max ? compute::Reduce(i[0], spatial, true, compute::ReduceOp::kMax)
                    : compute::GlobalAveragePool(i[0], spatial);
    };
  } else {
    const compute::PoolParams p = PoolWindow(n, spatial, n.op_type == "MaxPool");
    fn = [p, out_shape](const std::vector<ir::Tensor>& i) { return compute::Pool(i[0], p, out_shape); };
  }
  const int t = cx.Emit(n.op_type, {x}, fn, cx.OutType(n), cx.V(n.outputs[0]).name);
  cx.Define(n.outputs[0], t, block);
  return Status::OK();
}

}  // namespace

std::vector<OperatorDef> NnOperators() {
  const std::vector<AttrSpec> window = {
      {"auto_pad", kString}, {"kernel_shape", kInts}, {"pads", kInts}, {"strides", kInts}};
  auto with = [&](std::vector<AttrSpec> extra) {
    extra.insert(extra.begin(), window.begin(), window.end());
    return extra;
  };
  return {
      {"Conv", "nn", with({{"dilations", kInts}, {"group", kInt}}), InferConv, nullptr, LowerLinear,
       "1-D to 3-D; 2-D with constant weights uses the conv2d/depthwise templates, the rest a direct kernel", false, 2},
      {"ConvTranspose",
       "nn",
       {{"auto_pad", kString},
        {"dilations", kInts},
        {"group", kInt},
        {"kernel_shape", kInts},
        {"output_padding", kInts},
        {"output_shape", kInts},
        {"pads", kInts},
        {"strides", kInts}},
       InferConvTranspose,
       nullptr,
       LowerConvTranspose,
       "1-D to 3-D; groups, strides, dilations, pads/auto_pad, output_padding, output_shape; 2-D with constant "
       "weights, "
       "equal strides and no dilation is a conv2d task (tunable), the rest a direct kernel",
       false,
       2},
      {"Gemm",
       "nn",
       {{"alpha", kFloat}, {"beta", kFloat}, {"transA", kInt}, {"transB", kInt}, {"broadcast", kInt}},
       InferGemm,
       nullptr,
       LowerLinear,
       "constant B and a row-broadcast constant C use the dense template (alpha, beta folded in)",
       false,
       2},
      {"MatMul",
       "nn",
       {},
       InferMatMul,
       nullptr,
       LowerLinear,
       "a constant 2-D B at any rank of A uses the dense template (rows: the leading dims); two activations with "
       "equal batch dims the batch_matmul template; broadcast batch dims a generic product",
       false,
       2},
      {"Einsum",
       "nn",
       {{"equation", kString, true}},
       InferEinsum,
       nullptr,
       LowerEinsum,
       "explicit and implicit forms; no ellipsis, no repeated label within an operand"},
      {"MaxPool", "nn", with({{"ceil_mode", kInt}, {"dilations", kInts}, {"storage_order", kInt}}), InferPool, nullptr,
       LowerPool, "the Indices output is not supported"},
      {"AveragePool", "nn", with({{"ceil_mode", kInt}, {"count_include_pad", kInt}, {"dilations", kInts}}), InferPool,
       nullptr, LowerPool, "dilations from opset 19"},
      {"GlobalAveragePool", "nn", {}, InferGlobalPool, nullptr, LowerPool, ""},
      {"GlobalMaxPool", "nn", {}, InferGlobalPool, nullptr, LowerPool, ""},
  };
}

}  // namespace tunefarm::operators
