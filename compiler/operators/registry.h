// The operator registry: the one table that says, per ONNX operator, what tunefarm reads and does.
//
// Each row (an OperatorDef) holds the operator's attributes (name, kind, whether required) checked
// at import, its shape/type inference, an optional constant evaluator (shape arithmetic such as
// Shape -> Gather -> Div -> Slice folds while shapes are inferred), and its lowering (one for every
// target kind: the target's backend schedules it). The importer's claimed list, the docs table
// (docs/onnx_support.md) and `tunefarm ops` come from this table, so adding an operator is one row
// plus its functions, in the family file that holds its relatives (control_ops.cc,
// elementwise_ops.cc, index_ops.cc, integer_ops.cc, microsoft_ops.cc, nn_ops.cc, norm_ops.cc, recurrent_ops.cc,
// reduce_ops.cc, quantize_ops.cc, resize_ops.cc, tensor_ops.cc), and its tests (docs/adding_an_operator.md).
//
// The table is built once, on first use, from the family files' rows; it is immutable afterwards
// and safe to read from any thread.
#ifndef TUNEFARM_COMPILER_OPERATORS_REGISTRY_H_
#define TUNEFARM_COMPILER_OPERATORS_REGISTRY_H_

#include <string>
#include <string_view>
#include <vector>

#include "compiler/graph/graph.h"

namespace tunefarm::operators {

class InferContext;  // operators/infer_context.h
class LowerApi;      // operators/lower_api.h

// Shorthands for the family tables' attribute kinds.
inline constexpr graph::Attribute::Kind kInt = graph::Attribute::kInt;
inline constexpr graph::Attribute::Kind kInts = graph::Attribute::kInts;
inline constexpr graph::Attribute::Kind kFloat = graph::Attribute::kFloat;
inline constexpr graph::Attribute::Kind kFloats = graph::Attribute::kFloats;
inline constexpr graph::Attribute::Kind kString = graph::Attribute::kString;
inline constexpr graph::Attribute::Kind kTensor = graph::Attribute::kTensor;

struct AttrSpec {
  AttrSpec(const char* n, graph::Attribute::Kind k, bool r = false) : name(n), kind(k), required(r) {}
  const char* name;
  graph::Attribute::Kind kind;
  bool required;
};

using InferFn = Status (*)(InferContext& cx);
// Computes the node's outputs when every input is a constant (already shape-inferred); only
// exact operations (integer arithmetic, data movement, IEEE float ops done in float), so a folded
// value equals what the kernel would compute.
using FoldFn = Result<std::vector<graph::ConstantData>> (*)(InferContext& cx);
using LowerFn = Status (*)(LowerApi& cx, const graph::Node& n);

struct OperatorDef {
  const char* name;  // the ONNX op type
  // The file that defines it: elementwise, nn, norm, tensor, reduce, resize, recurrent, control, index,
  // quantize, integer, com.microsoft.
  const char* family;
  std::vector<AttrSpec> attrs;  // every attribute of every opset form read; others are refused
  InferFn infer = nullptr;
  FoldFn fold = nullptr;  // null: never folded during inference
  // One lowering for every target kind: the definitions come from compiler/compute, the target's
  // backend schedules them (Backend::GenericSchedule) and the model lowering (LowerApi) picks the tunable
  // templates of the target's kind (schedule/template_table.h). What differs between kinds is a
  // Backend decision, never a second column here.
  LowerFn lower = nullptr;
  const char* notes = "";  // limits and forms, for the docs table
  // Folds constants of any size: views (Reshape, Squeeze...) cost nothing to fold, and a weight
  // behind one must stay a constant for the conv/dense templates at every opt level.
  bool fold_any_size = false;
  // Inputs [0, required_inputs) must be present (not omitted); checked before inference.
  int required_inputs = 1;
};

// ONNX Runtime's com.microsoft operators (the QOperator quantizer writes them into real models) are
// rows named "com.microsoft.<op>": a graph node of another domain than the default one carries
// that qualified name as its op type (no default-domain operator has a dot in its name).
constexpr char kMicrosoftDomain[] = "com.microsoft";
std::string QualifiedOpType(std::string_view domain, std::string_view op_type);
// The row for an op type (qualified for the com.microsoft domain), or null.
const OperatorDef* FindOperator(std::string_view op_type);
// Every row, sorted by name.
const std::vector<const OperatorDef*>& AllOperators();
// The claimed op types, sorted.
std::vector<std::string> OperatorNames();

// Checks a node's attributes against its row: unknown attributes, wrong kinds and missing
// required ones are InvalidArgument naming the node, op and opset.
Status CheckAttributes(const graph::Graph& g, const graph::Node& n, const OperatorDef& def);

// The markdown table of docs/onnx_support.md ("| op | family | attributes | notes |" rows).
std::string OperatorTableMarkdown();

// Family tables (one per *_ops.cc file); the registry concatenates them.
std::vector<OperatorDef> ElementwiseOperators();
std::vector<OperatorDef> NnOperators();
std::vector<OperatorDef> NormOperators();
std::vector<OperatorDef> TensorOperators();
std::vector<OperatorDef> ReduceOperators();
std::vector<OperatorDef> ResizeOperators();
std::vector<OperatorDef> RecurrentOperators();
std::vector<OperatorDef> ControlOperators();
std::vector<OperatorDef> IndexOperators();
std::vector<OperatorDef> QuantizeOperators();

// An If node one of whose branches cannot run at the compiled shapes: the attributes InferShapes
// (compiler/model/passes/infer_shapes.cc) gives it, read by the If row (control_ops.cc): the cut
// branch (0 then, 1 else) and the shape error that cut it.
inline constexpr char kCutBranchAttr[] = "tunefarm.cut_branch";
inline constexpr char kCutReasonAttr[] = "tunefarm.cut_reason";
std::vector<OperatorDef> IntegerOperators();
std::vector<OperatorDef> MicrosoftOperators();

}  // namespace tunefarm::operators

#endif  // TUNEFARM_COMPILER_OPERATORS_REGISTRY_H_
