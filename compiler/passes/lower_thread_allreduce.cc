#include "compiler/passes/lower_thread_allreduce.h"

#include <algorithm>

#include "compiler/ir/gpu_intrinsics.h"
#include "compiler/ir/ir_mutator.h"
#include "compiler/ir/ir_operators.h"
#include "compiler/ir/ir_util.h"

namespace tunefarm::passes {
namespace {

using ir::Expr;
using ir::Stmt;

constexpr int64_t kWarpSize = 32;

class AllReduceLowering : public ir::IRMutator {
 public:
  AllReduceLowering(const GpuIndexVars& vars, const GpuLaunch& launch) : vars_(vars), launch_(launch) {}
  Status status;
  using ir::IRMutator::Mutate;

 protected:
  Stmt Visit_(const ir::LetStmt* op, const Stmt& self) override {
    const ir::Call* call = ir::AsThreadAllReduce(op->value);
    if (!call) return ir::IRMutator::Visit_(op, self);
    const int64_t dim = *ir::AsConstInt(call->args[1]);
    const int64_t threads = launch_.block[0];
    if (dim != 0) {
      status = Status::InvalidArgument("the cross-thread reduction '" + op->var->name + "' runs along threadIdx." +
                                       "xyz"[dim] + ": only threadIdx.x (consecutive lanes of a warp) is supported");
      return self;
    }
    if ((threads & (threads - 1)) != 0) {
      status = Status::InvalidArgument("the cross-thread reduction '" + op->var->name + "' runs over " +
                                       std::to_string(threads) + " threads of threadIdx.x: it needs a power of two");
      return self;
    }
    const bool is_max = call->name == std::string(ir::kThreadAllReduceMax);
    const ir::Type t = call->type;
    ir::Var reg = ir::MakeVar(op->var->name + ".reg", ir::Type::Handle());
    const Expr r = ir::Load::Make(t, reg, Expr(0));
    auto combine = [&](const Expr& a, const Expr& b) { return is_max ? ir::max(a, b) : a + b; };
    auto butterfly = [&](int64_t width, std::vector<Stmt>* out) {
      for (int64_t m = width / 2; m >= 1; m /= 2)
        out->push_back(ir::Store::Make(reg, combine(r, ir::ShuffleXor(r, m)), Expr(0)));
    };

    std::vector<Stmt> seq = {ir::Store::Make(reg, Mutate(call->args[0]), Expr(0))};
    butterfly(std::min(threads, kWarpSize), &seq);
    if (threads > kWarpSize) {
      const int64_t warps = threads / kWarpSize, rows = launch_.block[1] * launch_.block[2];
      ir::Var totals = ir::MakeVar(op->var->name + ".warp_totals", ir::Type::Handle());
      const Expr tx = ir::AsExpr(vars_.thread[0]);
      const Expr row = ir::AsExpr(vars_.thread[1]) + ir::AsExpr(vars_.thread[2]) * Expr(launch_.block[1]);
      const Expr lane = tx % Expr(kWarpSize);
      std::vector<Stmt> exchange = {
          ir::IfThenElse::Make(lane == Expr(0), ir::Store::Make(totals, r, row * Expr(warps) + tx / Expr(kWarpSize))),
          ir::Barrier::Make(ir::MemoryScope::kShared),
          ir::Store::Make(reg, ir::Load::Make(t, totals, row * Expr(warps) + lane % Expr(warps)), Expr(0)),
      };
      butterfly(warps, &exchange);
      exchange.push_back(ir::Barrier::Make(ir::MemoryScope::kShared));
      seq.push_back(ir::Allocate::Make(totals, t, warps * rows, ir::Block::Make(exchange), ir::MemoryScope::kShared));
    }
    seq.push_back(ir::LetStmt::Make(op->var, r, Mutate(op->body)));
    return ir::Allocate::Make(reg, t, 1, ir::Block::Make(seq), ir::MemoryScope::kLocal);
  }

 private:
  const GpuIndexVars& vars_;
  const GpuLaunch& launch_;
};

}  // namespace

Result<Stmt> LowerThreadAllReduce(const Stmt& kernel, const GpuIndexVars& vars, const GpuLaunch& launch) {
  AllReduceLowering lowering(vars, launch);
  Stmt out = lowering.Mutate(kernel);
  TUNEFARM_RETURN_IF_ERROR(lowering.status);
  return out;
}

}  // namespace tunefarm::passes
