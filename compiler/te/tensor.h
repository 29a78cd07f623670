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
#include "compiler/ir/tensor.h"

namespace tunefarm::te {

using ir::Expr;
using ir::Tensor;
using ir::Type;
using ir::Var;

using ir::IterVar;
using ir::IterVarNode;
using ir::ReduceKind;
IterVar MakeIterVar(const std::string& name, int64_t extent, bool is_reduce);

Tensor Placeholder(const std::string& name, std::vector<int64_t> shape, Type dtype = Type::Float(32));

using ComputeFn = std::function<Expr(const std::vector<Expr>& indices)>;
// out[indices] = fn(indices).
Tensor Compute(const std::string& name, std::vector<int64_t> shape, const ComputeFn& fn);
// out[indices] = reduce over reduce_axes of fn(indices); fn reads the reduce axes' vars.
Tensor ComputeReduce(const std::string& name, std::vector<int64_t> shape, ReduceKind kind,
                     std::vector<IterVar> reduce_axes, const ComputeFn& fn);

// tensor(i, j, ...) as an expression.
Expr Read(const Tensor& tensor, std::vector<Expr> indices);
// Reads tensor at indices clamped into its shape, so a padded read that a select discards never
// touches memory outside the buffer (both select arms are evaluated).
Expr ClampedRead(const Tensor& tensor, std::vector<Expr> indices);
inline Expr AxisExpr(const IterVar& iv) { return ir::AsExpr(iv->var); }

}  // namespace tunefarm::te

#endif  // TUNEFARM_COMPILER_TE_TENSOR_H_
