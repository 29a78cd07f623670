// How the ONNX backend-test runners feed a test's inputs: integer inputs are shape operands
// (starts, axes, split sizes, indices), the float roi and scales of Resize and Upsample are
// interpolation parameters and OneHot's depth (of any type) sets its output's shape: all are fed
// as the constants a deployed model has; everything else is a runtime input.
#ifndef TUNEFARM_TESTS_COMPILER_ONNX_TEST_INPUTS_H_
#define TUNEFARM_TESTS_COMPILER_ONNX_TEST_INPUTS_H_

#include "compiler/graph/graph.h"

namespace tunefarm::testing {

// Whether every use of `value` is a roi or scales operand of Resize, the scales of Upsample or
// the depth of OneHot.
inline bool OnlyShapingOperand(const graph::Graph& g, int value) {
  bool used = false;
  for (const graph::Node& n : g.nodes) {
    for (size_t k = 0; k < n.inputs.size(); ++k) {
      if (n.inputs[k] != value) continue;
      const bool operand = (n.op_type == "Resize" && (k == 1 || k == 2)) || (n.op_type == "Upsample" && k == 1) ||
                           (n.op_type == "OneHot" && k == 1);
      if (!operand) return false;
      used = true;
    }
  }
  return used;
}

inline bool FedAsConstant(const graph::Graph& g, int value, const graph::ConstantData& data) {
  return data.dtype != graph::DataType::kFloat32 || OnlyShapingOperand(g, value);
}

}  // namespace tunefarm::testing

#endif  // TUNEFARM_TESTS_COMPILER_ONNX_TEST_INPUTS_H_
