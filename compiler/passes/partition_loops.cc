#include "compiler/passes/partition_loops.h"

#include <algorithm>
#include <vector>

#include "compiler/arith/int_bounds.h"
#include "compiler/arith/linear_form.h"
#include "compiler/ir/ir_mutator.h"
#include "compiler/ir/ir_operators.h"
#include "compiler/ir/ir_util.h"
#include "compiler/ir/ir_visitor.h"
#include "compiler/passes/simplify.h"

namespace tunefarm::passes {
namespace {

using namespace ir;  // NOLINT(google-build-using-namespace)
using arith::IntBound;

// `lhs - rhs` of a guard `lhs < rhs` (or `lhs <= rhs`, as lhs - rhs - 1 < 0); undefined otherwise.
Expr GuardSlack(const Expr& cond) {
  if (const auto* lt = cond.as<LT>()) return lt->a - lt->b;
  if (const auto* le = cond.as<LE>()) return le->a - le->b - Expr(1);
  return Expr();
}

// Collects guards in a body together with the ranges of loops nested between the partitioned loop
// and the guard.
class GuardCollector : public IRVisitor {
 public:
  struct Guard {
    const IfThenElse* node;
    arith::VarBounds inner;
  };
  std::vector<Guard> guards;
  using IRVisitor::Visit;

 protected:
  void Visit_(const For* op) override {
    const int64_t* mn = AsConstInt(op->min);
    const int64_t* ext = AsConstInt(op->extent);
    if (mn && ext) inner_[op->var.get()] = {*mn, *mn + *ext - 1};
    IRVisitor::Visit_(op);
    inner_.erase(op->var.get());
  }
  void Visit_(const IfThenElse* op) override {
    if (op->likely) guards.push_back({op, inner_});
    IRVisitor::Visit_(op);
  }

 private:
  arith::VarBounds inner_;
};

class GuardRemover : public IRMutator {
 public:
  explicit GuardRemover(std::vector<const IfThenElse*> remove) : remove_(std::move(remove)) {}
  using IRMutator::Mutate;

 protected:
  Stmt Visit_(const IfThenElse* op, const Stmt& self) override {
    if (std::find(remove_.begin(), remove_.end(), op) != remove_.end()) return Mutate(op->then_case);
    return IRMutator::Visit_(op, self);
  }

 private:
  std::vector<const IfThenElse*> remove_;
};

class Partitioner : public IRMutator {
 public:
  using IRMutator::Mutate;

 protected:
  Stmt Visit_(const For* op, const Stmt& self) override {
    const int64_t* mn = AsConstInt(op->min);
    const int64_t* ext = AsConstInt(op->extent);
    if (!mn || !ext || op->kind == ForKind::kVectorized) return Descend(op, self);

    GuardCollector collector;
    collector.Visit(op->body);
    int64_t loop_end = *mn + *ext;  // exclusive
    int64_t split = loop_end;
    std::vector<const IfThenElse*> provable;
    for (const auto& g : collector.guards) {
      Expr slack = GuardSlack(g.node->condition);
      if (!slack.defined()) continue;
      arith::LinearForm lf = arith::ToLinearForm(Simplify(slack));
      int64_t c = lf.CoeffOfVar(op->var.get());
      if (c <= 0) continue;
      arith::LinearForm rest = lf;
      rest.AddTerm(AsExpr(op->var), -c);
      arith::VarBounds scope = bounds_;
      for (const auto& kv : g.inner) scope[kv.first] = kv.second;
      IntBound rb = arith::BoundOf(arith::FromLinearForm(rest), scope);
      if (rb.hi == IntBound::kPosInf) continue;
      // Guard holds for every inner iteration iff c*v + rb.hi < 0, i.e. v <= floor((-rb.hi - 1) / c).
      int64_t num = -rb.hi - 1;
      int64_t last_safe = num >= 0 ? num / c : -((-num + c - 1) / c);
      if (last_safe + 1 <= *mn) continue;  // fails from the first iteration: nothing to peel for v
      split = std::min(split, last_safe + 1);
      provable.push_back(g.node);
    }
    if (provable.empty() || split <= *mn) return Descend(op, self);

    // Main part [mn, split): the collected guards all hold there.
    bounds_[op->var.get()] = {*mn, split - 1};
    Stmt main_body = Mutate(GuardRemover(provable).Mutate(op->body));
    Stmt main = For::Make(op->var, Expr(*mn), Expr(split - *mn), op->kind, main_body);
    bounds_.erase(op->var.get());
    if (split >= loop_end) return main;
    // Tail [split, end): a fresh variable, so later passes see two independent loops.
    Var tail_var = MakeVar(op->var->name + ".tail");
    Stmt tail_body = Substitute(op->body, {{op->var.get(), AsExpr(tail_var)}});
    bounds_[tail_var.get()] = {split, loop_end - 1};
    tail_body = Mutate(Simplify(For::Make(tail_var, Expr(split), Expr(loop_end - split), op->kind, tail_body)));
    bounds_.erase(tail_var.get());
    return Block::Make({main, tail_body});
  }

  Stmt Descend(const For* op, const Stmt& self) {
    const int64_t* mn = AsConstInt(op->min);
    const int64_t* ext = AsConstInt(op->extent);
    if (mn && ext) bounds_[op->var.get()] = {*mn, *mn + *ext - 1};
    Stmt body = Mutate(op->body);
    bounds_.erase(op->var.get());
    return body.same_as(op->body) ? self : For::Make(op->var, op->min, op->extent, op->kind, body);
  }

 private:
  arith::VarBounds bounds_;
};

}  // namespace

Stmt PartitionLoops(const Stmt& s) { return Simplify(Partitioner().Mutate(s)); }

}  // namespace tunefarm::passes
