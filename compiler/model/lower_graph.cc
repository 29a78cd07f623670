#include "compiler/model/lower_graph.h"

#include <cstring>
#include <map>
#include <set>

#include "compiler/model/node_workload.h"
#include "compiler/ir/ir_operators.h"
#include "compiler/ops/ops.h"
#include "tunefarm/compiler/kernel.h"

namespace tunefarm::compiler {
namespace {

using graph::DataType;
using graph::Node;
using runtime::ArtifactTensor;
using runtime::ElementType;
using TensorFn = std::function<ir::Tensor(const std::vector<ir::Tensor>&)>;

ElementType ToElementType(DataType t) {
  switch (t) {
    case DataType::kFloat32: return ElementType::kFloat32;
    case DataType::kInt64: return ElementType::kInt64;
    case DataType::kInt32: return ElementType::kInt32;
    case DataType::kInt8: return ElementType::kInt8;
    case DataType::kUInt8: return ElementType::kUInt8;
    case DataType::kBool: return ElementType::kBool;
  }
  return ElementType::kFloat32;
}

// Kernels see bool as its storage byte.
ir::Type ToIRType(ElementType t) {
  switch (t) {
    case ElementType::kFloat32: return ir::Type::Float(32);
    case ElementType::kInt64: return ir::Type::Int(64);
    case ElementType::kInt32: return ir::Type::Int(32);
    case ElementType::kInt8: return ir::Type::Int(8);
    case ElementType::kUInt8:
    case ElementType::kBool: return ir::Type{ir::Type::kUInt, 8, 1};
  }
  return ir::Type::Float(32);
}


class GraphLowering {
 public:
  GraphLowering(const graph::Graph& g, const Target& t, const LowerGraphOptions& o)
      : g_(g), target_(t), options_(o), values_(g.values.size()) {}

  Result<ModelPlan> Run();

 private:
  struct ValueState {
    std::map<int64_t, int> by_block;  // layout block -> tensor
    int64_t home_block = 0;
  };

  // --- tensors ---
  int NewTensor(const std::string& name, ArtifactTensor::Kind kind, ElementType dtype, std::vector<int64_t> shape);
  int AddParam(const std::string& name, ElementType dtype, std::vector<int64_t> shape, const void* data, size_t bytes);
  int ParamFromConstant(const std::string& name, const graph::ConstantData& c);
  int ParamFloats(const std::string& name, std::vector<int64_t> shape, const std::vector<float>& v) {
    return AddParam(name, ElementType::kFloat32, std::move(shape), v.data(), v.size() * 4);
  }
  int View(int tensor, const std::vector<int64_t>& shape, const std::string& name);
  const ArtifactTensor& T(int id) const { return plan_.artifact.tensors[size_t(id)]; }
  void Define(int value, int tensor, int64_t block) {
    values_[size_t(value)].by_block[block] = tensor;
    values_[size_t(value)].home_block = block;
  }

  // The tensor of a value in a layout, converting (once) when needed.
  Result<int> Get(int value, int64_t block);
  // The layout a layout-agnostic consumer reads a value in.
  int64_t Preferred(int value) const { return options_.plan_layouts ? values_[size_t(value)].home_block : 0; }
  const graph::Value& V(int value) const { return g_.values[size_t(value)]; }

  // --- kernels ---
  int Emit(const std::string& op, const std::vector<int>& inputs, const TensorFn& fn, ElementType out_dtype,
           const std::string& out_name);

  // --- nodes ---
  Status LowerNode(const Node& n);
  Status LowerTemplate(const Node& n, const Workload& w);
  Status LowerUnary(const Node& n);
  Status LowerBinary(const Node& n);
  Status LowerPool(const Node& n);
  Status LowerConcat(const Node& n);
  Status LowerGeneric(const Node& n);
  Status LowerOutputs();
  Result<int64_t> ChooseConfig(const Workload& w, std::string* source);
  Status Fail(const Node& n, const std::string& why) const {
    return Status::Unimplemented(g_.Describe(n) + ", opset " + std::to_string(g_.opset) + ": " + why);
  }

  const graph::Graph& g_;
  const Target& target_;
  const LowerGraphOptions& options_;
  std::vector<ValueState> values_;
  ModelPlan plan_;
  std::set<std::string> warned_;
  Status emit_error_;  // the first kernel whose type did not match its output (see Emit)
};

int GraphLowering::NewTensor(const std::string& name, ArtifactTensor::Kind kind, ElementType dtype, std::vector<int64_t> shape) {
  ArtifactTensor t;
  t.name = name;
  t.kind = kind;
  t.dtype = dtype;
  t.shape = std::move(shape);
  plan_.artifact.tensors.push_back(std::move(t));
  return int(plan_.artifact.tensors.size() - 1);
}

int GraphLowering::AddParam(const std::string& name, ElementType dtype, std::vector<int64_t> shape, const void* data,
                            size_t bytes) {
  std::string& blob = plan_.artifact.params;
  blob.resize((blob.size() + 63) / 64 * 64, '\0');  // every parameter 64-byte aligned
  int id = NewTensor(name, ArtifactTensor::kParam, dtype, std::move(shape));
  plan_.artifact.tensors[size_t(id)].param_offset = int64_t(blob.size());
  blob.append(static_cast<const char*>(data), bytes);
  return id;
}

int GraphLowering::ParamFromConstant(const std::string& name, const graph::ConstantData& c) {
  ElementType dt = ToElementType(c.dtype);
  if (c.dtype == DataType::kFloat32) return AddParam(name, dt, c.shape, c.f32.data(), c.f32.size() * 4);
  std::string bytes;
  for (int64_t v : c.i64) {
    switch (runtime::ElementSize(dt)) {
      case 8: bytes.append(reinterpret_cast<const char*>(&v), 8); break;
      case 4: {
        int32_t x = int32_t(v);
        bytes.append(reinterpret_cast<const char*>(&x), 4);
        break;
      }
      default: bytes.push_back(char(v)); break;
    }
  }
  return AddParam(name, dt, c.shape, bytes.data(), bytes.size());
}

int GraphLowering::View(int tensor, const std::vector<int64_t>& shape, const std::string& name) {
  int base = T(tensor).view_of >= 0 ? T(tensor).view_of : tensor;
  int id = NewTensor(name, ArtifactTensor::kIntermediate, T(tensor).dtype, shape);
  plan_.artifact.tensors[size_t(id)].view_of = base;
  return id;
}

Result<int> GraphLowering::Get(int value, int64_t block) {
  ValueState& s = values_[size_t(value)];
  const graph::Value& v = V(value);
  if (s.by_block.empty() && v.constant) Define(value, ParamFromConstant(v.name, *v.constant), 0);
  auto it = s.by_block.find(block);
  if (it != s.by_block.end()) return it->second;
  if (s.by_block.empty()) return Status::Internal("value '" + v.name + "' is read before it is computed");
  const int src = s.by_block.at(s.home_block);
  const int64_t from = s.home_block;
  int t = Emit("layout_transform", {src},
               [&](const std::vector<ir::Tensor>& in) { return ops::ChangeLayout(in[0], v.shape, from, block); },
               T(src).dtype, v.name + (block ? ".nchw" + std::to_string(block) + "c" : ".nchw"));
  s.by_block[block] = t;
  return t;
}

int GraphLowering::Emit(const std::string& op, const std::vector<int>& inputs, const TensorFn& fn, ElementType out_dtype,
                        const std::string& out_name) {
  std::vector<ir::Tensor> ph;
  for (size_t k = 0; k < inputs.size(); ++k) {
    ph.push_back(te::Placeholder("in" + std::to_string(k), T(inputs[k]).shape, ToIRType(T(inputs[k]).dtype)));
  }
  ir::Tensor out = fn(ph);
  if (out->dtype != ToIRType(out_dtype) && emit_error_.ok()) {
    // A definition that computes another type than the graph says: refuse rather than let the
    // kernel write past a buffer sized for the graph's type.
    emit_error_ = Status::Unimplemented(op + " on " + runtime::ElementTypeName(out_dtype) + " tensors is not supported (its kernel computes " +
                                        out->dtype.ToString() + ")");
  }
  int id = NewTensor(out_name, ArtifactTensor::kIntermediate, out_dtype, out->shape);
  if (out->NumElements() == 0) return id;  // nothing to compute into an empty tensor
  PlannedKernel k;
  k.op = op;
  k.def.schedule = ops::ScheduleGeneric({out}, target_);
  k.def.args = ph;
  k.def.args.push_back(out);
  k.def.roles.assign(ph.size(), BufferRole::kInput);
  k.def.roles.push_back(BufferRole::kOutput);
  k.args = inputs;
  k.args.push_back(id);
  plan_.kernels.push_back(std::move(k));
  return id;
}

Result<int64_t> GraphLowering::ChooseConfig(const Workload& w, std::string* source) {
  const std::string key = w.Key();
  if (options_.configs) {
    auto best = options_.configs->Best(key, target_);
    if (best.ok()) {
      auto space = GetConfigSpace(w, target_);
      // A record from another target (matched by model or key) counts only where its index means
      // the same config in this target's space.
      auto cfg = space.ok() && best->config_index >= 0 && best->config_index < space->size() ? space->Get(best->config_index)
                                                                                                : Result<Config>(Status::NotFound(""));
      if (cfg.ok() && (best->config_json.empty() || cfg->ToJson() == best->config_json) && space->IsValid(*cfg)) {
        *source = "records";
        return best->config_index;
      }
    } else if (best.status().code() != StatusCode::kNotFound) {
      return best.status();
    }
  }
  if (warned_.insert(key).second && options_.warn) {
    options_.warn("warning: no tuning record for " + key + " on " + target_.ToString() + "; using the fallback config");
  }
  *source = "fallback";
  return FallbackConfigIndex(w, target_);
}

Result<ModelPlan> GraphLowering::Run() {
  plan_.artifact.target = target_.ToString();
  for (int in : g_.inputs) {
    const graph::Value& v = V(in);
    Define(in, NewTensor(v.name, ArtifactTensor::kInput, ToElementType(v.dtype), v.shape), 0);
    plan_.artifact.inputs.push_back(values_[size_t(in)].by_block[0]);
  }
  for (const Node& n : g_.nodes) {
    bool all_constant = !n.outputs.empty();
    for (int o : n.outputs) all_constant = all_constant && V(o).constant != nullptr;
    if (all_constant) continue;  // folded by shape inference; read as parameters
    TUNEFARM_RETURN_IF_ERROR(LowerNode(n));
    if (!emit_error_.ok()) return Status(emit_error_.code(), g_.Describe(n) + ": " + emit_error_.message());
  }
  TUNEFARM_RETURN_IF_ERROR(LowerOutputs());
  return std::move(plan_);
}

Status GraphLowering::LowerOutputs() {
  std::set<int> claimed;
  for (int out : g_.outputs) {
    TUNEFARM_ASSIGN_OR_RETURN(int t, Get(out, 0));
    ArtifactTensor& tensor = plan_.artifact.tensors[size_t(t)];
    bool own = tensor.kind == ArtifactTensor::kIntermediate && tensor.view_of < 0 && !claimed.count(t);
    if (!own) {
      // An output that is an input, a parameter, a view or another output gets its own copy.
      t = Emit("copy", {t}, [&](const std::vector<ir::Tensor>& in) { return ops::Reshape(in[0], in[0]->shape); },
               T(t).dtype, V(out).name);
    }
    plan_.artifact.tensors[size_t(t)].kind = ArtifactTensor::kOutput;
    plan_.artifact.tensors[size_t(t)].name = V(out).name;
    plan_.artifact.tensors[size_t(t)].shape = V(out).shape;
    claimed.insert(t);
    plan_.artifact.outputs.push_back(t);
  }
  return Status::OK();
}

Status GraphLowering::LowerTemplate(const Node& n, const Workload& w) {
  std::string source;
  TUNEFARM_ASSIGN_OR_RETURN(int64_t index, ChooseConfig(w, &source));
  TUNEFARM_ASSIGN_OR_RETURN(const OpTemplate* tmpl, FindTemplate(w.template_name));
  ConfigSpace space = tmpl->Space(w, target_);
  TUNEFARM_ASSIGN_OR_RETURN(Config cfg, space.Get(index));
  Epilogue ep;
  const bool has_bias = n.inputs.size() > 2 && n.inputs[2] >= 0;
  const bool has_residual = n.inputs.size() > 3 && n.inputs[3] >= 0;
  ep.bias = has_bias;
  ep.residual = has_residual;
  std::string act = n.GetString("_activation", "");
  if (act == "relu") ep.activation = Activation::kRelu;
  if (act == "relu6") ep.activation = Activation::kRelu6;
  if (act == "clip") {
    ep.activation = Activation::kClip;
    ep.clip_min = n.GetFloat("_clip_min", 0.0f);
    ep.clip_max = n.GetFloat("_clip_max", 6.0f);
  }
  KernelDef def = tmpl->Instantiate(w, ep, cfg, target_);
  const graph::ConstantData& wc = *V(n.inputs[1]).constant;
  const ir::Tensor& out_t = def.args.back();
  std::vector<int> args;
  std::vector<float> bias;
  bool is_conv = n.op_type == "Conv";
  int64_t channels = is_conv ? wc.shape[0] : w.dense.out_features;
  if (has_bias) {
    const auto& b = *V(n.inputs[2]).constant;
    for (int64_t k = 0; k < channels; ++k) bias.push_back(b.f32[b.f32.size() == 1 ? 0 : size_t(k)]);
  }
  if (is_conv) {
    const int64_t ic_bn = def.args[0]->shape.back(), oc_bn = out_t->shape.back();
    TUNEFARM_ASSIGN_OR_RETURN(int x, Get(n.inputs[0], ic_bn));
    args.push_back(x);
    // Weights packed to the template's layout (see the template's header comment).
    const auto& ws = wc.shape;  // K, C/groups, KH, KW
    const int64_t kh = ws[2], kw = ws[3], cg = ws[1];
    std::vector<float> packed(size_t(def.args[1]->NumElements()));
    const bool depthwise = w.template_name == "depthwise_conv2d_nchwc";
    for (int64_t k = 0; k < ws[0]; ++k) {
      for (int64_t c = 0; c < cg; ++c) {
        for (int64_t h = 0; h < kh; ++h) {
          for (int64_t x2 = 0; x2 < kw; ++x2) {
            float v = wc.f32[size_t(((k * cg + c) * kh + h) * kw + x2)];
            size_t at = depthwise ? size_t(((k / oc_bn * kh + h) * kw + x2) * oc_bn + k % oc_bn)
                                  : size_t(((((k / oc_bn) * (cg / ic_bn) + c / ic_bn) * kh + h) * kw + x2) * ic_bn * oc_bn +
                                           (c % ic_bn) * oc_bn + k % oc_bn);
            packed[at] = v;
          }
        }
      }
    }
    args.push_back(ParamFloats(V(n.inputs[1]).name + ".packed", def.args[1]->shape, packed));
    if (has_bias) args.push_back(ParamFloats(V(n.inputs[2]).name, def.args[2]->shape, bias));
    if (has_residual) {
      TUNEFARM_ASSIGN_OR_RETURN(int r, Get(n.inputs[3], oc_bn));
      args.push_back(r);
    }
    int out = NewTensor(V(n.outputs[0]).name, ArtifactTensor::kIntermediate, ElementType::kFloat32, out_t->shape);
    args.push_back(out);
    Define(n.outputs[0], out, oc_bn);
  } else {
    TUNEFARM_ASSIGN_OR_RETURN(int x, Get(n.inputs[0], 0));
    args.push_back(x);
    const bool trans_b = n.op_type == "Gemm" && n.GetInt("transB", 0);
    const int64_t in = w.dense.in_features, outf = w.dense.out_features;
    std::vector<float> packed(size_t(def.args[1]->NumElements()), 0.0f);
    const auto& ps = def.args[1]->shape;
    for (int64_t o = 0; o < outf; ++o) {
      for (int64_t k = 0; k < in; ++k) {
        float v = trans_b ? wc.f32[size_t(o * in + k)] : wc.f32[size_t(k * outf + o)];
        if (ps.size() == 3) packed[size_t(((o / ps[2]) * in + k) * ps[2] + o % ps[2])] = v;  // dense_pack
        else packed[size_t(o * in + k)] = v;                                                 // dense_nopack
      }
    }
    args.push_back(ParamFloats(V(n.inputs[1]).name + ".packed", ps, packed));
    if (has_bias) args.push_back(ParamFloats(V(n.inputs[2]).name, def.args[2]->shape, bias));
    if (has_residual) {
      TUNEFARM_ASSIGN_OR_RETURN(int r, Get(n.inputs[3], 0));
      args.push_back(r);
    }
    int out = NewTensor(V(n.outputs[0]).name, ArtifactTensor::kIntermediate, ElementType::kFloat32, out_t->shape);
    args.push_back(out);
    Define(n.outputs[0], out, 0);
  }
  PlannedKernel k;
  k.op = w.template_name + (ep.ToString() == "none" ? "" : "+" + ep.ToString());
  k.def = std::move(def);
  k.args = std::move(args);
  k.workload = w.Key();
  k.config_index = index;
  k.config_source = source;
  plan_.tunable_kernels++;
  if (source == "records") plan_.from_records++;
  plan_.kernels.push_back(std::move(k));
  return Status::OK();
}

// --- node handlers ---------------------------------------------------------------------------

// A Gemm the dense template computes as is: unit alpha/beta and a per-output-channel bias.
bool GemmIsDense(const graph::Graph& g, const Node& n) {
  if (n.op_type != "Gemm") return true;
  if (n.GetFloat("alpha", 1.0f) != 1.0f || n.GetFloat("beta", 1.0f) != 1.0f) return false;
  if (n.inputs.size() < 3 || n.inputs[2] < 0) return true;
  const graph::Value& c = g.values[size_t(n.inputs[2])];
  return c.constant && c.constant->dtype == DataType::kFloat32 && c.shape.size() <= 2 && !c.shape.empty() &&
         (c.constant->num_elements() == c.shape.back()) && c.constant->num_elements() > 1;
}

ops::UnaryParams FusedActivation(const Node& n) {
  ops::UnaryParams p;
  std::string act = n.GetString("_activation", "");
  if (act == "relu") p.kind = ops::UnaryKind::kRelu;
  if (act == "relu6" || act == "clip") {
    p.kind = ops::UnaryKind::kClip;
    p.lo = n.GetFloat("_clip_min", 0.0f);
    p.hi = n.GetFloat("_clip_max", 6.0f);
  }
  return p;
}

Status GraphLowering::LowerNode(const Node& n) {
  const std::string& op = n.op_type;
  Workload w;
  if ((op == "Conv" || op == "Gemm" || op == "MatMul") && NodeWorkload(g_, n, &w) && GemmIsDense(g_, n) &&
      GetConfigSpace(w, target_).ok()) {
    return LowerTemplate(n, w);
  }
  static const std::set<std::string> kUnary = {"Relu", "Sigmoid", "Tanh", "LeakyRelu", "HardSigmoid", "HardSwish", "Clip"};
  if (kUnary.count(op)) return LowerUnary(n);
  if (op == "Add" || op == "Sub" || op == "Mul" || op == "Div") return LowerBinary(n);
  if (op == "MaxPool" || op == "AveragePool" || op == "GlobalAveragePool") return LowerPool(n);
  if (op == "Concat") return LowerConcat(n);
  return LowerGeneric(n);
}

Status GraphLowering::LowerUnary(const Node& n) {
  ops::UnaryParams p;
  const std::string& op = n.op_type;
  if (op == "Relu") p.kind = ops::UnaryKind::kRelu;
  if (op == "Sigmoid") p.kind = ops::UnaryKind::kSigmoid;
  if (op == "Tanh") p.kind = ops::UnaryKind::kTanh;
  if (op == "HardSwish") p.kind = ops::UnaryKind::kHardSwish;
  if (op == "LeakyRelu") {
    p.kind = ops::UnaryKind::kLeakyRelu;
    p.alpha = n.GetFloat("alpha", 0.01f);
  }
  if (op == "HardSigmoid") {
    p.kind = ops::UnaryKind::kHardSigmoid;
    p.alpha = n.GetFloat("alpha", 0.2f);
    p.beta = n.GetFloat("beta", 0.5f);
  }
  if (op == "Clip") {
    p.kind = ops::UnaryKind::kClip;
    p.lo = n.GetFloat("min", p.lo);
    p.hi = n.GetFloat("max", p.hi);
    std::vector<int> bound_inputs;  // bounds computed at run time: read from their tensors
    for (size_t i = 1; i < n.inputs.size() && i < 3; ++i) {
      if (n.inputs[i] < 0) continue;
      const auto& c = V(n.inputs[i]).constant;
      if (!c) {
        if (V(n.inputs[i]).shape.size() > 1 || (V(n.inputs[i]).shape.size() == 1 && V(n.inputs[i]).shape[0] != 1)) {
          return Fail(n, "Clip bounds must be scalars");
        }
        bound_inputs.push_back(int(i));
        continue;
      }
      if (c->num_elements() != 1) return Fail(n, "Clip bounds must be scalars");
      float v = c->dtype == DataType::kFloat32 ? c->f32[0] : float(c->i64[0]);
      (i == 1 ? p.lo : p.hi) = v;
    }
    if (!bound_inputs.empty()) {
      std::vector<int> in;
      TUNEFARM_ASSIGN_OR_RETURN(int x, Get(n.inputs[0], 0));
      in.push_back(x);
      for (int i : bound_inputs) {
        TUNEFARM_ASSIGN_OR_RETURN(int t, Get(n.inputs[size_t(i)], 0));
        in.push_back(t);
      }
      const ops::UnaryParams fixed = p;
      int t = Emit(op, in, [&](const std::vector<ir::Tensor>& ts) {
        return te::Compute(ts[0]->name + ".clip", ts[0]->shape, [&](const std::vector<ir::Expr>& i) {
          ir::Expr v = ops::ApplyUnary(te::Read(ts[0], i), fixed);
          for (size_t b = 0; b < bound_inputs.size(); ++b) {
            ir::Expr bound = ops::ReadScalar(ts[1 + b]);
            v = bound_inputs[b] == 1 ? ir::max(v, bound) : ir::min(v, bound);  // NOLINT
          }
          return v;
        });
      }, ToElementType(V(n.outputs[0]).dtype), V(n.outputs[0]).name);
      Define(n.outputs[0], t, 0);
      return Status::OK();
    }
  }
  const int in = n.inputs[0];
  const int64_t block = Preferred(in);
  TUNEFARM_ASSIGN_OR_RETURN(int x, Get(in, block));
  int t = Emit(op, {x}, [&](const std::vector<ir::Tensor>& i) { return ops::Unary(i[0], p); },
               ToElementType(V(n.outputs[0]).dtype), V(n.outputs[0]).name);
  Define(n.outputs[0], t, block);
  return Status::OK();
}

Status GraphLowering::LowerBinary(const Node& n) {
  static const std::map<std::string, ops::BinaryKind> kKinds = {
      {"Add", ops::BinaryKind::kAdd}, {"Sub", ops::BinaryKind::kSub}, {"Mul", ops::BinaryKind::kMul}, {"Div", ops::BinaryKind::kDiv}};
  const ops::BinaryKind kind = kKinds.at(n.op_type);
  const int a = n.inputs[0], b = n.inputs[1];
  const auto& out_shape = V(n.outputs[0]).shape;
  // Blocked when one operand lives blocked and the other either has its shape or is a constant
  // that broadcasts per channel (it is then packed to the blocked shape at compile time).
  int64_t block = 0;
  int ta = -1, tb = -1;
  for (int primary : {a, b}) {
    const int other = primary == a ? b : a;
    const int64_t k = V(primary).constant ? 0 : Preferred(primary);
    if (k == 0 || block != 0 || V(primary).shape != out_shape) continue;
    const graph::Value& ov = V(other);
    int t_other = -1;
    if (!ov.constant && ov.shape == out_shape) {
      TUNEFARM_ASSIGN_OR_RETURN(t_other, Get(other, k));
    } else if (ov.constant && ov.constant->dtype == DataType::kFloat32 && ov.shape.size() <= 4) {
      // Right-aligned against N C H W: only the channel axis may exceed 1.
      bool per_channel = true;
      for (size_t i = 0; i < ov.shape.size(); ++i) {
        size_t axis = 4 - ov.shape.size() + i;
        per_channel = per_channel && (ov.shape[i] == 1 || (axis == 1 && ov.shape[i] == out_shape[1]));
      }
      if (!per_channel) continue;
      const int64_t channels = out_shape[1];
      std::vector<float> packed(static_cast<size_t>(channels));
      for (int64_t c = 0; c < channels; ++c) packed[size_t(c)] = ov.constant->f32[ov.constant->f32.size() == 1 ? 0 : size_t(c)];
      t_other = ParamFloats(ov.name + ".nchw" + std::to_string(k) + "c", {1, channels / k, 1, 1, k}, packed);
    } else {
      continue;
    }
    TUNEFARM_ASSIGN_OR_RETURN(int t_primary, Get(primary, k));
    block = k;
    ta = primary == a ? t_primary : t_other;
    tb = primary == a ? t_other : t_primary;
  }
  if (block == 0) {
    TUNEFARM_ASSIGN_OR_RETURN(ta, Get(a, 0));
    TUNEFARM_ASSIGN_OR_RETURN(tb, Get(b, 0));
  }
  int t = Emit(n.op_type, {ta, tb}, [&](const std::vector<ir::Tensor>& i) { return ops::Binary(i[0], i[1], kind); },
               ToElementType(V(n.outputs[0]).dtype), V(n.outputs[0]).name);
  Define(n.outputs[0], t, block);
  return Status::OK();
}

Status GraphLowering::LowerPool(const Node& n) {
  if (n.outputs.size() > 1) return Fail(n, "the Indices output of MaxPool is not supported");
  const int in = n.inputs[0];
  const auto& xs = V(in).shape;
  const int64_t block = xs.size() == 4 ? Preferred(in) : 0;
  TUNEFARM_ASSIGN_OR_RETURN(int x, Get(in, block));
  std::vector<int64_t> spatial;
  for (size_t d = 2; d < (block ? 4 : xs.size()); ++d) spatial.push_back(int64_t(d));
  const auto out_shape = ops::PhysicalShape(V(n.outputs[0]).shape, block);
  TensorFn fn;
  if (n.op_type == "GlobalAveragePool") {
    fn = [&](const std::vector<ir::Tensor>& i) { return ops::GlobalAveragePool(i[0], spatial); };
  } else {
    ops::PoolParams p;
    p.is_max = n.op_type == "MaxPool";
    p.spatial_axes = spatial;
    p.kernel = n.GetInts("kernel_shape");
    p.strides = n.GetInts("strides");
    p.dilations = n.GetInts("dilations");
    auto pads = n.GetInts("pads");
    p.pads_begin.assign(pads.begin(), pads.begin() + int64_t(spatial.size()));
    p.pads_end.assign(pads.begin() + int64_t(spatial.size()), pads.end());
    p.count_include_pad = n.GetInt("count_include_pad", 0) != 0;
    fn = [p, out_shape](const std::vector<ir::Tensor>& i) { return ops::Pool(i[0], p, out_shape); };
  }
  int t = Emit(n.op_type, {x}, fn, ToElementType(V(n.outputs[0]).dtype), V(n.outputs[0]).name);
  Define(n.outputs[0], t, block);
  return Status::OK();
}

Status GraphLowering::LowerConcat(const Node& n) {
  const int64_t axis = n.GetInts("_axis", {0})[0];
  int64_t block = 0;
  if (axis == 1 && V(n.outputs[0]).shape.size() == 4 && options_.plan_layouts) {
    block = V(n.inputs[0]).constant ? 0 : Preferred(n.inputs[0]);
    for (int in : n.inputs) {
      if (V(in).constant || Preferred(in) != block || V(in).shape[1] % std::max<int64_t>(block, 1) != 0) block = 0;
    }
  }
  std::vector<int> ts;
  for (int in : n.inputs) {
    TUNEFARM_ASSIGN_OR_RETURN(int t, Get(in, block));
    ts.push_back(t);
  }
  int t = Emit("Concat", ts, [&](const std::vector<ir::Tensor>& i) { return ops::Concat(i, axis); },
               ToElementType(V(n.outputs[0]).dtype), V(n.outputs[0]).name);
  Define(n.outputs[0], t, block);
  return Status::OK();
}

Status GraphLowering::LowerGeneric(const Node& n) {
  const std::string& op = n.op_type;
  const graph::Value& out = V(n.outputs[0]);
  const ElementType out_dt = ToElementType(out.dtype);
  auto plain = [&](size_t i) { return Get(n.inputs[i], 0); };
  auto emit = [&](const std::vector<int>& in, const TensorFn& fn) {
    Define(n.outputs[0], Emit(op, in, fn, out_dt, out.name), 0);
    return Status::OK();
  };
  if (op == "Dropout") {
    bool training = false;
    if (n.inputs.size() > 2 && n.inputs[2] >= 0) {
      const auto& c = V(n.inputs[2]).constant;
      if (!c) return Fail(n, "a training_mode input that is not a constant");
      training = c->i64.size() == 1 && c->i64[0] != 0;
    }
    float ratio = n.GetFloat("ratio", 0.5f);
    if (n.inputs.size() > 1 && n.inputs[1] >= 0 && V(n.inputs[1]).constant) ratio = V(n.inputs[1]).constant->f32.at(0);
    if (training && ratio > 0.0f) return Fail(n, "Dropout in training mode draws random masks; only inference is supported");
    if (n.outputs.size() > 1) {
      const graph::Value& mask = V(n.outputs[1]);
      std::vector<uint8_t> ones(size_t(graph::ConstantData{DataType::kBool, mask.shape, {}, {}}.num_elements()), 1);
      Define(n.outputs[1], AddParam(mask.name, ElementType::kBool, mask.shape, ones.data(), ones.size()), 0);
    }
  }
  static const std::set<std::string> kViews = {"Identity", "Dropout", "Flatten", "Reshape", "Squeeze", "Unsqueeze"};
  if (kViews.count(op)) {
    TUNEFARM_ASSIGN_OR_RETURN(int x, plain(0));
    Define(n.outputs[0], View(x, out.shape, out.name), 0);
    return Status::OK();
  }
  if (op == "BatchNormalization") {
    if (n.outputs.size() > 1 || n.GetInt("training_mode", 0)) return Fail(n, "training-mode BatchNormalization is not supported");
    std::vector<int> in;
    for (size_t i = 0; i < 5; ++i) {
      TUNEFARM_ASSIGN_OR_RETURN(int t, plain(i));
      in.push_back(t);
    }
    float eps = n.GetFloat("epsilon", 1e-5f);
    return emit(in, [eps](const std::vector<ir::Tensor>& i) { return ops::BatchNorm(i[0], i[1], i[2], i[3], i[4], eps); });
  }
  if (op == "Softmax") {
    const int64_t rank = int64_t(out.shape.size());
    int64_t axis = n.GetInt("axis", g_.opset >= 13 ? -1 : 1);
    if (axis < 0) axis += rank;
    const int64_t last = g_.opset >= 13 ? axis : rank - 1;
    TUNEFARM_ASSIGN_OR_RETURN(int x, plain(0));
    return emit({x}, [axis, last](const std::vector<ir::Tensor>& i) { return ops::Softmax(i[0], axis, last); });
  }
  if (op == "ReduceMean") {
    auto axes = n.GetInts("_axes");
    bool keep = n.GetInt("keepdims", 1) != 0;
    TUNEFARM_ASSIGN_OR_RETURN(int x, plain(0));
    return emit({x}, [axes, keep](const std::vector<ir::Tensor>& i) { return ops::ReduceMean(i[0], axes, keep); });
  }
  if (op == "Transpose") {
    auto perm = n.GetInts("perm");
    if (perm.empty()) {
      for (size_t i = V(n.inputs[0]).shape.size(); i-- > 0;) perm.push_back(int64_t(i));
    }
    TUNEFARM_ASSIGN_OR_RETURN(int x, plain(0));
    return emit({x}, [perm](const std::vector<ir::Tensor>& i) { return ops::Transpose(i[0], perm); });
  }
  if (op == "Slice") {
    auto begin = n.GetInts("_begin"), step = n.GetInts("_step");
    auto shape = out.shape;
    TUNEFARM_ASSIGN_OR_RETURN(int x, plain(0));
    return emit({x}, [=](const std::vector<ir::Tensor>& i) { return ops::StridedSlice(i[0], begin, step, shape); });
  }
  if (op == "Split") {
    const int64_t axis = n.GetInts("_axis", {0})[0];
    auto parts = n.GetInts("_split");
    TUNEFARM_ASSIGN_OR_RETURN(int x, plain(0));
    int64_t offset = 0;
    for (size_t k = 0; k < n.outputs.size(); ++k) {
      const graph::Value& o = V(n.outputs[k]);
      std::vector<int64_t> begin(o.shape.size(), 0), step(o.shape.size(), 1);
      begin[size_t(axis)] = offset;
      offset += parts[k];
      auto shape = o.shape;
      Define(n.outputs[k], Emit(op, {x}, [=](const std::vector<ir::Tensor>& i) { return ops::StridedSlice(i[0], begin, step, shape); },
                                ToElementType(o.dtype), o.name), 0);
    }
    return Status::OK();
  }
  if (op == "Pad") {
    auto pads = n.GetInts("_pads");
    const size_t rank = out.shape.size();
    std::vector<int64_t> begin(pads.begin(), pads.begin() + int64_t(rank)), end(pads.begin() + int64_t(rank), pads.end());
    std::string mode = n.GetString("mode", "constant");
    float value = n.GetFloat("value", 0.0f);
    int value_tensor = -1;  // a fill computed at run time
    if (n.inputs.size() > 2 && n.inputs[2] >= 0) {
      const auto& c = V(n.inputs[2]).constant;
      if (c) {
        value = c->dtype == DataType::kFloat32 ? c->f32.at(0) : float(c->i64.at(0));
      } else {
        TUNEFARM_ASSIGN_OR_RETURN(value_tensor, plain(2));
      }
    }
    for (int64_t p : pads) {
      if (p < 0) return Fail(n, "negative pads (cropping) are not supported");
    }
    ops::PadMode m = mode == "edge" ? ops::PadMode::kEdge : mode == "reflect" ? ops::PadMode::kReflect : ops::PadMode::kConstant;
    TUNEFARM_ASSIGN_OR_RETURN(int x, plain(0));
    if (value_tensor >= 0) {
      return emit({x, value_tensor}, [=](const std::vector<ir::Tensor>& i) { return ops::Pad(i[0], begin, end, m, value, i[1]); });
    }
    return emit({x}, [=](const std::vector<ir::Tensor>& i) { return ops::Pad(i[0], begin, end, m, value); });
  }
  if (op == "Gather") {
    const int64_t axis = n.GetInts("_axis", {0})[0];
    TUNEFARM_ASSIGN_OR_RETURN(int x, plain(0));
    TUNEFARM_ASSIGN_OR_RETURN(int idx, plain(1));
    return emit({x, idx}, [axis](const std::vector<ir::Tensor>& i) { return ops::Gather(i[0], i[1], axis); });
  }
  if (op == "Conv" || op == "Gemm" || op == "MatMul") {
    // The untuned forms, with whatever FuseEpilogues attached.
    std::vector<int> in;
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      if (n.inputs[i] < 0) continue;
      TUNEFARM_ASSIGN_OR_RETURN(int t, plain(i));
      in.push_back(t);
    }
    const bool has_c = n.inputs.size() > 2 && n.inputs[2] >= 0, has_res = n.inputs.size() > 3 && n.inputs[3] >= 0;
    const ops::UnaryParams act = FusedActivation(n);
    ops::ConvParams cp;
    if (op == "Conv") {
      cp.strides = n.GetInts("strides");
      cp.dilations = n.GetInts("dilations");
      auto pads = n.GetInts("pads");
      cp.pads_begin.assign(pads.begin(), pads.begin() + int64_t(pads.size() / 2));
      cp.groups = n.GetInt("group", 1);
    }
    const bool ta = n.GetInt("transA", 0) != 0, tb = n.GetInt("transB", 0) != 0;
    const float alpha = n.GetFloat("alpha", 1.0f), beta = n.GetFloat("beta", 1.0f);
    auto shape = out.shape;
    return emit(in, [=](const std::vector<ir::Tensor>& i) {
      ir::Tensor c = has_c ? i[2] : ir::Tensor();
      ir::Tensor t = op == "Conv"   ? ops::ConvDirect(i[0], i[1], c, cp, shape)
                     : op == "Gemm" ? ops::Gemm(i[0], i[1], c, ta, tb, alpha, beta)
                                    : ops::MatMul(i[0], i[1]);
      if (op == "MatMul" && has_c) t = ops::Binary(t, c, ops::BinaryKind::kAdd);
      if (has_res) t = ops::Binary(t, i.back(), ops::BinaryKind::kAdd);
      if (act.kind != ops::UnaryKind::kIdentity) t = ops::Unary(t, act);
      return t;
    });
  }
  return Fail(n, "no kernel lowering for this operator");
}

}  // namespace

Result<ModelPlan> LowerGraph(const graph::Graph& g, const Target& target, const LowerGraphOptions& options) {
  return GraphLowering(g, target, options).Run();
}

}  // namespace tunefarm::compiler
