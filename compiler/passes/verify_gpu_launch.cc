#include "compiler/passes/verify_gpu_launch.h"

#include <set>

#include "compiler/ir/ir_visitor.h"

namespace tunefarm::passes {
namespace {

class MemoryCounter : public ir::IRVisitor {
 public:
  int64_t shared_bytes = 0, local_bytes = 0;
  using ir::IRVisitor::Visit;

 protected:
  void Visit_(const ir::Allocate* op) override {
    // Unrolled copies of one allocation are one buffer (codegen gives them one array).
    if (seen_.insert(op->buffer.get()).second) {
      int64_t bytes = op->size * op->element_type.bytes();
      // Disjoint lifetimes could share space; counting every buffer is the safe upper bound.
      if (op->scope == ir::MemoryScope::kShared) shared_bytes += bytes;
      if (op->scope == ir::MemoryScope::kLocal) local_bytes += bytes;
    }
    ir::IRVisitor::Visit_(op);
  }

 private:
  std::set<const ir::VarNode*> seen_;
};

std::string N(int64_t v) { return std::to_string(v); }

}  // namespace

Status VerifyGpuLaunch(const ir::Stmt& s, const compiler::Target& target, GpuLaunch* launch) {
  MemoryCounter count;
  count.Visit(s);
  launch->shared_bytes = count.shared_bytes;
  launch->local_bytes = count.local_bytes;
  const compiler::GpuLimits& lim = target.gpu;
  const std::string where = " (" + launch->ToString() + ", target " + target.ToString() + ")";
  const int64_t max_block[3] = {1024, 1024, 64};
  const int64_t max_grid[3] = {(int64_t(1) << 31) - 1, 65535, 65535};
  const char* axis[3] = {"x", "y", "z"};
  for (int d = 0; d < 3; ++d) {
    if (launch->block[size_t(d)] > max_block[d]) {
      return Status::InvalidArgument("block dimension " + std::string(axis[d]) + " is " + N(launch->block[size_t(d)]) +
                                     " threads, more than the " + N(max_block[d]) + " a block may have" + where);
    }
    if (launch->grid[size_t(d)] > max_grid[d]) {
      return Status::InvalidArgument("grid dimension " + std::string(axis[d]) + " is " + N(launch->grid[size_t(d)]) +
                                     " blocks, more than the " + N(max_grid[d]) + " a grid may have" + where);
    }
  }
  if (launch->threads_per_block() > lim.max_threads_per_block) {
    return Status::InvalidArgument(N(launch->threads_per_block()) + " threads per block exceed the target's " +
                                   N(lim.max_threads_per_block) + where);
  }
  if (launch->shared_bytes > lim.max_shared_memory_per_block) {
    return Status::InvalidArgument(N(launch->shared_bytes) + " bytes of shared memory per block exceed the target's " +
                                   N(lim.max_shared_memory_per_block) + where);
  }
  const int64_t local_words = (launch->local_bytes + 3) / 4;
  if (local_words > lim.max_registers_per_thread) {
    return Status::InvalidArgument(N(local_words) + " local words per thread cannot stay in the " +
                                   N(lim.max_registers_per_thread) + " registers a thread may have" + where);
  }
  if (local_words * launch->threads_per_block() > lim.max_registers_per_block) {
    return Status::InvalidArgument(N(local_words) + " local words x " + N(launch->threads_per_block()) +
                                   " threads exceed the block's register file of " + N(lim.max_registers_per_block) +
                                   where);
  }
  return Status::OK();
}

}  // namespace tunefarm::passes
