#include "compiler/passes/lower.h"

#include <chrono>
#include <functional>

#include "compiler/ir/ir_printer.h"
#include "compiler/passes/partition_loops.h"
#include "compiler/passes/remove_no_ops.h"
#include "compiler/passes/simplify.h"
#include "compiler/passes/storage_flatten.h"
#include "compiler/passes/unroll_loops.h"
#include "compiler/passes/vectorize_loops.h"
#include "compiler/te/schedule_ops.h"

namespace tunefarm::passes {
namespace {

struct Step {
  const char* name;
  std::function<ir::Stmt(const ir::Stmt&)> run;
};

}  // namespace

const std::vector<std::string>& LoweringPassNames() {
  static const std::vector<std::string> kNames = {
      "schedule_ops", "simplify", "storage_flatten", "simplify_flat", "partition_loops",
      "unroll_loops", "simplify_unrolled", "vectorize_loops", "simplify_vectors", "remove_no_ops"};
  return kNames;
}

LoweredFunc Lower(const te::Schedule& schedule, const std::vector<ir::Tensor>& args, const std::string& name,
                  const compiler::Target& target, const LowerOptions& options) {
  (void)target;  // every kind built so far is a CPU kind; the CUDA backend branches here
  LoweredFunc func;
  func.name = name;
  func.args = args;
  std::vector<BufferBinding> bindings;
  for (const auto& t : args) {
    func.buffers.push_back(ir::MakeVar(t->name, ir::Type::Handle()));
    bindings.push_back({t, func.buffers.back()});
  }

  const std::vector<Step> steps = {
      // The loop nest the schedule describes, with tensors still multi-dimensional.
      {"schedule_ops", [&](const ir::Stmt&) { return te::ScheduleOps(schedule); }},
      // Cancel the offsets that compute_at regions and split recombination introduce, so
      // storage_flatten's indices come out short and guards that always hold disappear.
      {"simplify", [](const ir::Stmt& s) { return Simplify(s); }},
      // Tensors -> flat buffers: arguments by row-major index, realizes -> allocations.
      {"storage_flatten", [&](const ir::Stmt& s) { return StorageFlatten(s, bindings); }},
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
      {"remove_no_ops", [](const ir::Stmt& s) { return RemoveNoOps(s); }},
  };

  ir::Stmt stmt;
  for (const Step& step : steps) {
    auto start = std::chrono::steady_clock::now();
    stmt = step.run(stmt);
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
