#include "compiler/passes/lower.h"

#include <chrono>
#include <functional>

#include "compiler/ir/ir_printer.h"
#include "compiler/passes/auto_unroll.h"
#include "compiler/passes/bind_gpu_threads.h"
#include "compiler/passes/emulate_gpu_on_host.h"
#include "compiler/passes/lower_gpu_math.h"
#include "compiler/passes/lower_thread_allreduce.h"
#include "compiler/passes/partition_loops.h"
#include "compiler/passes/remove_no_ops.h"
#include "compiler/passes/schedule_ops.h"
#include "compiler/passes/simplify.h"
#include "compiler/passes/storage_flatten.h"
#include "compiler/passes/unroll_loops.h"
#include "compiler/passes/vectorize_loops.h"
#include "compiler/passes/verify_gpu_launch.h"

namespace tunefarm::passes {

namespace {

struct Step {
  const char* name;
  std::function<Result<ir::Stmt>(const ir::Stmt&)> run;
};

std::vector<Step> CpuSteps(const te::Schedule& schedule, const std::vector<BufferBinding>& bindings) {
  return {
      // The loop nest the schedule describes, with tensors still multi-dimensional.
      {"schedule_ops", [&](const ir::Stmt&) { return ScheduleOps(schedule); }},
      // Cancel the offsets that compute_at regions and split recombination introduce, so
      // storage_flatten's indices come out short and guards that always hold disappear.
      {"simplify", [](const ir::Stmt& s) { return Simplify(s); }},
      // Tensors -> flat buffers: arguments by row-major index, realizes -> allocations.
      {"storage_flatten", [bindings](const ir::Stmt& s) { return StorageFlatten(s, bindings); }},
      {"simplify_flat", [](const ir::Stmt& s) { return Simplify(s); }},
      // Peel tails of non-divisible splits while loops are still loops (before unrolling copies
      // the guards and before vectorization, which refuses lane-dependent branches).
      {"partition_loops", [](const ir::Stmt& s) { return PartitionLoops(s); }},
      // Unroll before vectorizing: register tiles become constant-indexed vector accesses.
      {"unroll_loops", [](const ir::Stmt& s) { return UnrollLoops(s); }},
      {"simplify_unrolled", [](const ir::Stmt& s) { return Simplify(s); }},
      {"vectorize_loops", [](const ir::Stmt& s) { return VectorizeLoops(s); }},
      // Broadcast+ramp -> ramp, so dense vector accesses are recognizable in codegen.
      {"simplify_vectors", [](const ir::Stmt& s) { return Simplify(s); }},
      // exp, log and tanh as arithmetic on whole vectors (LLVM would scalarize llvm.exp into one
      // libm call per lane): the same formulas as the GPU's, after vectorization so they are
      // built at the vector's width.
      {"lower_math", [](const ir::Stmt& s) { return LowerGpuMath(s); }},
      {"remove_no_ops", [](const ir::Stmt& s) { return RemoveNoOps(s); }},
  };
}

std::vector<Step> GpuSteps(const te::Schedule& schedule, const std::vector<BufferBinding>& bindings,
                           const compiler::Target& target, const LowerOptions& options, LoweredFunc* func) {
  return {
      // Shared-memory fetches come out of schedule_ops relaxed over the block's threads and
      // fenced by barriers; guards sit around stores, never around a barrier.
      {"schedule_ops", [&](const ir::Stmt&) { return ScheduleOps(schedule); }},
      {"simplify", [](const ir::Stmt& s) { return Simplify(s); }},
      {"storage_flatten", [bindings](const ir::Stmt& s) { return StorageFlatten(s, bindings); }},
      {"simplify_flat", [](const ir::Stmt& s) { return Simplify(s); }},
      // One thread's program: block and thread loops become blockIdx/threadIdx (the launch).
      {"bind_gpu_threads", [func](const ir::Stmt& s) { return BindGpuThreads(s, func->gpu_vars, &func->launch); }},
      // Cross-thread reductions -> warp shuffles (+ one shared exchange across warps): needs the block shape.
      {"lower_thread_allreduce",
       [func](const ir::Stmt& s) { return LowerThreadAllReduce(s, func->gpu_vars, func->launch); }},
      {"auto_unroll", [&options](const ir::Stmt& s) { return AutoUnroll(s, options.auto_unroll_max_step); }},
      {"unroll_loops", [](const ir::Stmt& s) { return UnrollLoops(s); }},
      {"simplify_unrolled", [](const ir::Stmt& s) { return Simplify(s); }},
      {"remove_no_ops", [](const ir::Stmt& s) { return RemoveNoOps(s); }},
      // exp, log and tanh as arithmetic (no libdevice), after the simplifications so their
      // formulas are taken as written; the host emulation then runs the same formulas.
      {"lower_gpu_math", [](const ir::Stmt& s) { return LowerGpuMath(s); }},
      // Last, on what codegen will see: threads, grid, shared and local memory within the limits.
      {"verify_gpu_launch",
       [&target, func](const ir::Stmt& s) -> Result<ir::Stmt> {
         TUNEFARM_RETURN_IF_ERROR(VerifyGpuLaunch(s, target, &func->launch));
         return s;
       }},
  };
}

}  // namespace

const std::vector<std::string>& LoweringPassNames(compiler::TargetKind target_kind) {
  static const std::vector<std::string> kCpu = {
      "schedule_ops",      "simplify",        "storage_flatten",  "simplify_flat", "partition_loops", "unroll_loops",
      "simplify_unrolled", "vectorize_loops", "simplify_vectors", "lower_math",    "remove_no_ops"};
  static const std::vector<std::string> kGpu = {"schedule_ops",  "simplify",         "storage_flatten",
                                                "simplify_flat", "bind_gpu_threads", "lower_thread_allreduce",
                                                "auto_unroll",   "unroll_loops",     "simplify_unrolled",
                                                "remove_no_ops", "lower_gpu_math",   "verify_gpu_launch"};
  return target_kind == compiler::TargetKind::kCuda ? kGpu : kCpu;
}

Result<LoweredFunc> Lower(const te::Schedule& schedule, const std::vector<ir::Tensor>& args, const std::string& name,
                          const compiler::Target& target, const LowerOptions& options) {
  LoweredFunc func;
  func.name = name;
  func.args = args;
  std::vector<BufferBinding> bindings;
  for (const auto& t : args) {
    func.buffers.push_back(ir::MakeVar(t->name, ir::Type::Handle()));
    bindings.push_back({t, func.buffers.back()});
  }
  func.is_gpu = target.is_cuda();
  if (func.is_gpu) func.gpu_vars = GpuIndexVars::Make();
  const std::vector<Step> steps =
      func.is_gpu ? GpuSteps(schedule, bindings, target, options, &func) : CpuSteps(schedule, bindings);

  ir::Stmt stmt;
  bool stopped = false;
  for (const Step& step : steps) {
    auto start = std::chrono::steady_clock::now();
    Result<ir::Stmt> next = step.run(stmt);
    if (!next.ok()) return Status(next.status().code(), name + ": " + next.status().message());
    stmt = *next;
    if (options.timings) {
      double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
      options.timings->push_back({step.name, ms});
    }
    if (options.dump && (options.dump_after == "all" || options.dump_after == step.name)) {
      *options.dump << "// ---- " << name << " after " << step.name << "\n" << stmt;
    }
    if (options.stop_after == step.name) {
      stopped = true;
      break;
    }
  }
  if (func.is_gpu && target.emulated && !stopped) {
    stmt = Simplify(EmulateGpuOnHost(stmt, func.gpu_vars, func.launch));
    func.is_gpu = false;
  }
  func.body = stmt;
  return func;
}

}  // namespace tunefarm::passes
