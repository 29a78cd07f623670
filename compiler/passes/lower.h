// Lower: the ordered list of passes from a Schedule to the flat loop nest that codegen consumes.
// lower.cc lists the passes of each list (StepList) and says why each runs where it does; it can
// dump the IR after any pass, time every pass and stop after one. Which list a target runs is its
// backend's decision (Backend::lowering_steps), never a question of its kind asked here.
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

// The step lists (lower.cc):
//  - kCpu: a vectorized loop nest for the host's cores;
//  - kGpu: one GPU thread's program, block and thread loops bound to the launch, which is verified
//    against the target's limits;
//  - kGpuOnHost: kGpu, then `emulate_gpu_on_host`, a last step turning the thread program back
//    into a host loop nest with the same results (CUDA emulated on the host, for tests).
enum class StepList { kCpu, kGpu, kGpuOnHost };

// What a lowered body is.
enum class KernelForm {
  kLoopNest,       // a host loop nest over the arguments (a C-ABI function)
  kThreadProgram,  // one GPU thread's program over gpu_vars, launched as `launch` says
};

// A kernel ready for code generation: body over the handle variables of its arguments.
struct LoweredFunc {
  std::string name;
  std::vector<ir::Tensor> args;  // the C ABI's argument order
  std::vector<ir::Var> buffers;  // one handle variable per argument
  ir::Stmt body;
  KernelForm form = KernelForm::kLoopNest;
  GpuLaunch launch;  // kThreadProgram
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
  // GPU lists: TVM's auto_unroll_max_step (auto_unroll.h), usually a config knob.
  int64_t auto_unroll_max_step = 0;
};

// A list's pass names, in order, as dump_after and stop_after accept them (read off the list
// itself, so they cannot drift from it).
std::vector<std::string> LoweringPassNames(StepList steps);

// Runs `steps` on the schedule. Errors: a GPU schedule the target cannot launch (InvalidArgument
// naming the limit), never a CPU one. A stop_after naming no step of the list runs them all.
Result<LoweredFunc> Lower(const te::Schedule& schedule, const std::vector<ir::Tensor>& args, const std::string& name,
                          const compiler::Target& target, StepList steps, const LowerOptions& options = {});

}  // namespace tunefarm::passes

#endif  // TUNEFARM_COMPILER_PASSES_LOWER_H_
