#include "compiler/te/tensor.h"

#include "compiler/ir/ir_operators.h"
#include "tunefarm/runtime/check.h"

namespace tunefarm::te {

IterVar MakeIterVar(const std::string& name, int64_t extent, bool is_reduce) {
  return std::make_shared<const IterVarNode>(IterVarNode{ir::MakeVar(name), extent, is_reduce});
}

Tensor Placeholder(const std::string& name, std::vector<int64_t> shape, Type dtype) {
  auto t = std::make_shared<ir::TensorNode>();
  t->name = name;
  t->shape = std::move(shape);
  t->dtype = dtype;
  return t;
}

namespace {
std::shared_ptr<ir::TensorNode> NewCompute(const std::string& name, std::vector<int64_t> shape,
                                           std::vector<Expr>* index_exprs) {
  auto t = std::make_shared<ir::TensorNode>();
  t->name = name;
  t->shape = std::move(shape);
  t->is_placeholder = false;
  static const char* kAxisNames[] = {"i", "j", "k", "l", "m", "n", "o", "p"};
  for (size_t d = 0; d < t->shape.size(); ++d) {
    std::string axis = d < 8 ? kAxisNames[d] : "ax" + std::to_string(d);
    t->axes.push_back(MakeIterVar(name + "." + axis, t->shape[d], false));
    index_exprs->push_back(AxisExpr(t->axes.back()));
  }
  return t;
}
}  // namespace

Tensor Compute(const std::string& name, std::vector<int64_t> shape, const ComputeFn& fn) {
  std::vector<Expr> idx;
  auto t = NewCompute(name, std::move(shape), &idx);
  t->body = fn(idx);
  t->dtype = t->body.type();
  return t;
}

Tensor ComputeReduce(const std::string& name, std::vector<int64_t> shape, ReduceKind kind,
                     std::vector<IterVar> reduce_axes, const ComputeFn& fn) {
  std::vector<Expr> idx;
  auto t = NewCompute(name, std::move(shape), &idx);
  t->reduce = kind;
  t->reduce_axes = std::move(reduce_axes);
  for (const auto& r : t->reduce_axes) TUNEFARM_CHECK(r->is_reduce);
  t->body = fn(idx);
  t->dtype = t->body.type();
  return t;
}

Expr Read(const Tensor& tensor, std::vector<Expr> indices) {
  return ir::ProducerLoad::Make(tensor, std::move(indices));
}

Expr ClampedRead(const Tensor& tensor, std::vector<Expr> indices) {
  for (size_t d = 0; d < indices.size(); ++d) {
    indices[d] = ir::min(ir::max(indices[d], Expr(0)), Expr(tensor->shape[d] - 1));
  }
  return Read(tensor, std::move(indices));
}

}  // namespace tunefarm::te
