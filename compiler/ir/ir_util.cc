#include "compiler/ir/ir_util.h"

#include "compiler/ir/ir_mutator.h"
#include "compiler/ir/ir_visitor.h"

namespace tunefarm::ir {
namespace {

class Substituter : public IRMutator {
 public:
  explicit Substituter(const VarMap& map) : map_(map) {}
  using IRMutator::Mutate;

 protected:
  Expr Visit_(const VarNode* op, const Expr& self) override {
    auto it = map_.find(op);
    return it == map_.end() ? self : it->second;
  }

 private:
  const VarMap& map_;
};

class ExprReplacer : public IRMutator {
 public:
  ExprReplacer(const ExprNode* target, Expr with) : target_(target), with_(std::move(with)) {}
  using IRMutator::Mutate;
  Expr Mutate(const Expr& e) override { return e.get() == target_ ? with_ : IRMutator::Mutate(e); }

 private:
  const ExprNode* target_;
  Expr with_;
};

class VarUseFinder : public IRVisitor {
 public:
  explicit VarUseFinder(const std::function<bool(const VarNode*)>& pred) : pred_(pred) {}
  bool found = false;
  using IRVisitor::Visit;

 protected:
  void Visit_(const VarNode* op) override { found = found || pred_(op); }
  void Visit_(const Load* op) override {
    found = found || pred_(op->buffer.get());
    Visit(op->index);
  }
  void Visit_(const Store* op) override {
    found = found || pred_(op->buffer.get());
    Visit(op->value);
    Visit(op->index);
  }

 private:
  const std::function<bool(const VarNode*)>& pred_;
};

}  // namespace

Expr Substitute(const Expr& e, const VarMap& map) {
  if (map.empty()) return e;
  return Substituter(map).Mutate(e);
}
Stmt Substitute(const Stmt& s, const VarMap& map) {
  if (map.empty()) return s;
  return Substituter(map).Mutate(s);
}
bool UsesVar(const Expr& e, const std::function<bool(const VarNode*)>& pred) {
  VarUseFinder f(pred);
  f.Visit(e);
  return f.found;
}
bool UsesVar(const Stmt& s, const std::function<bool(const VarNode*)>& pred) {
  VarUseFinder f(pred);
  f.Visit(s);
  return f.found;
}

Expr ReplaceExpr(const Expr& e, const ExprNode* target, const Expr& with) {
  return ExprReplacer(target, with).Mutate(e);
}

}  // namespace tunefarm::ir
