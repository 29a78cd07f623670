// The tunable workload a graph node runs (conv2d, depthwise conv2d, dense), shared by task
// extraction and the model compiler so both agree on every key.
#ifndef TUNEFARM_COMPILER_OPERATORS_NODE_WORKLOAD_H_
#define TUNEFARM_COMPILER_OPERATORS_NODE_WORKLOAD_H_

#include <cstdint>
#include <string>
#include <vector>

#include "compiler/graph/graph.h"
#include "tunefarm/compiler/workload.h"
#include "tunefarm/runtime/result.h"

namespace tunefarm::compiler {

// The integer nodes that may run as int8 tasks -- QLinearConv, ConvInteger, QLinearMatMul,
// MatMulInteger and com.microsoft.QGemm -- and the input positions of their operands, zero points,
// scales and bias (-1: the operator has none).
struct IntegerOperands {
  int a, a_scale, a_zero, b, b_scale, b_zero, bias, y_scale, y_zero;
};
const IntegerOperands* IntegerOperandsOf(const std::string& op_type);  // null for any other operator

// A residual add fused into an integer node (model/passes/qdq_to_integer.h): its inputs from
// kFusedResidual on are the residual, its scale and zero point, and the sum's scale and zero point
// (a QLinearAdd's), the node's output the sum; its own output parameters quantize the product first.
inline constexpr size_t kFusedResidual = 9;

// What an int8 task node's constants say (docs/quantization.md): the input's zero point, the
// weights with their zero point subtracted, the int32 bias, and the requantization.
struct Int8Constants {
  int32_t a_zero = 0;
  // The graph value of an input zero point computed at run time (DynamicQuantizeLinear's, one
  // element), which the kernel reads as an argument; -1 when it is the constant a_zero.
  int a_zero_value = -1;
  std::vector<int8_t> weights;  // b - b_zero, in b's own layout; empty when b is an activation
  int32_t b_zero = 0;           // b an activation (a batched product): its zero point
  std::vector<int32_t> bias;    // empty: none
  bool requantized = false;     // false: the output is the int32 accumulator
  // requantized: one multiplier per output channel, (a_scale * b_scale) / y_scale in float32 as
  // ONNX Runtime forms it (times QGemm's alpha), and the output's zero point and type.
  std::vector<float> multipliers;
  float y_scale = 1.0f;
  int32_t y_zero = 0;
  bool y_signed = false;
  // A fused residual add (kFusedResidual): the residual value and its parameters, the sum's.
  int residual_value = -1;
  bool residual_signed = false, sum_signed = false;
  float residual_scale = 1.0f, sum_scale = 1.0f;
  int32_t residual_zero = 0, sum_zero = 0;
};

// The node's constants when it is an int8 task: its weights, zero points and scales constants (the
// input's zero point may be a one-element value computed at run time), per tensor but for the
// weights' per output channel, and every weight minus its zero point within
// int8 (a uint8 weight of zero point 0 above 127 is not). A product of two activations of one type
// (QLinearMatMul, MatMulInteger) has constant per-tensor parameters instead. Otherwise an error
// saying which does not hold; the node then runs on its untuned integer kernel.
Result<Int8Constants> Int8ConstantsOf(const graph::Graph& g, const graph::Node& n);

// True and *w set when the node is a tunable operator (an int8 task: Int8ConstantsOf holds and the
// workload's dtype is its input's, uint8 or int8) (constant weights, supported shapes): the
// operator and its parameters, with no implementation (template_table.h's Implementations lists
// those of a target).
bool NodeWorkload(const graph::Graph& g, const graph::Node& n, Workload* w);

}  // namespace tunefarm::compiler

#endif  // TUNEFARM_COMPILER_OPERATORS_NODE_WORKLOAD_H_
