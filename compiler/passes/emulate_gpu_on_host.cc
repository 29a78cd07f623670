#include "compiler/passes/emulate_gpu_on_host.h"

#include "compiler/ir/gpu_intrinsics.h"
#include "compiler/ir/ir_mutator.h"
#include "compiler/ir/ir_operators.h"
#include "compiler/ir/ir_util.h"
#include "compiler/ir/ir_visitor.h"
#include "compiler/passes/bind_gpu_threads.h"
#include "tunefarm/runtime/check.h"

namespace tunefarm::passes {
namespace {

using ir::Expr;
using ir::Stmt;

// Gives every access to one buffer a per-thread offset (the thread's copy of a local array).
class PerThreadCopy : public ir::IRMutator {
 public:
  PerThreadCopy(const ir::VarNode* buffer, Expr offset) : buffer_(buffer), offset_(std::move(offset)) {}
  using ir::IRMutator::Mutate;

 protected:
  Expr Visit_(const ir::Load* op, const Expr& self) override {
    Expr e = ir::IRMutator::Visit_(op, self);
    const auto* l = e.as<ir::Load>();
    if (l->buffer.get() != buffer_) return e;
    return ir::Load::Make(l->type.element_of(), l->buffer, Shift(l->index));
  }
  Stmt Visit_(const ir::Store* op, const Stmt& self) override {
    Stmt s = ir::IRMutator::Visit_(op, self);
    const auto* st = s.as<ir::Store>();
    if (st->buffer.get() != buffer_) return s;
    return ir::Store::Make(st->buffer, st->value, Shift(st->index));
  }

 private:
  Expr Shift(const Expr& index) const {
    int lanes = index.type().lanes;
    return index + (lanes > 1 ? ir::Broadcast::Make(offset_, lanes) : offset_);
  }
  const ir::VarNode* buffer_;
  Expr offset_;
};

// A warp shuffle reads another thread's register. On the host, where a block's threads run one
// after another, it becomes an exchange through memory: every thread writes its operand, barrier,
// every thread reads its partner's, barrier (before the next exchange overwrites the slots). The
// lowering emits shuffles where all threads of the block execute them, as barriers need.
class ShuffleToExchange : public ir::IRMutator {
 public:
  ShuffleToExchange(ir::Var exchange, Expr linear_thread)
      : exchange_(std::move(exchange)), thread_(std::move(linear_thread)) {}
  bool found = false;
  using ir::IRMutator::Mutate;

 protected:
  Stmt Visit_(const ir::Store* op, const Stmt& self) override {
    const ir::Call* shuffle = nullptr;
    int count = 0;
    ir::PreOrderVisit(ir::Evaluate::Make(op->value), [&](const Expr& e) {
      if (ir::IsShuffle(e)) {
        shuffle = e.as<ir::Call>();
        ++count;
      }
    });
    if (!shuffle) return self;
    TUNEFARM_CHECK_MSG(count == 1, "the GPU emulation exchanges one shuffle per store");
    TUNEFARM_CHECK_MSG(shuffle->type == ir::Type::Float(32), "the GPU emulation exchanges float32 shuffles only");
    found = true;
    // lane ^ m for a power-of-two m < 32, in arithmetic; warps start at multiples of 32, so the
    // partner's block-linear index is thread ^ m too.
    const int64_t m = *ir::AsConstInt(shuffle->args[1]);
    Expr partner = thread_ + Expr(m) - Expr(2 * m) * ((thread_ / Expr(m)) % Expr(2));
    Expr received = ir::Load::Make(shuffle->type, exchange_, partner);
    Expr value = ir::ReplaceExpr(op->value, shuffle, received);
    return ir::Block::Make({ir::Store::Make(exchange_, shuffle->args[0], thread_),
                            ir::Barrier::Make(ir::MemoryScope::kShared), ir::Store::Make(op->buffer, value, op->index),
                            ir::Barrier::Make(ir::MemoryScope::kShared)});
  }

 private:
  ir::Var exchange_;
  Expr thread_;
};

class Emulator {
 public:
  Emulator(const GpuIndexVars& vars, const GpuLaunch& launch) : vars_(vars), launch_(launch) {}

  Stmt Run(const Stmt& kernel) {
    ir::Var exchange = ir::MakeVar("shuffle_exchange", ir::Type::Handle());
    ShuffleToExchange shuffles(exchange, LinearThread());
    Stmt body = shuffles.Mutate(kernel);
    if (shuffles.found) {
      body = ir::Allocate::Make(exchange, ir::Type::Float(32), launch_.threads_per_block(), body,
                                ir::MemoryScope::kShared);
    }
    body = Split(body);
    for (int d = 0; d < 3; ++d) {
      body = ir::For::Make(vars_.block[size_t(d)], Expr(0), Expr(launch_.grid[size_t(d)]), ir::ForKind::kSerial, body);
    }
    return body;
  }

 private:
  // s for every thread of the block, in order.
  Stmt ForAllThreads(const Stmt& s) const {
    Stmt body = s;
    for (int d = 0; d < 3; ++d) {
      body =
          ir::For::Make(vars_.thread[size_t(d)], Expr(0), Expr(launch_.block[size_t(d)]), ir::ForKind::kSerial, body);
    }
    return body;
  }

  Expr LinearThread() const {
    return (ir::AsExpr(vars_.thread[2]) * Expr(launch_.block[1]) + ir::AsExpr(vars_.thread[1])) *
               Expr(launch_.block[0]) +
           ir::AsExpr(vars_.thread[0]);
  }

  // The block's program with its barriers turned into phase boundaries.
  Stmt Split(const Stmt& s) {
    if (!s.defined()) return s;
    if (!ContainsBarrier(s)) return ForAllThreads(s);
    if (s.as<ir::Barrier>()) return Stmt();
    if (const auto* b = s.as<ir::Block>()) {
      std::vector<Stmt> out, run;
      auto flush = [&] {
        if (!run.empty()) out.push_back(ForAllThreads(ir::Block::Make(run)));
        run.clear();
      };
      for (const Stmt& st : b->stmts) {
        if (ContainsBarrier(st)) {
          flush();
          out.push_back(Split(st));
        } else {
          run.push_back(st);
        }
      }
      flush();
      return ir::Block::Make(out);
    }
    if (const auto* f = s.as<ir::For>()) {
      return ir::For::Make(f->var, f->min, f->extent, ir::ForKind::kSerial, Split(f->body));
    }
    if (const auto* i = s.as<ir::IfThenElse>()) {
      return ir::IfThenElse::Make(i->condition, Split(i->then_case), Split(i->else_case), i->likely);
    }
    if (const auto* l = s.as<ir::LetStmt>()) {
      if (!UsesThread(l->value)) return ir::LetStmt::Make(l->var, l->value, Split(l->body));
      // A per-thread value used across phases: recompute it where it is used (values are pure).
      return Split(ir::Substitute(l->body, ir::VarMap{{l->var.get(), l->value}}));
    }
    if (const auto* a = s.as<ir::Allocate>()) {
      if (a->scope != ir::MemoryScope::kLocal) {
        return ir::Allocate::Make(a->buffer, a->element_type, a->size, Split(a->body), ir::MemoryScope::kGlobal);
      }
      Stmt body = PerThreadCopy(a->buffer.get(), LinearThread() * Expr(a->size)).Mutate(a->body);
      return ir::Allocate::Make(a->buffer, a->element_type, a->size * launch_.threads_per_block(), Split(body),
                                ir::MemoryScope::kGlobal);
    }
    TUNEFARM_CHECK_MSG(false, "a barrier inside a statement the GPU emulation cannot split");
    return s;
  }

  bool UsesThread(const Expr& e) const {
    return ir::UsesVar(e, [&](const ir::VarNode* v) {
      return v == vars_.thread[0].get() || v == vars_.thread[1].get() || v == vars_.thread[2].get();
    });
  }

  const GpuIndexVars& vars_;
  const GpuLaunch& launch_;
};

// Every remaining allocation is ordinary host memory.
class HostScopes : public ir::IRMutator {
 public:
  using ir::IRMutator::Mutate;

 protected:
  Stmt Visit_(const ir::Allocate* op, const Stmt& self) override {
    Stmt s = ir::IRMutator::Visit_(op, self);
    const auto* a = s.as<ir::Allocate>();
    if (a->scope == ir::MemoryScope::kGlobal) return s;
    return ir::Allocate::Make(a->buffer, a->element_type, a->size, a->body, ir::MemoryScope::kGlobal);
  }
};

}  // namespace

Stmt EmulateGpuOnHost(const Stmt& kernel, const GpuIndexVars& vars, const GpuLaunch& launch) {
  return HostScopes().Mutate(Emulator(vars, launch).Run(kernel));
}

}  // namespace tunefarm::passes
