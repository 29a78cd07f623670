// LowerApi: what an operator's lowering function (a registry row's `lower`, registry.h) may ask of
// the model lowering that calls it. The engine behind it -- tensors per layout, apply-history-best,
// If guards, layout planning and injective fusion -- is compiler/model/lowering/ (LowerContext);
// rows see only this interface, so the registry folder does not depend on the engine.
//
// Tensors: every graph value gets artifact tensors, one per layout it is needed in (block 0 is
// plain N C H W, block b > 0 is NCHW[b]c); Get(value, block) returns the tensor of a value in a
// layout, emitting one layout-change kernel the first time a layout is asked for. Define records
// the tensor an operator computed for its output. Emit adds one untuned kernel (a compute
// definition from compiler/compute, scheduled by the target's backend). Tunable kernels (conv2d,
// dense) are added through ChooseImplementation and AddTunableKernel.
#ifndef TUNEFARM_COMPILER_OPERATORS_LOWER_API_H_
#define TUNEFARM_COMPILER_OPERATORS_LOWER_API_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "compiler/graph/graph.h"
#include "compiler/operators/model_plan.h"

namespace tunefarm::operators {

using TensorFn = std::function<ir::Tensor(const std::vector<ir::Tensor>&)>;
using runtime::ArtifactTensor;
using runtime::ElementType;

ElementType ToElementType(graph::DataType t);
ir::Type ToIRType(ElementType t);

class LowerApi {
 public:
  virtual ~LowerApi() = default;

  // --- what operators read ---
  virtual const graph::Graph& graph() const = 0;
  virtual const compiler::Target& target() const = 0;
  // Whether convolutions choose their layouts over the whole graph (model/lowering/plan_layouts.h).
  virtual bool plan_layouts() const = 0;
  virtual const ArtifactTensor& tensor(int id) const = 0;
  const graph::Value& V(int value) const { return graph().values[size_t(value)]; }
  const ArtifactTensor& T(int id) const { return tensor(id); }
  ElementType OutType(const graph::Node& n, size_t k = 0) const { return ToElementType(V(n.outputs[k]).dtype); }
  Status Fail(const graph::Node& n, const std::string& why) const {
    return Status::Unimplemented(graph().Describe(n) + ": " + why);
  }

  // --- tensors ---
  virtual int NewTensor(const std::string& name, ArtifactTensor::Kind kind, ElementType dtype,
                        std::vector<int64_t> shape) = 0;
  virtual int AddParam(const std::string& name, ElementType dtype, std::vector<int64_t> shape, const void* data,
                       size_t bytes) = 0;
  virtual int ParamFromConstant(const std::string& name, const graph::ConstantData& c) = 0;
  int ParamFloats(const std::string& name, std::vector<int64_t> shape, const std::vector<float>& v) {
    return AddParam(name, ElementType::kFloat32, std::move(shape), v.data(), v.size() * 4);
  }
  // A tensor sharing `tensor`'s storage under another shape (reshapes cost nothing).
  virtual int View(int tensor, const std::vector<int64_t>& shape, const std::string& name) = 0;
  // `tensor` is `value` in layout `block`, the layout the value was computed in.
  virtual void Define(int value, int tensor, int64_t block) = 0;
  // The tensor of a value in a layout, converting (once) when needed.
  virtual Result<int> Get(int value, int64_t block) = 0;
  // The layout a layout-agnostic consumer reads a value in.
  virtual int64_t Preferred(int value) const = 0;

  // --- kernels ---
  virtual int Emit(const std::string& op, const std::vector<int>& inputs, const TensorFn& fn, ElementType out_dtype,
                   const std::string& out_name) = 0;
  // The common case: node inputs `inputs` read in plain layout, one kernel, output 0 defined plain.
  virtual Status EmitPlain(const graph::Node& n, const std::vector<size_t>& inputs, const TensorFn& fn) = 0;
  // EmitPlain for a node that reads through runtime indices (node input `index_input`): the executor
  // checks them against `extents` before the kernel runs (runtime::IndexCheck), so an index out of
  // range is an error naming the node, not a read (the kernel clamps too). Constant indices were
  // checked when the node's shape was inferred.
  virtual Status EmitIndexed(const graph::Node& n, const std::vector<size_t>& inputs, const TensorFn& fn,
                             size_t index_input, std::vector<int64_t> extents) = 0;
  // The kernel emitted last fails the run when the one-element bool `cond_value` is `when` and node
  // n's If guards hold (runtime::ConditionCheck), with the error "<node n>: <why>"; the compile
  // warns of it. What an If branch the compiled shapes cannot run lowers to. Needs a kernel emitted
  // for n.
  virtual Status FailRunWhen(const graph::Node& n, int cond_value, bool when, const std::string& why) = 0;
  // Apply history best across a node's implementations (the default first): the fastest recorded
  // one with its config, else the default with its fallback config (one warning per workload).
  struct Choice {
    compiler::Workload workload;
    int64_t config_index = -1;
    runtime::ConfigOrigin source = runtime::ConfigOrigin::kFallback;
    std::vector<compiler::Workload> candidates;  // every implementation, the default first
  };
  virtual Result<Choice> ChooseImplementation(const std::vector<compiler::Workload>& implementations) = 0;
  // Recurrent nodes unroll every step (and direction) into kernels of their own, compiled one by
  // one (about 30 ms of LLVM per LSTM step): the whole model may unroll at most kMaxUnrolledSteps,
  // four nodes at the per-node cap of 4096 steps (a 3-layer bidirectional LSTM over 2,700 steps).
  // Without it a model of many such nodes would compile for hours.
  static constexpr int64_t kMaxUnrolledSteps = 16384;
  virtual Status AddUnrolledSteps(const graph::Node& n, int64_t steps) = 0;
  virtual void AddTunableKernel(compiler::PlannedKernel k) = 0;
};

}  // namespace tunefarm::operators

#endif  // TUNEFARM_COMPILER_OPERATORS_LOWER_API_H_
