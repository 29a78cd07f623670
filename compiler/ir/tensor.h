// What the kernel IR knows of a tensor: the node behind ir::Tensor (ProducerLoad, ProducerStore and
// ProducerRealize name one). A tensor is a placeholder (a kernel argument) or a compute definition
// out[axes] = body, optionally reducing body over reduce axes; te/tensor.h builds them. Kept here,
// below te/, so the IR does not depend on the tensor-expression layer built on it.
#ifndef TUNEFARM_COMPILER_IR_TENSOR_H_
#define TUNEFARM_COMPILER_IR_TENSOR_H_

#include <memory>
#include <string>
#include <vector>

#include "compiler/ir/ir.h"

namespace tunefarm::ir {

struct IterVarNode {
  Var var;
  int64_t extent;
  bool is_reduce;
};
using IterVar = std::shared_ptr<const IterVarNode>;

enum class ReduceKind { kNone, kSum, kMax, kProd };

struct TensorNode {
  std::string name;
  std::vector<int64_t> shape;
  Type dtype = Type::Float(32);
  bool is_placeholder = true;
  // Compute definitions only:
  std::vector<IterVar> axes;         // one per output dimension, extent = shape[i]
  std::vector<IterVar> reduce_axes;  // empty unless reduce != kNone
  ReduceKind reduce = ReduceKind::kNone;
  Expr body;

  int64_t NumElements() const;
};

}  // namespace tunefarm::ir

#endif  // TUNEFARM_COMPILER_IR_TENSOR_H_
