#include "compiler/model/passes/qdq_to_integer.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "compiler/graph/graph_util.h"
#include "compiler/model/passes/remove_dead_nodes.h"
#include "compiler/operators/node_workload.h"

namespace tunefarm::graph {
namespace {

bool Is8Bit(DataType t) { return t == DataType::kUInt8 || t == DataType::kInt8; }

const Node* Producer(const Graph& g, int value) {
  if (value < 0) return nullptr;
  const int p = g.values[size_t(value)].producer;
  return p < 0 ? nullptr : &g.nodes[size_t(p)];
}

int InputOr(const Node& n, size_t i) { return i < n.inputs.size() ? n.inputs[i] : -1; }

const ConstantData* ConstantOf(const Graph& g, int value) {
  return value < 0 ? nullptr : g.values[size_t(value)].constant.get();
}

// Element i of a scale or zero point (its only element when it has one; 0 when absent).
double ElementOf(const ConstantData* c, int64_t i) {
  if (!c) return 0;
  const size_t at = c->num_elements() == 1 ? 0 : size_t(i);
  return c->dtype == DataType::kFloat32 ? double(c->f32[at]) : double(c->i64[at]);
}

// What a DequantizeLinear reads: the 8-bit value (an identity Cast before it looked through), its
// scale and zero point (constants; zero -1 when absent), per tensor or along `axis`.
struct Dequantized {
  int q = -1, scale = -1, zero = -1;
  int64_t axis = 1;
};

std::optional<Dequantized> DequantizedFrom(const Graph& g, int value) {
  const Node* dq = Producer(g, value);
  if (!dq || dq->op_type != "DequantizeLinear" || !dq->guards.empty() || dq->GetInt("block_size", 0) != 0)
    return std::nullopt;
  Dequantized d{InputOr(*dq, 0), InputOr(*dq, 1), InputOr(*dq, 2), dq->GetInt("axis", 1)};
  if (d.q < 0 || !Is8Bit(g.values[size_t(d.q)].dtype)) return std::nullopt;
  const ConstantData* scale = ConstantOf(g, d.scale);
  if (!scale || scale->dtype != DataType::kFloat32 || (d.zero >= 0 && !ConstantOf(g, d.zero))) return std::nullopt;
  if (d.axis < 0) d.axis += int64_t(g.values[size_t(d.q)].shape.size());
  const Node* cast = Producer(g, d.q);
  if (cast && cast->op_type == "Cast" && cast->guards.empty() && InputOr(*cast, 0) >= 0 &&
      g.values[size_t(cast->inputs[0])].dtype == g.values[size_t(d.q)].dtype) {
    d.q = cast->inputs[0];
  }
  return d;
}

bool PerTensor(const Graph& g, const Dequantized& d) {
  const ConstantData* zero = ConstantOf(g, d.zero);
  return ConstantOf(g, d.scale)->num_elements() == 1 && (!zero || zero->num_elements() == 1);
}

// Per tensor, or one scale (and zero point) per index of `axis` of the constant weights.
bool PerTensorOrAlong(const Graph& g, const Dequantized& d, int64_t axis) {
  if (PerTensor(g, d)) return true;
  const std::vector<int64_t>& shape = g.values[size_t(d.q)].shape;
  const int64_t channels = shape[size_t(axis)];
  const ConstantData* zero = ConstantOf(g, d.zero);
  return d.axis == axis && ConstantOf(g, d.scale)->num_elements() == channels &&
         (!zero || zero->num_elements() == 1 || zero->num_elements() == channels);
}

// The QuantizeLinear at the end of a chain: per tensor, constant parameters.
struct Quantized {
  int scale = -1, zero = -1;
  DataType type = DataType::kUInt8;
};

std::optional<Quantized> QuantizedBy(const Graph& g, const Node& q) {
  if (q.op_type != "QuantizeLinear" || !q.guards.empty() || q.outputs.size() != 1) return std::nullopt;
  Quantized out{InputOr(q, 1), InputOr(q, 2), g.values[size_t(q.outputs[0])].dtype};
  const ConstantData* scale = ConstantOf(g, out.scale);
  const ConstantData* zero = ConstantOf(g, out.zero);
  if (!Is8Bit(out.type) || !scale || scale->dtype != DataType::kFloat32 || scale->num_elements() != 1)
    return std::nullopt;
  if (out.zero >= 0 && (!zero || zero->num_elements() != 1)) return std::nullopt;
  return out;
}

// A Relu or Clip before the QuantizeLinear, as bounds of the quantized output.
struct Bounds {
  float lo, hi;
};

std::optional<Bounds> ActivationBounds(const Graph& g, const Node& act, const Quantized& q) {
  const float scale = ConstantOf(g, q.scale)->f32[0];
  const float zero = float(ElementOf(ConstantOf(g, q.zero), 0));
  const bool is_signed = q.type == DataType::kInt8;
  const float type_min = is_signed ? -128.0f : 0.0f, type_max = is_signed ? 127.0f : 255.0f;
  // QuantizeLinear of a float bound: x / scale in float32, rounded half to even, saturated.
  auto quantize = [&](float v) { return std::clamp(std::nearbyint(v / scale) + zero, type_min, type_max); };
  if (act.op_type == "Relu") return Bounds{std::max(type_min, zero), type_max};
  if (act.op_type != "Clip") return std::nullopt;
  float lo = -INFINITY, hi = INFINITY;
  if (act.Has("min") || act.Has("max")) {  // opset < 11: attributes
    lo = act.GetFloat("min", lo);
    hi = act.GetFloat("max", hi);
  } else {
    for (size_t i : {size_t(1), size_t(2)}) {
      const int v = InputOr(act, i);
      if (v < 0) continue;
      std::optional<float> bound = ScalarConstant(g, v, 1);
      if (!bound) return std::nullopt;
      (i == 1 ? lo : hi) = *bound;
    }
  }
  return Bounds{std::isinf(lo) ? type_min : quantize(lo), std::isinf(hi) ? type_max : quantize(hi)};
}

// The float bias of channel c rounded to the accumulator's scale (x_scale * w_scale[c], times
// Gemm's alpha over beta), as int32; nullopt when one does not fit.
std::optional<std::vector<int64_t>> QuantizedBias(const ConstantData& bias, const ConstantData* x_scale,
                                                  const ConstantData* w_scale, int64_t channels, double factor) {
  std::vector<int64_t> q(static_cast<size_t>(channels));
  for (int64_t c = 0; c < channels; ++c) {
    const double s = ElementOf(x_scale, 0) * ElementOf(w_scale, c);
    if (!(s > 0)) return std::nullopt;
    const double v = std::nearbyint(double(bias.f32[bias.f32.size() == 1 ? 0 : size_t(c)]) * factor / s);
    if (!(std::fabs(v) < 2147483647.0)) return std::nullopt;
    q[size_t(c)] = int64_t(v);
  }
  return q;
}

bool SameConstant(const Graph& g, int a, int b) {
  const ConstantData* x = ConstantOf(g, a);
  const ConstantData* y = ConstantOf(g, b);
  if (!x || !y) return !x && !y && a < 0 && b < 0;
  return x->dtype == y->dtype && x->num_elements() == 1 && y->num_elements() == 1 && ElementOf(x, 0) == ElementOf(y, 0);
}

// Whether a DequantizeLinear and the QuantizeLinear after it quantize alike (the same type, scale
// and zero point, per tensor): then dropping both around data movement changes no value.
bool SameQuantization(const Graph& g, const Dequantized& d, const Node& q, const Quantized& out) {
  if (g.values[size_t(d.q)].dtype != out.type || !SameConstant(g, d.scale, out.scale)) return false;
  // An absent zero point is 0 of the operand's type.
  const double dz = ElementOf(ConstantOf(g, d.zero), 0), qz = ElementOf(ConstantOf(g, out.zero), 0);
  return PerTensor(g, d) && dz == qz && q.inputs.size() >= 2;
}

// The integer node as the graph holds it: trailing omitted inputs dropped, the activation's bounds
// as its epilogue (graph.h's NodeEpilogue on an integer node).
std::vector<Node> Finished(Node n, const std::optional<Bounds>& bounds) {
  while (!n.inputs.empty() && n.inputs.back() < 0) n.inputs.pop_back();
  if (bounds) {
    n.epilogue.activation = FusedActivation::kClip;
    n.epilogue.clip_min = bounds->lo;
    n.epilogue.clip_max = bounds->hi;
  }
  return {std::move(n)};
}

// Operators that only move elements (pick, reorder, reshape): the same on the integers as on the
// values they stand for, whenever input and output quantize alike.
bool MovesData(const Node& n) {
  static const char* const kOps[] = {"MaxPool",   "Reshape", "Flatten", "Transpose", "Squeeze",
                                     "Unsqueeze", "Slice",   "Concat",  "Resize"};
  if (std::find_if(std::begin(kOps), std::end(kOps), [&](const char* op) { return n.op_type == op; }) ==
      std::end(kOps)) {
    return false;
  }
  if (n.op_type == "Resize" && n.GetString("mode", "nearest") != "nearest") return false;
  return n.outputs.size() == 1;
}

// Q(op(DQ(x)...)) for data movement: op on x itself (Concat: every input dequantized alike).
std::vector<Node> RewriteDataMovement(const Graph& g, const Node& op, const Node& q, const Quantized& out) {
  Node n = op;
  n.outputs = {q.outputs[0]};
  const size_t operands = op.op_type == "Concat" ? op.inputs.size() : 1;
  for (size_t i = 0; i < operands; ++i) {
    std::optional<Dequantized> d = DequantizedFrom(g, InputOr(op, i));
    if (!d || !SameQuantization(g, *d, q, out)) return {};
    n.inputs[i] = d->q;
  }
  return {std::move(n)};
}

// Q(act(Add(DQ(a), DQ(b)))) or Mul, and Q(GlobalAveragePool(DQ(x))): ONNX Runtime's QOperator
// forms, one kernel from 8-bit inputs to the 8-bit output.
std::vector<Node> RewriteElementwise(const Graph& g, const Node& op, const Quantized& out, const Node& q,
                                     const std::optional<Bounds>& bounds) {
  Node n;
  n.name = op.name;
  n.outputs = {q.outputs[0]};
  const bool pool = op.op_type == "GlobalAveragePool";
  if (pool && bounds) return {};
  const size_t operands = pool ? 1 : 2;
  if (op.inputs.size() != operands) return {};
  for (size_t i = 0; i < operands; ++i) {
    std::optional<Dequantized> d = DequantizedFrom(g, op.inputs[i]);
    if (!d || !PerTensor(g, *d)) return {};
    n.inputs.insert(n.inputs.end(), {d->q, d->scale, d->zero});
  }
  n.inputs.insert(n.inputs.end(), {out.scale, out.zero});
  n.op_type = pool ? "com.microsoft.QLinearGlobalAveragePool"
                   : (op.op_type == "Add" ? "com.microsoft.QLinearAdd" : "com.microsoft.QLinearMul");
  return Finished(std::move(n), bounds);
}

// The integer node for the chain ending at QuantizeLinear `qi`, or nothing.
std::vector<Node> Rewrite(Graph* g, size_t qi, const std::vector<int>& uses) {
  const Node& q = g->nodes[qi];
  std::optional<Quantized> out = QuantizedBy(*g, q);
  if (!out) return {};
  auto single_use = [&](int value) { return uses[size_t(value)] == 1 && !IsGraphOutput(*g, value); };
  const Node* op = Producer(*g, q.inputs[0]);
  if (!op || !single_use(q.inputs[0]) || !op->guards.empty()) return {};
  std::optional<Bounds> bounds;
  if (op->op_type == "Relu" || op->op_type == "Clip") {
    bounds = ActivationBounds(*g, *op, *out);
    if (!bounds || InputOr(*op, 0) < 0 || !single_use(op->inputs[0])) return {};
    op = Producer(*g, op->inputs[0]);
    if (!op || !op->guards.empty()) return {};
  }
  if (MovesData(*op)) return bounds ? std::vector<Node>{} : RewriteDataMovement(*g, *op, q, *out);
  if (op->op_type == "Add" || op->op_type == "Mul" || op->op_type == "GlobalAveragePool")
    return RewriteElementwise(*g, *op, *out, q, bounds);
  const bool conv = op->op_type == "Conv", gemm = op->op_type == "Gemm", matmul = op->op_type == "MatMul";
  if (!(conv || gemm || matmul) || op->inputs.size() < 2) return {};
  std::optional<Dequantized> x = DequantizedFrom(*g, op->inputs[0]);
  std::optional<Dequantized> w = DequantizedFrom(*g, op->inputs[1]);
  if (!x || !w || !PerTensor(*g, *x)) return {};
  // A product of two activations (attention's): both per tensor, one type; a batched int8 product.
  if (!ConstantOf(*g, w->q) &&
      !(matmul && PerTensor(*g, *w) && g->values[size_t(w->q)].dtype == g->values[size_t(x->q)].dtype)) {
    return {};
  }
  const std::vector<int64_t>& w_shape = g->values[size_t(w->q)].shape;
  if (gemm && op->GetInt("transA", 0)) return {};
  const bool trans_b = gemm && op->GetInt("transB", 0);
  const bool weights = ConstantOf(*g, w->q) != nullptr;
  if (w_shape.size() < 2 || (weights && !conv && w_shape.size() != 2)) return {};
  const int64_t channel_axis = conv || trans_b ? 0 : 1;
  if (weights && !PerTensorOrAlong(*g, *w, channel_axis)) return {};
  const int64_t channels = w_shape[size_t(channel_axis)];

  Node n;
  n.name = op->name;
  n.outputs = {q.outputs[0]};
  n.inputs = {x->q, x->scale, x->zero, w->q, w->scale, w->zero};
  const int bias_in = InputOr(*op, 2);
  int bias = -1;
  if ((conv || gemm) && bias_in >= 0) {
    const ConstantData* c = ConstantOf(*g, bias_in);
    if (!c || c->dtype != DataType::kFloat32 || (c->num_elements() != channels && c->num_elements() != 1)) return {};
    const double factor = gemm ? double(op->GetFloat("beta", 1.0f)) / double(op->GetFloat("alpha", 1.0f)) : 1.0;
    std::optional<std::vector<int64_t>> ints =
        QuantizedBias(*c, ConstantOf(*g, x->scale), ConstantOf(*g, w->scale), channels, factor);
    if (!ints) return {};
    ConstantData data;
    data.dtype = DataType::kInt32;
    data.shape = {channels};
    data.i64 = std::move(*ints);
    bias = g->AddConstant(g->values[size_t(bias_in)].name + ".int32", std::move(data));
  }
  // `op` may have moved: AddConstant grows the values, not the nodes, so it has not.
  if (conv) {
    n.op_type = "QLinearConv";
    n.attrs = op->attrs;
    n.inputs.insert(n.inputs.end(), {out->scale, out->zero, bias});
  } else if (gemm) {
    n.op_type = "com.microsoft.QGemm";
    for (const char* attr : {"alpha", "transA", "transB"}) {
      if (op->Has(attr)) n.attrs[attr] = op->attrs.at(attr);
    }
    n.inputs.insert(n.inputs.end(), {bias, out->scale, out->zero});
  } else {
    n.op_type = "QLinearMatMul";
    n.inputs.insert(n.inputs.end(), {out->scale, out->zero});
  }
  return Finished(std::move(n), bounds);
}

// A QLinearAdd of an int8 task's output (its only reader, quantized alike) and a residual of the
// output's shape: the add becomes the task's epilogue (operators/node_workload.h, kFusedResidual),
// the task taking the add's place (the residual may be computed after the task's own inputs).
bool FuseResidual(Graph* g, size_t add_index, const std::vector<int>& uses) {
  const Node& add = g->nodes[add_index];
  if (add.op_type != "com.microsoft.QLinearAdd" || !add.guards.empty() || add.inputs.size() < 7) return false;
  for (size_t operand : {size_t(0), size_t(3)}) {
    const int value = add.inputs[operand], residual = add.inputs[3 - operand];
    const Node* task = Producer(*g, value);
    if (!task || uses[size_t(value)] != 1 || IsGraphOutput(*g, value) || !task->guards.empty() ||
        task->epilogue.activation != FusedActivation::kNone || task->inputs.size() > compiler::kFusedResidual) {
      continue;
    }
    const compiler::IntegerOperands* in = compiler::IntegerOperandsOf(task->op_type);
    compiler::Workload w;
    if (!in || in->y_scale < 0 || !compiler::NodeWorkload(*g, *task, &w) || w.is_batch_matmul()) continue;
    // The add reads the task's output with the parameters the task wrote it with.
    if (!SameConstant(*g, InputOr(add, operand + 1), InputOr(*task, size_t(in->y_scale))) ||
        !SameConstant(*g, InputOr(add, operand + 2), InputOr(*task, size_t(in->y_zero)))) {
      continue;
    }
    if (residual < 0 || g->values[size_t(residual)].shape != g->values[size_t(value)].shape ||
        g->values[size_t(add.outputs[0])].shape != g->values[size_t(value)].shape) {
      continue;
    }
    Node fused = *task;
    fused.inputs.resize(compiler::kFusedResidual, -1);
    fused.inputs.insert(fused.inputs.end(), {residual, add.inputs[4 - operand], InputOr(add, 5 - operand),
                                             InputOr(add, 6), InputOr(add, 7)});
    fused.outputs = add.outputs;
    fused.epilogue = add.epilogue;
    const size_t task_index = size_t(g->values[size_t(value)].producer);
    ReplaceNode(g, add_index, {std::move(fused)});
    ReplaceNode(g, task_index, {});
    g->values[size_t(value)].producer = -1;
    return true;
  }
  return false;
}

}  // namespace

int QdqToInteger(Graph* g) {
  const std::vector<int> uses = CountUses(*g);
  int rewritten = RewriteNodes(g, [&uses](Graph* graph, size_t i) { return Rewrite(graph, i, uses); });
  // The float nodes the chains left read the integer values too: gone, each value's readers count.
  if (rewritten > 0) RemoveDeadNodes(g);
  const std::vector<int> live_uses = CountUses(*g);
  for (size_t i = 0; i < g->nodes.size(); ++i) {
    if (FuseResidual(g, i, live_uses)) {
      ++rewritten;
      --i;  // the task before it is gone: the fused node stands one place earlier
    }
  }
  return rewritten;
}

}  // namespace tunefarm::graph
