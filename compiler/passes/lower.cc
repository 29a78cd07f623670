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

// What a step reads besides the statement: fixed for one Lower call.
struct StepInputs {
  const te::Schedule& schedule;
  const std::vector<BufferBinding>& bindings;
  const compiler::Target& target;
  const LowerOptions& options;
  LoweredFunc* func;
};

struct Step {
  const char* name;
  std::function<Result<ir::Stmt>(const StepInputs& in, const ir::Stmt& s)> run;
};

const std::vector<Step>& CpuSteps() {
  static const std::vector<Step> kSteps = {
      // The loop nest the schedule describes, with tensors still multi-dimensional.
      {"schedule_ops", [](const StepInputs& in, const ir::Stmt&) { return ScheduleOps(in.schedule); }},
      // Cancel the offsets that compute_at regions and split recombination introduce, so
      // storage_flatten's indices come out short and guards that always hold disappear.
      {"simplify", [](const StepInputs&, const ir::Stmt& s) { return Simplify(s); }},
      // Tensors -> flat buffers: arguments by row-major index, realizes -> allocations.
      {"storage_flatten", [](const StepInputs& in, const ir::Stmt& s) { return StorageFlatten(s, in.bindings); }},
      {"simplify_flat", [](const StepInputs&, const ir::Stmt& s) { return Simplify(s); }},
      // Peel tails of non-divisible splits while loops are still loops (before unrolling copies
      // the guards and before vectorization, which refuses lane-dependent branches).
      {"partition_loops", [](const StepInputs&, const ir::Stmt& s) { return PartitionLoops(s); }},
      // Unroll before vectorizing: register tiles become constant-indexed vector accesses.
      {"unroll_loops", [](const StepInputs&, const ir::Stmt& s) { return UnrollLoops(s); }},
      {"simplify_unrolled", [](const StepInputs&, const ir::Stmt& s) { return Simplify(s); }},
      {"vectorize_loops", [](const StepInputs&, const ir::Stmt& s) { return VectorizeLoops(s); }},
      // Broadcast+ramp -> ramp, so dense vector accesses are recognizable in codegen.
      {"simplify_vectors", [](const StepInputs&, const ir::Stmt& s) { return Simplify(s); }},
      // exp, log and tanh as arithmetic on whole vectors (LLVM would scalarize llvm.exp into one
      // libm call per lane): the same formulas as the GPU's, after vectorization so they are
      // built at the vector's width.
      {"lower_math", [](const StepInputs&, const ir::Stmt& s) { return LowerGpuMath(s); }},
      {"remove_no_ops", [](const StepInputs&, const ir::Stmt& s) { return RemoveNoOps(s); }},
  };
  return kSteps;
}

const std::vector<Step>& GpuSteps() {
  static const std::vector<Step> kSteps = {
      // Shared-memory fetches come out of schedule_ops relaxed over the block's threads and
      // fenced by barriers; guards sit around stores, never around a barrier.
      {"schedule_ops", [](const StepInputs& in, const ir::Stmt&) { return ScheduleOps(in.schedule); }},
      {"simplify", [](const StepInputs&, const ir::Stmt& s) { return Simplify(s); }},
      {"storage_flatten", [](const StepInputs& in, const ir::Stmt& s) { return StorageFlatten(s, in.bindings); }},
      {"simplify_flat", [](const StepInputs&, const ir::Stmt& s) { return Simplify(s); }},
      // One thread's program: block and thread loops become blockIdx/threadIdx (the launch).
      {"bind_gpu_threads",
       [](const StepInputs& in, const ir::Stmt& s) {
         in.func->form = KernelForm::kThreadProgram;
         return BindGpuThreads(s, in.func->gpu_vars, &in.func->launch);
       }},
      // Cross-thread reductions -> warp shuffles (+ one shared exchange across warps): needs the block shape.
      {"lower_thread_allreduce",
       [](const StepInputs& in, const ir::Stmt& s) {
         return LowerThreadAllReduce(s, in.func->gpu_vars, in.func->launch);
       }},
      {"auto_unroll",
       [](const StepInputs& in, const ir::Stmt& s) { return AutoUnroll(s, in.options.auto_unroll_max_step); }},
      {"unroll_loops", [](const StepInputs&, const ir::Stmt& s) { return UnrollLoops(s); }},
      {"simplify_unrolled", [](const StepInputs&, const ir::Stmt& s) { return Simplify(s); }},
      {"remove_no_ops", [](const StepInputs&, const ir::Stmt& s) { return RemoveNoOps(s); }},
      // exp, log and tanh as arithmetic (no libdevice), after the simplifications so their
      // formulas are taken as written; the host emulation then runs the same formulas.
      {"lower_gpu_math", [](const StepInputs&, const ir::Stmt& s) { return LowerGpuMath(s); }},
      // Last, on what codegen will see: threads, grid, shared and local memory within the limits.
      {"verify_gpu_launch",
       [](const StepInputs& in, const ir::Stmt& s) -> Result<ir::Stmt> {
         TUNEFARM_RETURN_IF_ERROR(VerifyGpuLaunch(s, in.target, &in.func->launch));
         return s;
       }},
  };
  return kSteps;
}

const std::vector<Step>& GpuOnHostSteps() {
  static const std::vector<Step> kSteps = [] {
    std::vector<Step> steps = GpuSteps();
    // The verified thread program as a host loop nest over blocks and threads with the same
    // results (emulate_gpu_on_host.h): GPU kernels tested on machines without a GPU.
    steps.push_back({"emulate_gpu_on_host", [](const StepInputs& in, const ir::Stmt& s) -> Result<ir::Stmt> {
                       in.func->form = KernelForm::kLoopNest;
                       return Simplify(EmulateGpuOnHost(s, in.func->gpu_vars, in.func->launch));
                     }});
    return steps;
  }();
  return kSteps;
}

const std::vector<Step>& StepsOf(StepList list) {
  switch (list) {
    case StepList::kCpu:
      return CpuSteps();
    case StepList::kGpu:
      return GpuSteps();
    case StepList::kGpuOnHost:
      return GpuOnHostSteps();
  }
  return CpuSteps();
}

}  // namespace

std::vector<std::string> LoweringPassNames(StepList steps) {
  std::vector<std::string> names;
  for (const Step& step : StepsOf(steps)) names.push_back(step.name);
  return names;
}

Result<LoweredFunc> Lower(const te::Schedule& schedule, const std::vector<ir::Tensor>& args, const std::string& name,
                          const compiler::Target& target, StepList steps, const LowerOptions& options) {
  LoweredFunc func;
  func.name = name;
  func.args = args;
  std::vector<BufferBinding> bindings;
  for (const auto& t : args) {
    func.buffers.push_back(ir::MakeVar(t->name, ir::Type::Handle()));
    bindings.push_back({t, func.buffers.back()});
  }
  if (steps != StepList::kCpu) func.gpu_vars = GpuIndexVars::Make();
  const StepInputs inputs{schedule, bindings, target, options, &func};
  ir::Stmt stmt;
  for (const Step& step : StepsOf(steps)) {
    auto start = std::chrono::steady_clock::now();
    Result<ir::Stmt> next = step.run(inputs, stmt);
    if (!next.ok()) return Status(next.status().code(), name + ": " + next.status().message());
    stmt = *next;
    if (options.timings) {
      double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
      options.timings->push_back({step.name, ms});
    }
    if (options.dump && (options.dump_after == "all" || options.dump_after == step.name)) {
      *options.dump << "// ---- " << name << " after " << step.name << "\n" << stmt;
    }
    if (options.stop_after == step.name) break;
  }
  func.body = stmt;
  return func;
}

}  // namespace tunefarm::passes
