// Normalization, Softmax and Dropout: BatchNormalization, InstanceNormalization,
// GroupNormalization, LRN, LayerNormalization, Softmax (LogSoftmax, Hardmax), Dropout. Untuned
// kernels from their compute definitions (compiler/compute/); BatchNormalization after a conv is
// folded into it by the model passes (compiler/model/passes/fold_batch_norm.cc).
#include <algorithm>

#include "compiler/compute/ops.h"
#include "compiler/ir/ir_operators.h"
#include "compiler/operators/constant_eval.h"
#include "compiler/operators/infer_context.h"
#include "compiler/operators/lower_api.h"
#include "compiler/operators/registry.h"

namespace tunefarm::operators {
namespace {

using graph::Attribute;
using graph::DataType;
using graph::Node;

// --- normalization, Softmax, Dropout --------------------------------------------------------
Status InferBatchNorm(InferContext& cx) {
  if (cx.num_inputs() < 5) return cx.Fail("needs 5 inputs (X, scale, B, mean, var)");
  const auto& x = cx.Shape(0);
  if (x.size() < 2) return cx.Fail("needs an input of rank >= 2, got " + ShapeStr(x));
  for (size_t i = 1; i < 5; ++i) {
    if (cx.Shape(i) != std::vector<int64_t>{x[1]})
      return cx.Fail("input " + std::to_string(i) + " must be [" + std::to_string(x[1]) + "]");
  }
  cx.SetOut(0, cx.In(0).dtype, x);
  // Training-mode BatchNormalization also returns the running mean and variance, shaped [C].
  for (size_t i = 1; i < cx.num_outputs(); ++i) cx.SetOut(i, DataType::kFloat32, cx.Shape(1));
  return Status::OK();
}

Status LowerBatchNorm(LowerApi& cx, const Node& n) {
  if (n.outputs.size() > 1 || n.GetInt("training_mode", 0))
    return cx.Fail(n, "training-mode BatchNormalization is not supported");
  const float eps = n.GetFloat("epsilon", 1e-5f);
  return cx.EmitPlain(n, {0, 1, 2, 3, 4}, [eps](const std::vector<ir::Tensor>& i) {
    return compute::BatchNorm(i[0], i[1], i[2], i[3], i[4], eps);
  });
}

// InstanceNormalization: each (n, c) normalized over its spatial axes, then scale[c] and bias[c]:
// LayerNorm from axis 2 with the per-channel vectors viewed as [C, 1, ...] (trailing-aligned).
Status InferInstanceNorm(InferContext& cx) {
  const auto& x = cx.Shape(0);
  if (x.size() < 3) return cx.Fail("needs an input of rank 3 or more (N, C, spatial...), got " + ShapeStr(x));
  if (cx.In(0).dtype != DataType::kFloat32)
    return cx.Fail("takes float32 tensors, got " + std::string(graph::DataTypeName(cx.In(0).dtype)));
  for (size_t i = 1; i < 3; ++i) {
    if (cx.Shape(i) != std::vector<int64_t>{x[1]}) {
      return cx.Fail(std::string(i == 1 ? "scale " : "B ") + ShapeStr(cx.Shape(i)) + " must be [" +
                     std::to_string(x[1]) + "]");
    }
  }
  cx.SetOut(0, cx.In(0).dtype, x);
  return Status::OK();
}

Status LowerInstanceNorm(LowerApi& cx, const Node& n) {
  const float eps = n.GetFloat("epsilon", 1e-5f);
  const auto& shape = cx.V(n.inputs[0]).shape;
  std::vector<int64_t> per_channel(shape.size() - 1, 1);
  per_channel[0] = shape[1];
  TUNEFARM_ASSIGN_OR_RETURN(int x, cx.Get(n.inputs[0], 0));
  TUNEFARM_ASSIGN_OR_RETURN(int scale, cx.Get(n.inputs[1], 0));
  TUNEFARM_ASSIGN_OR_RETURN(int bias, cx.Get(n.inputs[2], 0));
  const std::string name = cx.V(n.outputs[0]).name;
  scale = cx.View(scale, per_channel, name + ".scale");
  bias = cx.View(bias, per_channel, name + ".bias");
  const int t = cx.Emit(
      n.op_type, {x, scale, bias},
      [eps](const std::vector<ir::Tensor>& i) { return compute::LayerNorm(i[0], i[1], i[2], 2, eps); }, cx.OutType(n),
      name);
  cx.Define(n.outputs[0], t, 0);
  return Status::OK();
}

// GroupNormalization: scale and bias are per group in opset 18 (a spec bug ONNX fixed in 21,
// where they are per channel); each opset's form is checked for what it says.
Status InferGroupNorm(InferContext& cx) {
  const auto& x = cx.Shape(0);
  if (x.size() < 3) return cx.Fail("needs an input of rank 3 or more (N, C, spatial...), got " + ShapeStr(x));
  if (cx.In(0).dtype != DataType::kFloat32)
    return cx.Fail("takes float32 tensors, got " + std::string(graph::DataTypeName(cx.In(0).dtype)));
  const int64_t groups = cx.node().GetInt("num_groups", 0);
  if (groups < 1 || x[1] % groups != 0) {
    return cx.Fail("num_groups " + std::to_string(groups) + " must be positive and divide the " + std::to_string(x[1]) +
                   " channels");
  }
  const bool per_channel = cx.opset() >= 21;
  const int64_t affine = per_channel ? x[1] : groups;
  for (size_t i = 1; i < 3; ++i) {
    if (cx.Shape(i) != std::vector<int64_t>{affine}) {
      return cx.Fail(std::string(i == 1 ? "scale " : "bias ") + ShapeStr(cx.Shape(i)) + " must be [" +
                     std::to_string(affine) + "] (one per " +
                     (per_channel ? "channel" : "group, as opset 18 says; per channel from opset 21") + ")");
    }
  }
  cx.SetOut(0, cx.In(0).dtype, x);
  return Status::OK();
}

Status LowerGroupNorm(LowerApi& cx, const Node& n) {
  const float eps = n.GetFloat("epsilon", 1e-5f);
  const int64_t groups = n.GetInt("num_groups", 1);
  return cx.EmitPlain(n, {0, 1, 2}, [=](const std::vector<ir::Tensor>& i) {
    return compute::GroupNorm(i[0], i[1], i[2], groups, eps);
  });
}

// LRN: AlexNet/GoogLeNet-era cross-channel normalization.
Status InferLrn(InferContext& cx) {
  const auto& x = cx.Shape(0);
  if (x.size() < 3) return cx.Fail("needs an input of rank 3 or more (N, C, spatial...), got " + ShapeStr(x));
  if (cx.In(0).dtype != DataType::kFloat32)
    return cx.Fail("takes float32 tensors, got " + std::string(graph::DataTypeName(cx.In(0).dtype)));
  const int64_t size = cx.node().GetInt("size", 0);
  if (size < 1 || size > kMaxWindowAttribute) {
    return cx.Fail("size " + std::to_string(size) + " must be in [1, " + std::to_string(kMaxWindowAttribute) + "]");
  }
  cx.SetOut(0, cx.In(0).dtype, x);
  return Status::OK();
}

Status LowerLrn(LowerApi& cx, const Node& n) {
  const int64_t size = n.GetInt("size", 1);
  const float alpha = n.GetFloat("alpha", 1e-4f), beta = n.GetFloat("beta", 0.75f), bias = n.GetFloat("bias", 1.0f);
  return cx.EmitPlain(n, {0}, [=](const std::vector<ir::Tensor>& i) {
    return compute::LocalResponseNorm(i[0], size, alpha, beta, bias);
  });
}

Result<int64_t> LayerNormAxis(const NodeView& v) { return v.Axis(v.node().GetInt("axis", -1), v.Shape(0).size()); }

Status InferLayerNorm(InferContext& cx) {
  TUNEFARM_ASSIGN_OR_RETURN(int64_t axis, LayerNormAxis(cx));
  const auto& x = cx.Shape(0);
  const std::vector<int64_t> trailing(x.begin() + axis, x.end());
  for (size_t i = 1; i < 3; ++i) {
    if (!cx.HasInput(i)) continue;
    const auto& s = cx.Shape(i);
    if (s.size() > trailing.size()) {
      return cx.Fail("input " + std::to_string(i) + " " + ShapeStr(s) + " has a higher rank than " +
                     ShapeStr(trailing));
    }
    for (size_t d = 0; d < s.size(); ++d) {
      const int64_t t = trailing[trailing.size() - s.size() + d];
      if (s[d] != t && s[d] != 1) {
        return cx.Fail("input " + std::to_string(i) + " " + ShapeStr(s) + " does not broadcast to " +
                       ShapeStr(trailing));
      }
    }
  }
  cx.SetOut(0, cx.In(0).dtype, x);
  // Mean and InvStdDev: the input's shape with the normalized axes kept as 1.
  std::vector<int64_t> stats(x.begin(), x.begin() + axis);
  stats.resize(x.size(), 1);
  for (size_t k = 1; k < cx.num_outputs() && k < 3; ++k) cx.SetOut(k, DataType::kFloat32, stats);
  return Status::OK();
}

Status LowerLayerNorm(LowerApi& cx, const Node& n) {
  TUNEFARM_ASSIGN_OR_RETURN(int64_t axis, LayerNormAxis(NodeView(cx.graph(), n)));
  const float eps = n.GetFloat("epsilon", 1e-5f);
  const bool has_bias = n.inputs.size() > 2 && n.inputs[2] >= 0;
  std::vector<size_t> inputs = {0, 1};
  if (has_bias) inputs.push_back(2);
  TUNEFARM_RETURN_IF_ERROR(cx.EmitPlain(n, inputs, [=](const std::vector<ir::Tensor>& i) {
    return compute::LayerNorm(i[0], i[1], has_bias ? i[2] : ir::Tensor(), axis, eps);
  }));
  // The optional statistics outputs, each its own small kernel.
  std::vector<int64_t> axes;
  for (int64_t d = axis; d < int64_t(cx.V(n.inputs[0]).shape.size()); ++d) axes.push_back(d);
  TUNEFARM_ASSIGN_OR_RETURN(int x, cx.Get(n.inputs[0], 0));
  for (size_t k = 1; k < n.outputs.size() && k < 3; ++k) {
    if (n.outputs[k] < 0) continue;
    const bool inv_std = k == 2;
    const int t = cx.Emit(
        n.op_type, {x},
        [=](const std::vector<ir::Tensor>& i) {
          ir::Tensor mean = compute::ReduceMean(i[0], axes, true);
          if (!inv_std) return mean;
          ir::Tensor centered = te::Compute("centered", i[0]->shape, [&](const std::vector<ir::Expr>& idx) {
            std::vector<ir::Expr> m = idx;
            for (int64_t d : axes) m[size_t(d)] = ir::Expr(0);
            return te::Read(i[0], idx) - te::Read(mean, m);
          });
          ir::Tensor var = compute::Reduce(centered, axes, true, compute::ReduceOp::kSumSquare);
          const float count = float(Product(i[0]->shape, size_t(axes[0]), i[0]->shape.size()));
          return te::Compute("inv_std_dev", var->shape, [&](const std::vector<ir::Expr>& idx) {
            return ir::Expr(1.0f) /
                   ir::Call::Make(ir::Type::Float(32), "sqrt", {te::Read(var, idx) / ir::Expr(count) + ir::Expr(eps)});
          });
        },
        ElementType::kFloat32, cx.V(n.outputs[k]).name);
    cx.Define(n.outputs[k], t, 0);
  }
  return Status::OK();
}

Status InferSameShape(InferContext& cx) {
  cx.SetOut(0, cx.In(0).dtype, cx.Shape(0));
  return Status::OK();
}

// Softmax, LogSoftmax and Hardmax: one axis from opset 13; before, the flattened axes [axis, rank).
Status LowerSoftmax(LowerApi& cx, const Node& n) {
  const graph::Graph& g = cx.graph();
  const int64_t rank = int64_t(cx.V(n.outputs[0]).shape.size());
  int64_t axis = n.GetInt("axis", g.opset >= 13 ? -1 : 1);
  if (axis < -rank || axis >= rank)
    return Status::InvalidArgument(g.Describe(n) + ": axis " + std::to_string(axis) + " out of range");
  if (axis < 0) axis += rank;
  const int64_t last = g.opset >= 13 ? axis : rank - 1;
  using Normalize = ir::Tensor (*)(const ir::Tensor&, int64_t, int64_t);
  const Normalize fn = n.op_type == "LogSoftmax" ? &compute::LogSoftmax
                       : n.op_type == "Hardmax"  ? &compute::Hardmax
                                                 : &compute::Softmax;
  return cx.EmitPlain(n, {0}, [axis, last, fn](const std::vector<ir::Tensor>& i) { return fn(i[0], axis, last); });
}

Status InferSoftmaxLike(InferContext& cx) {
  if (cx.In(0).dtype != DataType::kFloat32) {
    return cx.Fail(cx.node().op_type + " takes float32 tensors, got " + graph::DataTypeName(cx.In(0).dtype));
  }
  return InferSameShape(cx);
}

Status InferDropout(InferContext& cx) {
  cx.SetOut(0, cx.In(0).dtype, cx.Shape(0));
  if (cx.num_outputs() > 1) cx.SetOut(1, DataType::kBool, cx.Shape(0));
  return Status::OK();
}

Status LowerDropout(LowerApi& cx, const Node& n) {
  bool training = false;
  if (n.inputs.size() > 2 && n.inputs[2] >= 0) {
    const auto& c = cx.V(n.inputs[2]).constant;
    if (!c) return cx.Fail(n, "a training_mode input that is not a constant");
    training = c->i64.size() == 1 && c->i64[0] != 0;
  }
  float ratio = n.GetFloat("ratio", 0.5f);
  if (n.inputs.size() > 1 && n.inputs[1] >= 0 && cx.V(n.inputs[1]).constant &&
      cx.V(n.inputs[1]).constant->num_elements() == 1) {
    ratio = float(ElementAt(*cx.V(n.inputs[1]).constant, 0));
  }
  if (training && ratio > 0.0f)
    return cx.Fail(n, "Dropout in training mode draws random masks; only inference is supported");
  if (n.outputs.size() > 1) {
    const graph::Value& mask = cx.V(n.outputs[1]);
    std::vector<uint8_t> ones(size_t(Product(mask.shape)), 1);
    cx.Define(n.outputs[1], cx.AddParam(mask.name, ElementType::kBool, mask.shape, ones.data(), ones.size()), 0);
  }
  TUNEFARM_ASSIGN_OR_RETURN(int x, cx.Get(n.inputs[0], 0));
  const graph::Value& out = cx.V(n.outputs[0]);
  cx.Define(n.outputs[0], cx.View(x, out.shape, out.name), 0);
  return Status::OK();
}

}  // namespace

std::vector<OperatorDef> NormOperators() {
  return {
      {"BatchNormalization",
       "nn",
       {{"epsilon", kFloat},
        {"momentum", kFloat},
        {"spatial", kInt},
        {"is_test", kInt},
        {"consumed_inputs", kInts},
        {"training_mode", kInt}},
       InferBatchNorm,
       nullptr,
       LowerBatchNorm,
       "inference mode; folded into a preceding Conv from opt level 1",
       false,
       5},
      {"InstanceNormalization",
       "nn",
       {{"epsilon", kFloat}},
       InferInstanceNorm,
       nullptr,
       LowerInstanceNorm,
       "float32; per-channel scale and B",
       false,
       3},
      {"GroupNormalization",
       "nn",
       {{"epsilon", kFloat}, {"num_groups", kInt, true}, {"stash_type", kInt}},
       InferGroupNorm,
       nullptr,
       LowerGroupNorm,
       "float32; scale and bias per group (opset 18) or per channel (opset 21)",
       false,
       3},
      {"LRN",
       "nn",
       {{"alpha", kFloat}, {"beta", kFloat}, {"bias", kFloat}, {"size", kInt, true}},
       InferLrn,
       nullptr,
       LowerLrn,
       "float32; across channels"},
      {"LayerNormalization",
       "nn",
       {{"axis", kInt}, {"epsilon", kFloat}, {"stash_type", kInt}},
       InferLayerNorm,
       nullptr,
       LowerLayerNorm,
       "the optional Mean and InvStdDev outputs are computed by kernels of their own",
       false,
       2},
      {"Softmax",
       "nn",
       {{"axis", kInt}},
       InferSameShape,
       nullptr,
       LowerSoftmax,
       "before opset 13 over the flattened trailing axes"},
      {"LogSoftmax",
       "nn",
       {{"axis", kInt}},
       InferSoftmaxLike,
       nullptr,
       LowerSoftmax,
       "float32; before opset 13 over the flattened trailing axes"},
      {"Hardmax",
       "nn",
       {{"axis", kInt}},
       InferSoftmaxLike,
       nullptr,
       LowerSoftmax,
       "float32; 1 at the first largest element; before opset 13 over the flattened trailing axes"},
      {"Dropout",
       "nn",
       {{"ratio", kFloat}, {"is_test", kInt}, {"seed", kInt}, {"consumed_inputs", kInts}},
       InferDropout,
       nullptr,
       LowerDropout,
       "inference only (the identity; the mask is all ones)"},
  };
}

}  // namespace tunefarm::operators
