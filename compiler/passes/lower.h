// Lower: the ordered list of passes from a Schedule to the flat loop nest that codegen consumes.
// lower.cc lists the passes and says why each runs where it does; it can dump the IR after any
// pass and time every pass.
#ifndef TUNEFARM_COMPILER_PASSES_LOWER_H_
#define TUNEFARM_COMPILER_PASSES_LOWER_H_

#include <ostream>
#include <string>
#include <vector>

#include "compiler/ir/ir.h"
#include "compiler/passes/gpu_launch.h"
#include "compiler/te/schedule.h"
#include "tunefarm/compiler/target.h"
#include "tunefarm/runtime/result.h"

namespace tunefarm::passes {

// A kernel ready for code generation: body over the handle variables of its arguments.
struct LoweredFunc {
  std::string name;
  std::vector<ir::Tensor> args;  // the C ABI's argument order
  std::vector<ir::Var> buffers;  // one handle variable per argument
  ir::Stmt body;
  // GPU kernels: body is one thread's program over gpu_vars, launched as `launch` says. False
  // for an emulated target (the body is then a host loop nest).
  bool is_gpu = false;
  GpuLaunch launch;
  GpuIndexVars gpu_vars;
};

struct PassTiming {
  std::string pass;
  double milliseconds;
};

struct LowerOptions {
  // Prints the IR after the pass with this name ("all": after every pass; empty: never) to dump.
  std::string dump_after;
  std::ostream* dump = nullptr;
  // When set, receives one entry per pass in order.
  std::vector<PassTiming>* timings = nullptr;
  // Stops after the pass with this name (empty: run them all); the tuner's loop-nest features
  // read the nest before unrolling.
  std::string stop_after;
  // GPU kinds: TVM's auto_unroll_max_step (auto_unroll.h), usually a config knob.
  int64_t auto_unroll_max_step = 0;
  // GPU kinds: after verification, turn the kernel into a host loop nest with the same results
  // (emulate_gpu_on_host.h) when the target is emulated (Target::emulated).
};

// The pass names for a target kind ("llvm", "cuda"), in order, as dump_after accepts them.
const std::vector<std::string>& LoweringPassNames(compiler::TargetKind target_kind = compiler::TargetKind::kLlvm);

// CPU kinds ("llvm") run the CPU list in lower.cc; "cuda" binds block and thread loops, unrolls
// and verifies the launch against the target's limits. Errors: a GPU schedule the target cannot
// launch (InvalidArgument naming the limit), never a CPU one.
Result<LoweredFunc> Lower(const te::Schedule& schedule, const std::vector<ir::Tensor>& args, const std::string& name,
                          const compiler::Target& target, const LowerOptions& options = {});

}  // namespace tunefarm::passes

#endif  // TUNEFARM_COMPILER_PASSES_LOWER_H_
