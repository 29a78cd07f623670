// The GPU communication intrinsics of the kernel IR: Call nodes that, unlike the math calls, read
// other threads' values. One place names them; schedule_ops produces the all-reduce, the
// lower_thread_allreduce pass turns it into shuffles, the NVPTX codegen emits the shuffles, and
// the host emulation turns a shuffle into an exchange through memory.
//
//   ThreadAllReduce(kind, value, dim)  every thread along threadIdx.<dim> gets the sum (or max)
//                                      of `value` over those threads; all of them must reach it
//   ShuffleXor(value, lane_mask)       the value of lane (lane ^ lane_mask) of the same warp
#ifndef TUNEFARM_COMPILER_IR_GPU_INTRINSICS_H_
#define TUNEFARM_COMPILER_IR_GPU_INTRINSICS_H_

#include <string>

#include "compiler/ir/ir.h"

namespace tunefarm::ir {

inline constexpr const char* kThreadAllReduceSum = "gpu.thread_allreduce_sum";
inline constexpr const char* kThreadAllReduceMax = "gpu.thread_allreduce_max";
inline constexpr const char* kShuffleXor = "gpu.shfl_xor";

inline Expr ThreadAllReduce(bool is_max, const Expr& value, int dim) {
  return Call::Make(value.type(), is_max ? kThreadAllReduceMax : kThreadAllReduceSum, {value, Expr(int64_t(dim))});
}
inline Expr ShuffleXor(const Expr& value, int64_t lane_mask) {
  return Call::Make(value.type(), kShuffleXor, {value, Expr(lane_mask)});
}

inline bool IsThreadAllReduce(const Call* c) {
  return c && (c->name == kThreadAllReduceSum || c->name == kThreadAllReduceMax);
}
inline const Call* AsThreadAllReduce(const Expr& e) {
  const auto* c = e.as<Call>();
  return IsThreadAllReduce(c) ? c : nullptr;
}
inline bool IsShuffle(const Call* c) { return c && c->name == kShuffleXor; }
inline bool IsShuffle(const Expr& e) { return IsShuffle(e.as<Call>()); }

}  // namespace tunefarm::ir

#endif  // TUNEFARM_COMPILER_IR_GPU_INTRINSICS_H_
