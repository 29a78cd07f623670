// LowerContext: the state of lowering one graph into a ModelPlan, as operators' lowering functions
// see it (model/lower_graph.cc drives it; the registry's lower functions call into it).
//
// Tensors: every graph value gets artifact tensors, one per layout it is needed in (block 0 is
// plain N C H W, block b > 0 is NCHW[b]c); Get(value, block) returns the tensor of a value in a
// layout, emitting one layout-change kernel the first time a layout is asked for. Define records
// the tensor an operator computed for its output. Emit adds one untuned kernel (a compute
// definition from compiler/compute scheduled by ScheduleGeneric). Tunable kernels (conv2d, dense)
// are added by nn_ops.cc through ChooseImplementation and AddTunableKernel. Run() walks the graph
// and calls each node's registry lowering for the target's kind.
#ifndef TUNEFARM_COMPILER_OPERATORS_LOWER_CONTEXT_H_
#define TUNEFARM_COMPILER_OPERATORS_LOWER_CONTEXT_H_

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "compiler/graph/graph.h"
#include "compiler/operators/model_plan.h"

namespace tunefarm::operators {

struct LayoutFlow;  // operators/plan_layouts.h

using TensorFn = std::function<ir::Tensor(const std::vector<ir::Tensor>&)>;
using runtime::ArtifactTensor;
using runtime::ElementType;

ElementType ToElementType(graph::DataType t);
ir::Type ToIRType(ElementType t);

class LowerContext {
 public:
  LowerContext(const graph::Graph& g, const compiler::Target& t, const compiler::LowerGraphOptions& o)
      : g_(g), target_(t), backend_(*o.backend), options_(o), values_(g.values.size()) {}

  Result<compiler::ModelPlan> Run();

  // --- what operators read ---
  const graph::Graph& graph() const { return g_; }
  const compiler::Target& target() const { return target_; }
  bool plan_layouts() const { return options_.plan_layouts; }
  const graph::Value& V(int value) const { return g_.values[size_t(value)]; }
  const ArtifactTensor& T(int id) const { return plan_.artifact.tensors[size_t(id)]; }
  ElementType OutType(const graph::Node& n, size_t k = 0) const { return ToElementType(V(n.outputs[k]).dtype); }
  Status Fail(const graph::Node& n, const std::string& why) const {
    return Status::Unimplemented(g_.Describe(n) + ": " + why);
  }

  // --- tensors ---
  int NewTensor(const std::string& name, ArtifactTensor::Kind kind, ElementType dtype, std::vector<int64_t> shape);
  int AddParam(const std::string& name, ElementType dtype, std::vector<int64_t> shape, const void* data, size_t bytes);
  int ParamFromConstant(const std::string& name, const graph::ConstantData& c);
  int ParamFloats(const std::string& name, std::vector<int64_t> shape, const std::vector<float>& v) {
    return AddParam(name, ElementType::kFloat32, std::move(shape), v.data(), v.size() * 4);
  }
  // A tensor sharing `tensor`'s storage under another shape (reshapes cost nothing).
  int View(int tensor, const std::vector<int64_t>& shape, const std::string& name);
  void Define(int value, int tensor, int64_t block) {
    values_[size_t(value)].by_block[block] = tensor;
    values_[size_t(value)].home_block = block;
  }
  // The tensor of a value in a layout, converting (once) when needed.
  Result<int> Get(int value, int64_t block);
  // The layout a layout-agnostic consumer reads a value in.
  int64_t Preferred(int value) const { return options_.plan_layouts ? values_[size_t(value)].home_block : 0; }

  // --- kernels ---
  int Emit(const std::string& op, const std::vector<int>& inputs, const TensorFn& fn, ElementType out_dtype,
           const std::string& out_name);
  // The common case: node inputs `inputs` read in plain layout, one kernel, output 0 defined plain.
  Status EmitPlain(const graph::Node& n, const std::vector<size_t>& inputs, const TensorFn& fn);
  // EmitPlain for a node that reads through runtime indices (node input `index_input`): the executor
  // checks them against `extents` before the kernel runs (runtime::IndexCheck), so an index out of
  // range is an error naming the node, not a read (the kernel clamps too). Constant indices were
  // checked when the node's shape was inferred.
  Status EmitIndexed(const graph::Node& n, const std::vector<size_t>& inputs, const TensorFn& fn, size_t index_input,
                     std::vector<int64_t> extents);
  // Apply history best across a node's implementations (the default first): the fastest recorded
  // one with its config, else the default with its fallback config (one warning per workload).
  struct Choice {
    compiler::Workload workload;
    int64_t config_index = -1;
    runtime::ConfigOrigin source = runtime::ConfigOrigin::kFallback;
    std::vector<compiler::Workload> candidates;  // every implementation, the default first
  };
  Result<Choice> ChooseImplementation(const std::vector<compiler::Workload>& implementations);
  // Recurrent nodes unroll every step (and direction) into kernels of their own, compiled one by
  // one (about 30 ms of LLVM per LSTM step): the whole model may unroll at most kMaxUnrolledSteps,
  // four nodes at the per-node cap of 4096 steps (a 3-layer bidirectional LSTM over 2,700 steps).
  // Without it a model of many such nodes would compile for hours.
  static constexpr int64_t kMaxUnrolledSteps = 16384;
  Status AddUnrolledSteps(const graph::Node& n, int64_t steps);
  void AddTunableKernel(compiler::PlannedKernel k);

  // --- layout planning (operators/plan_layouts.h) ---
  // A first pass records how layouts flow through the graph with per-node choices; the second
  // lowers with the choices the planner made over the whole graph (node index -> choice).
  void RecordFlow(LayoutFlow* flow) { flow_ = flow; }
  void UsePlan(const std::map<int, Choice>* plan) { plan_choices_ = plan; }

 private:
  struct ValueState {
    std::map<int64_t, int> by_block;  // layout block -> tensor
    int64_t home_block = 0;
  };
  Status LowerOutputs();
  // Makes the kernels node n emitted from index `first` on run only when n's guards hold.
  Status GuardKernels(const graph::Node& n, size_t first);
  // Apply history best for the node alone (what ChooseImplementation does without a plan).
  Result<Choice> ChoosePerNode(const std::vector<compiler::Workload>& implementations);
  // (Re)builds an untuned kernel's schedule and arguments from its definition and args.
  void BuildGenericKernel(compiler::PlannedKernel* k) const;
  // Inlines every injective untuned kernel into its only reader when that reader is untuned too
  // (fuse_injective.cc).
  void FuseInjectiveChains();
  // The best record of one workload when it is valid in this target's space; nullopt otherwise.
  Result<std::optional<compiler::BestConfig>> Recorded(const compiler::Workload& w);
  // Once per workload: how many of its records were skipped, and why (issue 30: records are
  // validated on read as on import, and what is refused is counted, never applied).
  void WarnSkippedRecords(const compiler::Workload& w, int outside_space);

  const graph::Graph& g_;
  const compiler::Target& target_;
  const compiler::Backend& backend_;  // the target's decisions (compiler/backend/backend.h)
  const compiler::LowerGraphOptions& options_;
  std::vector<ValueState> values_;
  compiler::ModelPlan plan_;
  std::set<std::string> warned_;
  std::set<std::string> warned_skips_;
  Status emit_error_;      // the first kernel whose type did not match its output (see Emit)
  int current_node_ = -1;  // the node Run is lowering
  LayoutFlow* flow_ = nullptr;
  const std::map<int, Choice>* plan_choices_ = nullptr;
  int64_t unrolled_steps_ = 0;  // AddUnrolledSteps
};

// The records of workload `w` that are points of its space on `target`, fastest first, at most
// `limit`: a record from another target (matched by model or key) counts only where its index
// means the same config here, and stale or corrupt ones are skipped (counted in *skipped if given).
Result<std::vector<compiler::BestConfig>> ValidRecords(const compiler::ConfigSource& configs,
                                                       const compiler::Workload& w, const compiler::Target& target,
                                                       int limit, int* skipped = nullptr);

}  // namespace tunefarm::operators

#endif  // TUNEFARM_COMPILER_OPERATORS_LOWER_CONTEXT_H_
