// LowerContext: the engine that lowers one graph into a ModelPlan (model/lower_graph.cc drives it):
// it walks the graph and calls each node's registry lowering, which sees it as an
// operators::LowerApi (compiler/operators/lower_api.h: tensors per layout, kernels, apply-history-
// best). What is the engine's alone: the value -> tensor-per-layout table, the choice between
// recorded and fallback configs with the records' validation and warnings, If guards, layout
// planning's two passes (plan_layouts.h) and, on GPUs, injective fusion (fuse_injective.cc).
#ifndef TUNEFARM_COMPILER_MODEL_LOWERING_LOWER_CONTEXT_H_
#define TUNEFARM_COMPILER_MODEL_LOWERING_LOWER_CONTEXT_H_

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "compiler/graph/graph.h"
#include "compiler/operators/lower_api.h"
#include "compiler/operators/model_plan.h"

namespace tunefarm::lowering {

struct LayoutFlow;  // plan_layouts.h

using operators::ArtifactTensor;
using operators::ElementType;
using operators::TensorFn;
using operators::ToElementType;
using operators::ToIRType;

class LowerContext final : public operators::LowerApi {
 public:
  LowerContext(const graph::Graph& g, const compiler::Target& t, const compiler::LowerGraphOptions& o)
      : g_(g), target_(t), backend_(*o.backend), options_(o), values_(g.values.size()) {}

  Result<compiler::ModelPlan> Run();

  // --- LowerApi (lower_api.h) ---
  const graph::Graph& graph() const override { return g_; }
  const compiler::Target& target() const override { return target_; }
  bool plan_layouts() const override { return options_.plan_layouts; }
  const ArtifactTensor& tensor(int id) const override { return plan_.artifact.tensors[size_t(id)]; }
  int NewTensor(const std::string& name, ArtifactTensor::Kind kind, ElementType dtype,
                std::vector<int64_t> shape) override;
  int AddParam(const std::string& name, ElementType dtype, std::vector<int64_t> shape, const void* data,
               size_t bytes) override;
  int ParamFromConstant(const std::string& name, const graph::ConstantData& c) override;
  int View(int tensor, const std::vector<int64_t>& shape, const std::string& name) override;
  void Define(int value, int tensor, int64_t block) override {
    values_[size_t(value)].by_block[block] = tensor;
    values_[size_t(value)].home_block = block;
  }
  Result<int> Get(int value, int64_t block) override;
  int64_t Preferred(int value) const override { return options_.plan_layouts ? values_[size_t(value)].home_block : 0; }
  int Emit(const std::string& op, const std::vector<int>& inputs, const TensorFn& fn, ElementType out_dtype,
           const std::string& out_name) override;
  Status EmitPlain(const graph::Node& n, const std::vector<size_t>& inputs, const TensorFn& fn) override;
  Status EmitIndexed(const graph::Node& n, const std::vector<size_t>& inputs, const TensorFn& fn, size_t index_input,
                     std::vector<int64_t> extents) override;
  Status FailRunWhen(const graph::Node& n, int cond_value, bool when, const std::string& why) override;
  Result<Choice> ChooseImplementation(const std::vector<compiler::Workload>& implementations) override;
  Status AddUnrolledSteps(const graph::Node& n, int64_t steps) override;
  void AddTunableKernel(compiler::PlannedKernel k) override;

  // --- layout planning (plan_layouts.h) ---
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
  void WarnRecordsElsewhere(const compiler::Workload& w);

  const graph::Graph& g_;
  const compiler::Target& target_;
  const compiler::Backend& backend_;  // the target's decisions (compiler/backend/backend.h)
  const compiler::LowerGraphOptions& options_;
  std::vector<ValueState> values_;
  compiler::ModelPlan plan_;
  std::set<std::string> warned_;
  std::set<std::string> warned_skips_, warned_elsewhere_;
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

}  // namespace tunefarm::lowering

#endif  // TUNEFARM_COMPILER_MODEL_LOWERING_LOWER_CONTEXT_H_
