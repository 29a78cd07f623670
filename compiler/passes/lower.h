// Lower: the ordered list of passes from a Schedule to the flat loop nest that codegen consumes.
// lower.cc lists the passes and says why each runs where it does; it can dump the IR after any
// pass and time every pass.
#ifndef TUNEFARM_COMPILER_PASSES_LOWER_H_
#define TUNEFARM_COMPILER_PASSES_LOWER_H_

#include <ostream>
#include <string>
#include <vector>

#include "compiler/ir/ir.h"
#include "compiler/te/schedule.h"
#include "tunefarm/compiler/target.h"

namespace tunefarm::passes {

// A kernel ready for code generation: body over the handle variables of its arguments.
struct LoweredFunc {
  std::string name;
  std::vector<ir::Tensor> args;  // the C ABI's argument order
  std::vector<ir::Var> buffers;  // one handle variable per argument
  ir::Stmt body;
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
};

// The pass names, in order, as dump_after accepts them.
const std::vector<std::string>& LoweringPassNames();

// The pass list depends on the target's kind: CPU kinds ("llvm") run the list in lower.cc; a GPU
// kind will add its own passes (barrier insertion, host/device split, launch verification) to it.
LoweredFunc Lower(const te::Schedule& schedule, const std::vector<ir::Tensor>& args, const std::string& name,
                  const compiler::Target& target, const LowerOptions& options = {});

}  // namespace tunefarm::passes

#endif  // TUNEFARM_COMPILER_PASSES_LOWER_H_
