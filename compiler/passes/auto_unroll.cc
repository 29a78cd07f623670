#include "compiler/passes/auto_unroll.h"

#include <algorithm>

#include "compiler/ir/ir_mutator.h"
#include "compiler/passes/bind_gpu_threads.h"

namespace tunefarm::passes {
namespace {

class AutoUnroller : public ir::IRMutator {
 public:
  explicit AutoUnroller(int64_t max_step) : max_step_(max_step) {}
  using ir::IRMutator::Mutate;

 protected:
  ir::Stmt Visit_(const ir::For* op, const ir::Stmt& self) override {
    int64_t outer_steps = steps_;
    steps_ = 1;
    ir::Stmt body = Mutate(op->body);
    const int64_t* extent = ir::AsConstInt(op->extent);
    int64_t inner = steps_;
    int64_t mine = extent ? *extent * inner : max_step_ + 1;
    steps_ = std::max(outer_steps, mine);
    // A loop around a barrier stays a loop: unrolling it would copy the whole fetch-and-compute
    // round (code size, compile time) for nothing the registers gain.
    bool unroll = op->kind == ir::ForKind::kSerial && extent && mine <= max_step_ && !ContainsBarrier(body);
    if (!unroll && body.same_as(op->body)) return self;
    return ir::For::Make(op->var, op->min, op->extent, unroll ? ir::ForKind::kUnrolled : op->kind, body);
  }

 private:
  int64_t max_step_;
  int64_t steps_ = 1;  // the largest iteration count of the loops seen at this level
};

}  // namespace

ir::Stmt AutoUnroll(const ir::Stmt& s, int64_t max_step) {
  if (max_step <= 0) return s;
  return AutoUnroller(max_step).Mutate(s);
}

}  // namespace tunefarm::passes
