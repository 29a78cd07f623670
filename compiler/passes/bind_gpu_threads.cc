#include "compiler/passes/bind_gpu_threads.h"

#include <algorithm>
#include <sstream>

#include "compiler/ir/gpu_intrinsics.h"
#include "compiler/ir/ir_mutator.h"
#include "compiler/ir/ir_operators.h"
#include "compiler/ir/ir_printer.h"
#include "compiler/ir/ir_util.h"
#include "compiler/ir/ir_visitor.h"

namespace tunefarm::passes {
namespace {

using ir::Expr;
using ir::ForKind;
using ir::Stmt;

class BarrierFinder : public ir::IRVisitor {
 public:
  bool found = false;
  using ir::IRVisitor::Visit;

 protected:
  void Visit_(const ir::Barrier*) override { found = true; }
  // A cross-thread reduction synchronizes like a barrier: every thread must reach it.
  void Visit_(const ir::Call* op) override {
    if (ir::IsThreadAllReduce(op)) found = true;
    ir::IRVisitor::Visit_(op);
  }
};

// Pass 1: the launch extents, and the structural errors.
class LaunchCollector : public ir::IRVisitor {
 public:
  Status status;
  std::array<int64_t, 3> grid = {1, 1, 1}, block = {1, 1, 1};
  bool any_thread_loop = false;
  ir::VarMap index_of;  // loop variable -> blockIdx/threadIdx
  const GpuIndexVars* vars = nullptr;
  using ir::IRVisitor::Visit;

 protected:
  void Visit_(const ir::For* op) override {
    if (!status.ok()) return;
    if (!ir::IsGpuLoop(op->kind)) {
      ++non_block_depth_;
      ir::IRVisitor::Visit_(op);
      --non_block_depth_;
      return;
    }
    const int64_t* extent = ir::AsConstInt(op->extent);
    const int64_t* min = ir::AsConstInt(op->min);
    if (!extent || !min || *min != 0) {
      status = Status::InvalidArgument("GPU loop '" + op->var->name + "' (" + ir::ForKindName(op->kind) +
                                       ") must start at 0 and have a constant extent");
      return;
    }
    const int dim = ir::GpuDimension(op->kind);
    if (ir::IsGpuBlockLoop(op->kind)) {
      if (non_block_depth_ > 0) {
        status = Status::InvalidArgument("block loop '" + op->var->name +
                                         "' is inside a serial or thread loop: block loops must be outermost");
        return;
      }
      // One kernel is one nest of block loops, each dimension bound once: a second nest (another
      // root stage) would need a grid-wide barrier between them, which one launch does not have.
      if (++block_loops_[dim] > 1) {
        status = Status::InvalidArgument(std::string("blockIdx.") + "xyz"[dim] + " is bound twice (loop '" +
                                         op->var->name + "'): a GPU schedule is one nest of block loops, one kernel");
        return;
      }
      grid[size_t(dim)] = *extent;
      index_of[op->var.get()] = ir::AsExpr(vars->block[size_t(dim)]);
      ir::IRVisitor::Visit_(op);
      return;
    }
    any_thread_loop = true;
    block[size_t(dim)] = std::max(block[size_t(dim)], *extent);
    index_of[op->var.get()] = ir::AsExpr(vars->thread[size_t(dim)]);
    ++non_block_depth_;
    ir::IRVisitor::Visit_(op);
    --non_block_depth_;
  }

 private:
  int non_block_depth_ = 0;
  int block_loops_[3] = {0, 0, 0};
};

// Pass 2: drop the GPU loops, guarding thread loops shorter than their dimension.
class LoopBinder : public ir::IRMutator {
 public:
  LoopBinder(const GpuIndexVars& vars, const std::array<int64_t, 3>& block) : vars_(vars), block_(block) {}
  Status status;
  using ir::IRMutator::Mutate;

 protected:
  Stmt Visit_(const ir::For* op, const Stmt& self) override {
    if (!ir::IsGpuLoop(op->kind)) return ir::IRMutator::Visit_(op, self);
    Stmt body = Mutate(op->body);
    if (ir::IsGpuBlockLoop(op->kind)) return body;
    const int dim = ir::GpuDimension(op->kind);
    const int64_t extent = *ir::AsConstInt(op->extent);
    if (extent == block_[size_t(dim)]) return body;
    if (ContainsBarrier(body)) {
      status = Status::InvalidArgument("thread loop '" + op->var->name + "' of extent " + std::to_string(extent) +
                                       " is shorter than its block dimension (" + std::to_string(block_[size_t(dim)]) +
                                       ") and contains a barrier: the threads it guards off would never reach it");
    }
    return ir::IfThenElse::Make(ir::AsExpr(vars_.thread[size_t(dim)]) < Expr(extent), body);
  }

 private:
  const GpuIndexVars& vars_;
  std::array<int64_t, 3> block_;
};

// Pass 3: barriers must be reached by every thread of the block.
class DivergentBarrierCheck : public ir::IRVisitor {
 public:
  explicit DivergentBarrierCheck(const GpuIndexVars& vars) : vars_(vars) {}
  Status status;
  using ir::IRVisitor::Visit;

 protected:
  void Visit_(const ir::IfThenElse* op) override {
    if (status.ok() && UsesThread(op->condition) &&
        (ContainsBarrier(op->then_case) || (op->else_case.defined() && ContainsBarrier(op->else_case)))) {
      std::ostringstream os;
      os << "a barrier is inside a branch on the thread index (" << op->condition
         << "): some threads of the block would never reach it";
      status = Status::InvalidArgument(os.str());
    }
    ir::IRVisitor::Visit_(op);
  }
  void Visit_(const ir::For* op) override {
    if (status.ok() && (UsesThread(op->min) || UsesThread(op->extent)) && ContainsBarrier(op->body)) {
      status = Status::InvalidArgument("a barrier is inside loop '" + op->var->name +
                                       "' whose trip count depends on the thread index");
    }
    ir::IRVisitor::Visit_(op);
  }

 private:
  bool UsesThread(const Expr& e) const {
    return ir::UsesVar(e, [&](const ir::VarNode* v) {
      return v == vars_.thread[0].get() || v == vars_.thread[1].get() || v == vars_.thread[2].get();
    });
  }
  const GpuIndexVars& vars_;
};

}  // namespace

bool ContainsBarrier(const Stmt& s) {
  BarrierFinder f;
  f.Visit(s);
  return f.found;
}

std::string GpuLaunch::ToString() const {
  std::ostringstream os;
  os << "grid(" << grid[0] << "," << grid[1] << "," << grid[2] << ") block(" << block[0] << "," << block[1] << ","
     << block[2] << ") shared " << shared_bytes << " B local " << local_bytes << " B";
  return os.str();
}

GpuIndexVars GpuIndexVars::Make() {
  GpuIndexVars v;
  const char* axes[3] = {"x", "y", "z"};
  for (int d = 0; d < 3; ++d) {
    v.block[size_t(d)] = ir::MakeVar(std::string("blockIdx.") + axes[d]);
    v.thread[size_t(d)] = ir::MakeVar(std::string("threadIdx.") + axes[d]);
  }
  return v;
}

Result<Stmt> BindGpuThreads(const Stmt& s, const GpuIndexVars& vars, GpuLaunch* launch) {
  LaunchCollector collect;
  collect.vars = &vars;
  collect.Visit(s);
  TUNEFARM_RETURN_IF_ERROR(collect.status);
  if (!collect.any_thread_loop) {
    return Status::InvalidArgument(
        "the schedule binds no loop to GPU threads: one thread per block would waste the GPU");
  }
  LoopBinder binder(vars, collect.block);
  Stmt bound = binder.Mutate(s);
  TUNEFARM_RETURN_IF_ERROR(binder.status);
  bound = ir::Substitute(bound, collect.index_of);
  DivergentBarrierCheck check(vars);
  check.Visit(bound);
  TUNEFARM_RETURN_IF_ERROR(check.status);
  launch->grid = collect.grid;
  launch->block = collect.block;
  return bound;
}

}  // namespace tunefarm::passes
