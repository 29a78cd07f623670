// Tensor expressions: what an operator computes, independent of how (the schedule says how).
//
// A Tensor is the single output of an operation: a placeholder (a kernel argument) or a compute
// definition out[axes] = body, optionally reducing body over reduce axes (sum or max, starting from
// the reduction's identity). Bodies read other tensors with ProducerLoad, so tensors form a DAG.
// All axis domains start at 0.
#ifndef TUNEFARM_COMPILER_TE_TENSOR_H_
#define TUNEFARM_COMPILER_TE_TENSOR_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "compiler/ir/ir.h"

namespace tunefarm::te {

using ir::Expr;
using ir::Tensor;
using ir::Type;
using ir::Var;

struct IterVarNode {
  Var var;
  int64_t extent;
  bool is_reduce;
};
using IterVar = std::shared_ptr<const IterVarNode>;
IterVar MakeIterVar(const std::string& name, int64_t extent, bool is_reduce);

enum class ReduceKind { kNone, kSum, kMax, kProd };

}  // namespace tunefarm::te

namespace tunefarm::ir {
struct TensorNode {
  std::string name;
  std::vector<int64_t> shape;
  Type dtype = Type::Float(32);
  bool is_placeholder = true;
  // Compute definitions only:
  std::vector<te::IterVar> axes;         // one per output dimension, extent = shape[i]
  std::vector<te::IterVar> reduce_axes;  // empty unless reduce != kNone
  te::ReduceKind reduce = te::ReduceKind::kNone;
  Expr body;

  int64_t NumElements() const;
};
}  // namespace tunefarm::ir

namespace tunefarm::te {

Tensor Placeholder(const std::string& name, std::vector<int64_t> shape, Type dtype = Type::Float(32));

using ComputeFn = std::function<Expr(const std::vector<Expr>& indices)>;
// out[indices] = fn(indices).
Tensor Compute(const std::string& name, std::vector<int64_t> shape, const ComputeFn& fn);
// out[indices] = reduce over reduce_axes of fn(indices); fn reads the reduce axes' vars.
Tensor ComputeReduce(const std::string& name, std::vector<int64_t> shape, ReduceKind kind,
                     std::vector<IterVar> reduce_axes, const ComputeFn& fn);

// tensor(i, j, ...) as an expression.
Expr Read(const Tensor& tensor, std::vector<Expr> indices);
inline Expr AxisExpr(const IterVar& iv) { return ir::AsExpr(iv->var); }

}  // namespace tunefarm::te

#endif  // TUNEFARM_COMPILER_TE_TENSOR_H_
