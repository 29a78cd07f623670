// Graph IR: the model-level dataflow graph the frontends produce and the graph passes rewrite.
//
// A Graph owns Values (tensors: graph inputs, constants, node outputs) and Nodes (operators, in
// topological order). Nodes refer to values by index; an optional input that is absent is -1.
// Constants carry their data; every value carries a dtype and, once shapes are inferred, a shape.
// Operator names and attributes follow ONNX (Conv, Gemm, Relu, ...), so importers translate
// little and the graph stays readable in dumps.
//
// Thread safety: a Graph is a plain value; no internal synchronization.
#ifndef TUNEFARM_COMPILER_GRAPH_GRAPH_H_
#define TUNEFARM_COMPILER_GRAPH_GRAPH_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tunefarm/runtime/artifact.h"
#include "tunefarm/runtime/result.h"

namespace tunefarm::graph {

enum class DataType { kFloat32, kInt64, kInt32, kInt8, kUInt8, kBool };
const char* DataTypeName(DataType t);
// The DataType values of element type `t` are computed in: runtime::StorageTypeOf(t), so
// float16 -> kFloat32 and uint32 -> kInt64.
DataType StorageDataType(runtime::ElementType t);
// The element type an ONNX TensorProto.DataType code names; nullopt for types tunefarm does not
// read (string, complex, float8). SupportedElementTypes lists the others, for messages.
std::optional<runtime::ElementType> OnnxElementType(int64_t code);
std::string SupportedElementTypes();

// Constant tensor data, row-major. Exactly one of the vectors is used, per dtype: float32 ->
// f32, the integer types and bool -> i64 (widened).
struct ConstantData {
  DataType dtype = DataType::kFloat32;
  std::vector<int64_t> shape;
  std::vector<float> f32;
  std::vector<int64_t> i64;
  int64_t num_elements() const;
};

struct Attribute {
  enum Kind { kInt, kFloat, kInts, kFloats, kString, kTensor } kind = kInt;
  int64_t i = 0;
  float f = 0;
  std::vector<int64_t> ints;
  std::vector<float> floats;
  std::string s;
  std::shared_ptr<const ConstantData> tensor;
};

struct Value {
  std::string name;
  DataType dtype = DataType::kFloat32;
  std::vector<int64_t> shape;
  bool shape_known = false;
  // Graph inputs: the name ONNX gives each symbolic dimension (dim_param; "" when the dimension
  // is fixed or unnamed), for the message that asks for --input-shape.
  std::vector<std::string> dim_params;
  // Graph inputs and outputs: the element type callers use when kernels do not compute on it
  // (float16 given and computed as float32, `dtype`); converted by the executor.
  std::optional<runtime::ElementType> edge_dtype;
  int producer = -1;                             // node index, -1 for inputs and constants
  std::shared_ptr<const ConstantData> constant;  // set for constants
};

// What graph fusion folded into a convolution or dense node after its main computation (bias and
// residual are its inputs 2 and 3): the activation, applied last. Set by FuseEpilogues. kPRelu's
// per-channel slopes are the node's input 4, a float32 constant shaped to broadcast over its
// output ([C, 1, 1] for a conv, [C] for a dense layer).
enum class FusedActivation { kNone, kRelu, kClip, kPRelu, kGelu, kGeluTanh };
// On an integer node (QLinearConv, QLinearMatMul, com.microsoft.QGemm) only kClip, its bounds
// those of the quantized output: the QDQ rewrite (model/passes/qdq_to_integer.h) puts the Relu or
// Clip that ran before the QuantizeLinear there, exactly, since quantizing is monotone.
struct NodeEpilogue {
  FusedActivation activation = FusedActivation::kNone;
  float clip_min = 0, clip_max = 0;  // kClip only (relu6 is a clip to [0, 6])
};

// A node inlined from a branch of an If runs only when the condition (a bool scalar value) is
// `when`; a node in nested branches holds one guard per level, outermost first.
struct NodeGuard {
  int cond = -1;
  bool when = true;
};

struct Node {
  std::string name;
  std::string op_type;
  std::vector<int> inputs;                 // value indices, -1 = omitted optional input
  std::vector<int> outputs;                // value indices
  std::map<std::string, Attribute> attrs;  // as the model gave them (ONNX names)
  NodeEpilogue epilogue;
  std::vector<NodeGuard> guards;  // empty: runs on every inference

  // Attribute accessors with defaults; a wrong attribute kind reads as absent.
  int64_t GetInt(const std::string& name, int64_t def) const;
  float GetFloat(const std::string& name, float def) const;
  std::vector<int64_t> GetInts(const std::string& name, const std::vector<int64_t>& def = {}) const;
  std::string GetString(const std::string& name, const std::string& def) const;
  bool Has(const std::string& name) const { return attrs.count(name) > 0; }
};

// A dimension kept symbolic within [min, max] (--input-shape NAME:1..8x...): the graph's shapes hold
// max, and the compiled artifact runs any size in the range (docs/dynamic_shapes.md). `inputs` are
// the graph inputs whose dimension 0 it is.
struct SymbolicDim {
  std::string name;  // the model's dim_param for it, else "<input>.0"
  int64_t min = 0, max = 0;
  std::vector<int> inputs;  // value indices
};

class Graph {
 public:
  std::vector<Value> values;
  std::vector<Node> nodes;  // topological order
  std::vector<int> inputs;  // runtime inputs (not constants)
  std::vector<int> outputs;
  int64_t opset = 0;  // of the default ONNX domain; 0 when built in code
  std::optional<SymbolicDim> symbolic_dim;

  int AddValue(Value v);
  int AddConstant(const std::string& name, ConstantData data);
  // "node 'conv1' (Conv)": how errors name a node.
  std::string Describe(const Node& n) const;
  // One line per node: outputs = op(inputs) with shapes.
  std::string ToString() const;
};

}  // namespace tunefarm::graph

#endif  // TUNEFARM_COMPILER_GRAPH_GRAPH_H_
