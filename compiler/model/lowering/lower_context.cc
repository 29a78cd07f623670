#include "compiler/model/lowering/lower_context.h"

#include <cstring>
#include <set>

#include "compiler/backend/backend.h"
#include "compiler/compute/ops.h"
#include "compiler/ir/ir_operators.h"
#include "compiler/model/lowering/plan_layouts.h"
#include "compiler/operators/registry.h"
#include "compiler/schedule/template_table.h"
#include "tunefarm/compiler/kernel.h"
#include "tunefarm/runtime/element_convert.h"

namespace tunefarm::lowering {
namespace {
// How many of a workload's fastest records apply-history-best considers before its fallback.
constexpr int kRecordsConsidered = 8;
}  // namespace

using graph::DataType;
using graph::Node;

int LowerContext::NewTensor(const std::string& name, ArtifactTensor::Kind kind, ElementType dtype,
                            std::vector<int64_t> shape) {
  ArtifactTensor t;
  t.name = name;
  t.kind = kind;
  t.dtype = dtype;
  t.shape = std::move(shape);
  plan_.artifact.tensors.push_back(std::move(t));
  return int(plan_.artifact.tensors.size() - 1);
}

int LowerContext::AddParam(const std::string& name, ElementType dtype, std::vector<int64_t> shape, const void* data,
                           size_t bytes) {
  std::string& blob = plan_.artifact.params;
  blob.resize((blob.size() + 63) / 64 * 64, '\0');  // every parameter 64-byte aligned
  int id = NewTensor(name, ArtifactTensor::kParam, dtype, std::move(shape));
  plan_.artifact.tensors[size_t(id)].param_offset = int64_t(blob.size());
  blob.append(static_cast<const char*>(data), bytes);
  return id;
}

int LowerContext::ParamFromConstant(const std::string& name, const graph::ConstantData& c) {
  ElementType dt = ToElementType(c.dtype);
  if (c.dtype == DataType::kFloat32) return AddParam(name, dt, c.shape, c.f32.data(), c.f32.size() * 4);
  std::string bytes;
  for (int64_t v : c.i64) {
    switch (runtime::ElementSize(dt)) {
      case 8:
        bytes.append(reinterpret_cast<const char*>(&v), 8);
        break;
      case 4: {
        int32_t x = int32_t(v);
        bytes.append(reinterpret_cast<const char*>(&x), 4);
        break;
      }
      default:
        bytes.push_back(char(v));
        break;
    }
  }
  return AddParam(name, dt, c.shape, bytes.data(), bytes.size());
}

int LowerContext::View(int tensor, const std::vector<int64_t>& shape, const std::string& name) {
  int base = T(tensor).view_of >= 0 ? T(tensor).view_of : tensor;
  int id = NewTensor(name, ArtifactTensor::kIntermediate, T(tensor).dtype, shape);
  plan_.artifact.tensors[size_t(id)].view_of = base;
  return id;
}

Result<int> LowerContext::Get(int value, int64_t block) {
  ValueState& s = values_[size_t(value)];
  const graph::Value& v = V(value);
  if (s.by_block.empty() && v.constant) Define(value, ParamFromConstant(v.name, *v.constant), 0);
  auto it = s.by_block.find(block);
  if (it != s.by_block.end()) return it->second;
  if (s.by_block.empty()) return Status::Internal("value '" + v.name + "' is read before it is computed");
  if (v.shape.size() == 4 && (block == 1 || (block == 0 && s.by_block.count(1)))) {
    // NCHW1c is NCHW with a unit axis: a view of the same storage, not a layout change (a
    // 3-channel image feeds a convolution with input block 1 as it is).
    int base = 0;
    if (block == 1) {
      TUNEFARM_ASSIGN_OR_RETURN(base, Get(value, 0));
    } else {
      base = s.by_block.at(1);
    }
    const int t = View(base, compute::PhysicalShape(v.shape, block), v.name + (block ? ".nchw1c" : ".nchw"));
    values_[size_t(value)].by_block[block] = t;
    return t;
  }
  const int src = s.by_block.at(s.home_block);
  const int64_t from = s.home_block;
  int t = Emit(
      "layout_transform", {src},
      [&](const std::vector<ir::Tensor>& in) { return compute::ChangeLayout(in[0], v.shape, from, block); },
      T(src).dtype, v.name + (block ? ".nchw" + std::to_string(block) + "c" : ".nchw"));
  s.by_block[block] = t;
  return t;
}

namespace {

bool IsInjective(const ir::Tensor& out) {
  te::Schedule s({out});
  for (const auto& stage : s.stages()) {
    if (!stage->reduce_axes.empty()) return false;
  }
  return true;
}

}  // namespace

void LowerContext::BuildGenericKernel(compiler::PlannedKernel* k) const {
  const std::vector<int> inputs(k->args.begin(), k->args.end() - 1);
  std::vector<ir::Tensor> ph;
  for (size_t i = 0; i < inputs.size(); ++i) {
    ph.push_back(te::Placeholder("in" + std::to_string(i), T(inputs[i]).shape, ToIRType(T(inputs[i]).dtype)));
  }
  ir::Tensor out = k->definition(ph);
  k->injective = IsInjective(out);
  k->def = compiler::KernelDef();
  k->def.schedule = backend_.GenericSchedule(&out, target_);
  k->def.args = ph;
  k->def.args.push_back(out);
  k->def.roles.assign(ph.size(), compiler::BufferRole::kInput);
  k->def.roles.push_back(compiler::BufferRole::kOutput);
}

int LowerContext::Emit(const std::string& op, const std::vector<int>& inputs, const TensorFn& fn, ElementType out_dtype,
                       const std::string& out_name) {
  std::vector<ir::Tensor> ph;
  for (size_t k = 0; k < inputs.size(); ++k) {
    ph.push_back(te::Placeholder("in" + std::to_string(k), T(inputs[k]).shape, ToIRType(T(inputs[k]).dtype)));
  }
  ir::Tensor out = fn(ph);
  if (out->dtype != ToIRType(out_dtype) && emit_error_.ok()) {
    // A definition that computes another type than the graph says: refuse rather than let the
    // kernel write past a buffer sized for the graph's type.
    emit_error_ =
        Status::Unimplemented(op + " on " + runtime::ElementTypeName(out_dtype) +
                              " tensors is not supported (its kernel computes " + out->dtype.ToString() + ")");
  }
  int id = NewTensor(out_name, ArtifactTensor::kIntermediate, out_dtype, out->shape);
  if (out->NumElements() == 0) return id;  // nothing to compute into an empty tensor
  compiler::PlannedKernel k;
  k.op = op;
  k.args = inputs;
  k.args.push_back(id);
  k.definition = fn;
  BuildGenericKernel(&k);
  plan_.kernels.push_back(std::move(k));
  return id;
}

Result<std::vector<compiler::BestConfig>> ValidRecords(const compiler::ConfigSource& configs,
                                                       const compiler::Workload& w, const compiler::Target& target,
                                                       int limit, int* skipped) {
  std::vector<compiler::BestConfig> valid;
  TUNEFARM_ASSIGN_OR_RETURN(auto ranked, configs.Ranked(w, target, limit));
  auto space = compiler::GetConfigSpace(w, target);
  if (!space.ok()) return valid;
  for (compiler::BestConfig& best : ranked) {
    auto cfg = space->Get(best.config_index);  // OutOfRange outside [0, size)
    if (!cfg.ok() || (!best.config_json.empty() && cfg->ToJson() != best.config_json) || !space->IsValid(*cfg)) {
      if (skipped) ++*skipped;
      continue;
    }
    valid.push_back(std::move(best));
  }
  return valid;
}

Result<std::optional<compiler::BestConfig>> LowerContext::Recorded(const compiler::Workload& w) {
  if (!options_.configs) return std::optional<compiler::BestConfig>();
  int outside = 0;
  TUNEFARM_ASSIGN_OR_RETURN(auto valid, ValidRecords(*options_.configs, w, target_, kRecordsConsidered, &outside));
  WarnSkippedRecords(w, outside);
  if (valid.empty()) {
    WarnRecordsElsewhere(w);
    return std::optional<compiler::BestConfig>();
  }
  return std::optional<compiler::BestConfig>(valid.front());
}

// A workload tuned, but not for this compile (records at another thread count): said once per
// workload, since the fallback it gets may be slower than what the user expects.
void LowerContext::WarnRecordsElsewhere(const compiler::Workload& w) {
  const std::string key = w.ImplementationKey();
  if (!options_.warn || !warned_elsewhere_.insert(key).second) return;
  auto why = options_.configs->WhyNoneApply(w, target_);
  if (why.ok() && !why->empty()) options_.warn("note: " + key + ": " + *why + "; its fallback config is used");
}

void LowerContext::WarnSkippedRecords(const compiler::Workload& w, int outside_space) {
  const std::string key = w.ImplementationKey();
  if (!options_.warn || !warned_skips_.insert(key).second) return;
  auto unusable = options_.configs->UnusableCount(w, target_);
  const int64_t bad_times = unusable.ok() ? *unusable : 0;
  if (outside_space > 0) {
    options_.warn("warning: skipped " + std::to_string(outside_space) + " record(s) of " + key + " on " +
                  target_.ToString() +
                  " whose config is not a valid point of its space (stale or edited records); none was applied");
  }
  if (bad_times > 0) {
    options_.warn("warning: skipped " + std::to_string(bad_times) + " successful trial(s) of " + key + " on " +
                  target_.ToString() + " whose time is not a finite positive number; none was applied");
  }
}

Result<LowerContext::Choice> LowerContext::ChooseImplementation(
    const std::vector<compiler::Workload>& implementations) {
  if (plan_choices_) {
    auto planned = plan_choices_->find(current_node_);
    if (planned != plan_choices_->end()) return planned->second;
  }
  TUNEFARM_ASSIGN_OR_RETURN(Choice choice, ChoosePerNode(implementations));
  if (flow_) flow_->sites.push_back({current_node_, implementations, choice});
  return choice;
}

Result<LowerContext::Choice> LowerContext::ChoosePerNode(const std::vector<compiler::Workload>& implementations) {
  Choice choice;
  double best_ms = 0;
  for (const compiler::Workload& w : implementations) {
    choice.candidates.push_back(w);
    TUNEFARM_ASSIGN_OR_RETURN(std::optional<compiler::BestConfig> record, Recorded(w));
    if (record && (choice.config_index < 0 || record->cost_ms < best_ms)) {
      choice.workload = w;
      choice.config_index = record->config_index;
      choice.source = runtime::ConfigOrigin::kRecords;
      best_ms = record->cost_ms;
    }
  }
  if (choice.config_index >= 0) return choice;
  // No records: the implementation whose fallback is estimated fastest (the default on ties).
  const compiler::Workload* untuned = &implementations.front();
  double best_speedup = 0;
  for (const compiler::Workload& w : implementations) {
    TUNEFARM_ASSIGN_OR_RETURN(const compiler::OpTemplate* tmpl, compiler::FindTemplate(w.implementation));
    const double speedup = tmpl->UntunedSpeedup(w, target_);
    if (speedup > best_speedup) {
      best_speedup = speedup;
      untuned = &w;
    }
  }
  const compiler::Workload& w = *untuned;
  const std::string key = w.ImplementationKey();
  // Without a records source (--records none) the fallback is what was asked for: no warning.
  if (options_.configs && warned_.insert(key).second && options_.warn) {
    options_.warn("warning: no tuning record for " + key + " on " + target_.ToString() + "; using the fallback config");
  }
  choice.workload = w;
  choice.source = runtime::ConfigOrigin::kFallback;
  TUNEFARM_ASSIGN_OR_RETURN(choice.config_index, compiler::FallbackConfigIndex(w, target_));
  return choice;
}

Result<compiler::ModelPlan> LowerContext::Run() {
  plan_.artifact.target = target_.ToString();
  for (int in : g_.inputs) {
    const graph::Value& v = V(in);
    const int t = NewTensor(v.name, ArtifactTensor::kInput, ToElementType(v.dtype), v.shape);
    plan_.artifact.tensors[size_t(t)].edge_dtype = v.edge_dtype;
    Define(in, t, 0);
    plan_.artifact.inputs.push_back(values_[size_t(in)].by_block[0]);
  }
  if (g_.symbolic_dim) {
    // The graph is built at the range's maximum; the kernels read the run's size from this tensor
    // (model/lowering/follow_symbolic_dim.h gives them the rest).
    const graph::SymbolicDim& dim = *g_.symbolic_dim;
    for (int in : dim.inputs) plan_.artifact.tensors[size_t(values_[size_t(in)].by_block[0])].leading_scale = 1;
    const int size = NewTensor(dim.name + ".size", ArtifactTensor::kIntermediate, ElementType::kInt64, {1});
    plan_.artifact.symbolic_dim = runtime::SymbolicDim{dim.name, dim.min, dim.max, size};
  }
  for (const Node& n : g_.nodes) {
    current_node_ = int(&n - g_.nodes.data());
    bool all_constant = !n.outputs.empty();
    for (int o : n.outputs) all_constant = all_constant && V(o).constant != nullptr;
    if (all_constant) continue;  // folded by shape inference; read as parameters
    const operators::OperatorDef* def = operators::FindOperator(n.op_type);
    if (!def) return Fail(n, "not in the operator registry");
    if (!def->lower) return Fail(n, std::string("no lowering for target '") + target_.ToString() + "'");
    const size_t first_kernel = plan_.kernels.size();
    TUNEFARM_RETURN_IF_ERROR(def->lower(*this, n));
    if (!emit_error_.ok()) return Status(emit_error_.code(), g_.Describe(n) + ": " + emit_error_.message());
    for (size_t k = first_kernel; k < plan_.kernels.size(); ++k) {
      if (plan_.kernels[k].node.empty()) plan_.kernels[k].node = n.name;
    }
    // Where both branches of a runtime If run (backend.h), the If's kernels select.
    if (!n.guards.empty() && !backend_.RunsBothIfBranches()) TUNEFARM_RETURN_IF_ERROR(GuardKernels(n, first_kernel));
  }
  TUNEFARM_RETURN_IF_ERROR(LowerOutputs());
  if (flow_) {
    for (const ValueState& v : values_) flow_->home_block.push_back(v.home_block);
  }
  // Chains of injective kernels become one where a launch costs more than their memory traffic
  // (backend.h; fuse_injective.cc).
  if (backend_.FusesInjectiveChains()) FuseInjectiveChains();
  return std::move(plan_);
}

// A kernel computing another layout of a value from outside the node is cached for every later
// reader, which may run whatever the condition: it stays unguarded (a layout change is pure
// arithmetic on whatever bytes it reads).
Status LowerContext::GuardKernels(const Node& n, size_t first) {
  std::vector<std::pair<int, bool>> run_if;
  for (const graph::NodeGuard& guard : n.guards) {
    TUNEFARM_ASSIGN_OR_RETURN(int t, Get(guard.cond, 0));
    run_if.push_back({t, guard.when});
  }
  const std::set<int> own(n.outputs.begin(), n.outputs.end());
  std::set<int> elsewhere;  // tensors standing for values n does not produce
  for (size_t v = 0; v < values_.size(); ++v) {
    if (own.count(int(v))) continue;
    for (const auto& [block, t] : values_[v].by_block) elsewhere.insert(t);
  }
  for (size_t k = first; k < plan_.kernels.size(); ++k) {
    if (!elsewhere.count(plan_.kernels[k].args.back())) plan_.kernels[k].run_if = run_if;
  }
  return Status::OK();
}

Status LowerContext::EmitPlain(const Node& n, const std::vector<size_t>& inputs, const TensorFn& fn) {
  std::vector<int> tensors;
  for (size_t i : inputs) {
    TUNEFARM_ASSIGN_OR_RETURN(int t, Get(n.inputs[i], 0));
    tensors.push_back(t);
  }
  const graph::Value& out = V(n.outputs[0]);
  Define(n.outputs[0], Emit(n.op_type, tensors, fn, ToElementType(out.dtype), out.name), 0);
  return Status::OK();
}

Status LowerContext::EmitIndexed(const Node& n, const std::vector<size_t>& inputs, const TensorFn& fn,
                                 size_t index_input, std::vector<int64_t> extents) {
  const size_t before = plan_.kernels.size();
  TUNEFARM_RETURN_IF_ERROR(EmitPlain(n, inputs, fn));
  if (plan_.kernels.size() == before || V(n.inputs[index_input]).constant) return Status::OK();
  TUNEFARM_ASSIGN_OR_RETURN(int indices, Get(n.inputs[index_input], 0));
  runtime::IndexCheck check;
  check.tensor = indices;
  check.extents = std::move(extents);
  check.node = g_.Describe(n);
  plan_.kernels.back().index_checks.push_back(std::move(check));
  return Status::OK();
}

Status LowerContext::FailRunWhen(const Node& n, int cond_value, bool when, const std::string& why) {
  if (plan_.kernels.empty()) return Fail(n, "has no kernel to check its condition before");
  runtime::ConditionCheck check;
  for (const graph::NodeGuard& guard : n.guards) {
    TUNEFARM_ASSIGN_OR_RETURN(int t, Get(guard.cond, 0));
    check.fails_when.push_back({t, guard.when});
  }
  TUNEFARM_ASSIGN_OR_RETURN(int t, Get(cond_value, 0));
  check.fails_when.push_back({t, when});
  check.message = g_.Describe(n) + ": " + why;
  plan_.kernels.back().condition_checks.push_back(std::move(check));
  if (options_.warn) {
    options_.warn("warning: " + g_.Describe(n) + ": a run whose condition is " + (when ? "true" : "false") +
                  " fails: " + why);
  }
  return Status::OK();
}

Status LowerContext::AddUnrolledSteps(const Node& n, int64_t steps) {
  unrolled_steps_ += steps;
  if (unrolled_steps_ <= kMaxUnrolledSteps) return Status::OK();
  return Status::InvalidArgument(
      g_.Describe(n) + ": the model's recurrent nodes unroll " + std::to_string(unrolled_steps_) +
      " steps (steps times directions) up to here; at most " + std::to_string(kMaxUnrolledSteps) +
      " are unrolled per model, each step being compiled code of its own");
}

void LowerContext::AddTunableKernel(compiler::PlannedKernel k) {
  plan_.tunable_kernels++;
  if (k.config_origin == runtime::ConfigOrigin::kRecords) plan_.from_records++;
  plan_.kernels.push_back(std::move(k));
}

Status LowerContext::LowerOutputs() {
  std::set<int> claimed;
  for (int out : g_.outputs) {
    TUNEFARM_ASSIGN_OR_RETURN(int t, Get(out, 0));
    ArtifactTensor& tensor = plan_.artifact.tensors[size_t(t)];
    bool own = tensor.kind == ArtifactTensor::kIntermediate && tensor.view_of < 0 && !claimed.count(t);
    if (!own) {
      // An output that is an input, a parameter, a view or another output gets its own copy.
      t = Emit(
          "copy", {t}, [&](const std::vector<ir::Tensor>& in) { return compute::Reshape(in[0], in[0]->shape); },
          T(t).dtype, V(out).name);
    }
    const graph::Value& v = V(out);
    if (v.edge_dtype && graph::StorageDataType(*v.edge_dtype) != v.dtype) {
      return Status::InvalidArgument("graph output '" + v.name + "' is declared " +
                                     runtime::ElementTypeName(*v.edge_dtype) + " but computes " +
                                     graph::DataTypeName(v.dtype));
    }
    plan_.artifact.tensors[size_t(t)].edge_dtype = v.edge_dtype;
    plan_.artifact.tensors[size_t(t)].kind = ArtifactTensor::kOutput;
    plan_.artifact.tensors[size_t(t)].name = V(out).name;
    plan_.artifact.tensors[size_t(t)].shape = V(out).shape;
    claimed.insert(t);
    plan_.artifact.outputs.push_back(t);
  }
  return Status::OK();
}

}  // namespace tunefarm::lowering
