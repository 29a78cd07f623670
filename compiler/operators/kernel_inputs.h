// KernelInputs: for an operator with optional inputs (zero points, biases), which node inputs a
// kernel receives and which of the kernel's tensors is which node input.
#ifndef TUNEFARM_COMPILER_OPERATORS_KERNEL_INPUTS_H_
#define TUNEFARM_COMPILER_OPERATORS_KERNEL_INPUTS_H_

#include <vector>

#include "compiler/graph/graph.h"
#include "compiler/ir/tensor.h"

namespace tunefarm::operators {

class KernelInputs {
 public:
  explicit KernelInputs(const graph::Node& n) {
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      if (n.inputs[i] >= 0) present_.push_back(i);
    }
  }
  // The node inputs the node has (not omitted), in order: what LowerApi::EmitPlain takes.
  const std::vector<size_t>& inputs() const { return present_; }
  // The kernel's tensor for node input i, or a null tensor when the node omits it.
  ir::Tensor Of(const std::vector<ir::Tensor>& tensors, size_t input) const {
    for (size_t k = 0; k < present_.size(); ++k) {
      if (present_[k] == input) return tensors[k];
    }
    return ir::Tensor();
  }

 private:
  std::vector<size_t> present_;
};

}  // namespace tunefarm::operators

#endif  // TUNEFARM_COMPILER_OPERATORS_KERNEL_INPUTS_H_
