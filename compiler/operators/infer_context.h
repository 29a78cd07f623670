// InferContext: what an operator's shape inference and constant folding see of one node.
//
// Inputs are read as graph values (their shapes are known: InferShapes runs in topological order);
// outputs are written through SetOut / SetConstOut. Errors built with Fail name the node, its op
// and the opset. Also the small shape helpers every family file uses.
#ifndef TUNEFARM_COMPILER_OPERATORS_INFER_CONTEXT_H_
#define TUNEFARM_COMPILER_OPERATORS_INFER_CONTEXT_H_

#include <optional>
#include <string>
#include <vector>

#include "compiler/graph/graph.h"
#include "tunefarm/compiler/workload.h"

namespace tunefarm::operators {

std::string ShapeStr(const std::vector<int64_t>& s);
// numpy-style broadcast of two shapes; InvalidArgument when they do not broadcast.
Result<std::vector<int64_t>> BroadcastShapes(const std::vector<int64_t>& a, const std::vector<int64_t>& b);
int64_t Product(const std::vector<int64_t>& s, size_t from, size_t to);
inline int64_t Product(const std::vector<int64_t>& s) { return Product(s, 0, s.size()); }
// The element count of a shape, or nullopt when a dimension is negative or the count would exceed
// kMaxTensorElements (no tensor that large compiles; the check keeps hostile shapes from
// overflowing the arithmetic).
using tunefarm::compiler::kMaxTensorElements;
std::optional<int64_t> CheckedElements(const std::vector<int64_t>& shape);
// Window attributes (kernel_shape, strides, dilations, pads) past this are refused at import: no
// real model comes near (docs/onnx_support.md, Limits), and config spaces enumerate their extents.
using tunefarm::compiler::kMaxWindowAttribute;

// A read-only view of one node and its inputs: what parse functions shared by an operator's
// inference, folding and lowering take (each lowers what its inference checked, from one parse).
class NodeView {
 public:
  NodeView(const graph::Graph& g, const graph::Node& n) : g_(g), n_(n) {}

  const graph::Graph& graph() const { return g_; }
  const graph::Node& node() const { return n_; }
  int64_t opset() const { return g_.opset; }

  Status Fail(const std::string& why) const { return Status::InvalidArgument(g_.Describe(n_) + ": " + why); }
  bool HasInput(size_t i) const { return i < n_.inputs.size() && n_.inputs[i] >= 0; }
  size_t num_inputs() const { return n_.inputs.size(); }
  size_t num_outputs() const { return n_.outputs.size(); }
  const graph::Value& In(size_t i) const { return g_.values[size_t(n_.inputs[i])]; }
  const std::vector<int64_t>& Shape(size_t i) const { return In(i).shape; }
  // The constant data of input i (fold functions only: every input is constant there).
  const graph::ConstantData& Const(size_t i) const { return *In(i).constant; }

  // The integer values of a constant input (Reshape's shape, Slice's starts, ...); an error names
  // the role when the input is missing, not constant after folding, or not an integer tensor.
  Result<std::vector<int64_t>> ConstInts(size_t i, const char* role) const;
  // The same for an optional input: nullopt when absent.
  Result<std::optional<std::vector<int64_t>>> OptionalConstInts(size_t i, const char* role) const;
  // A scalar constant input as a float (Clip's bounds, Pad's value...); nullopt when absent.
  Result<std::optional<float>> OptionalConstScalar(size_t i, const char* role) const;
  // axis in [-rank, rank) -> [0, rank).
  Result<int64_t> Axis(int64_t axis, size_t rank) const;
  Status NeedRank(size_t i, size_t rank, const char* what) const;

 private:
  const graph::Graph& g_;
  const graph::Node& n_;
};

// NodeView plus writing the node's outputs (shape inference).
class InferContext : public NodeView {
 public:
  InferContext(graph::Graph* g, graph::Node* n) : NodeView(*g, *n), mg_(*g), mn_(*n) {}

  graph::Value& Out(size_t i) { return mg_.values[size_t(mn_.outputs[i])]; }
  // Canonicalized attributes (auto_pad resolved into pads) are written back to the node.
  graph::Node& mutable_node() { return mn_; }
  void SetOut(size_t i, graph::DataType t, std::vector<int64_t> shape);
  void SetConstOut(size_t i, graph::ConstantData c);

 private:
  graph::Graph& mg_;
  graph::Node& mn_;
};

}  // namespace tunefarm::operators

#endif  // TUNEFARM_COMPILER_OPERATORS_INFER_CONTEXT_H_
