#include "compiler/passes/storage_flatten.h"

#include <unordered_map>

#include "compiler/ir/ir_mutator.h"
#include "compiler/ir/ir_operators.h"
#include "compiler/te/tensor.h"
#include "tunefarm/runtime/check.h"

namespace tunefarm::passes {
namespace {

using namespace ir;  // NOLINT(google-build-using-namespace)

struct BufferInfo {
  Var buffer;
  std::vector<Expr> mins;         // empty for arguments (all zero)
  std::vector<int64_t> shape;     // row-major extents
  std::vector<RegionFold> folds;  // empty, or per dimension
};

class Flattener : public IRMutator {
 public:
  explicit Flattener(const std::vector<BufferBinding>& args) {
    for (const auto& a : args) buffers_[a.tensor.get()] = {a.buffer, {}, a.tensor->shape, {}};
  }
  using IRMutator::Mutate;

 protected:
  Expr FlatIndex(const BufferInfo& info, const std::vector<Expr>& indices) {
    Expr index;
    for (size_t d = 0; d < indices.size(); ++d) {
      Expr i = indices[d];
      if (!info.mins.empty() && !IsConstInt(info.mins[d], 0)) i = i - info.mins[d];
      if (!info.folds.empty() && info.folds[d].folded()) {
        const RegionFold& f = info.folds[d];
        i = (i / Expr(f.stride)) * Expr(f.block) + i % Expr(f.stride);
      }
      index = index.defined() ? index * Expr(info.shape[d]) + i : i;
    }
    return index.defined() ? index : Expr(0);
  }

  const BufferInfo& Lookup(const Tensor& t) {
    auto it = buffers_.find(t.get());
    TUNEFARM_CHECK_MSG(it != buffers_.end(), ("tensor accessed outside its realize: " + t->name).c_str());
    return it->second;
  }

  Expr Visit_(const ProducerLoad* op, const Expr&) override {
    std::vector<Expr> idx;
    for (const Expr& i : op->indices) idx.push_back(Mutate(i));
    const BufferInfo& info = Lookup(op->tensor);
    return Load::Make(op->tensor->dtype, info.buffer, FlatIndex(info, idx));
  }

  Stmt Visit_(const ProducerStore* op, const Stmt&) override {
    std::vector<Expr> idx;
    for (const Expr& i : op->indices) idx.push_back(Mutate(i));
    const BufferInfo& info = Lookup(op->tensor);
    return Store::Make(info.buffer, Mutate(op->value), FlatIndex(info, idx));
  }

  Stmt Visit_(const ProducerRealize* op, const Stmt&) override {
    if (buffers_.count(op->tensor.get())) return Mutate(op->body);  // an argument: nothing to allocate
    std::vector<Expr> mins;
    int64_t size = 1;
    for (size_t d = 0; d < op->mins.size(); ++d) {
      mins.push_back(Mutate(op->mins[d]));
      size *= op->extents[d];
    }
    Var buf = MakeVar(op->tensor->name, Type::Handle());
    buffers_[op->tensor.get()] = {buf, mins, op->extents, op->folds};
    Stmt body = Mutate(op->body);
    buffers_.erase(op->tensor.get());
    return Allocate::Make(buf, op->tensor->dtype, size, body, op->scope);
  }

 private:
  std::unordered_map<const TensorNode*, BufferInfo> buffers_;
};

}  // namespace

Stmt StorageFlatten(const Stmt& s, const std::vector<BufferBinding>& args) { return Flattener(args).Mutate(s); }

}  // namespace tunefarm::passes
