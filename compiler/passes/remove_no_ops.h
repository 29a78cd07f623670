// RemoveNoOps: drops statements with no effect (Evaluate of constants, loops and branches whose
// bodies do nothing, allocations nobody uses), so codegen and dumps see only real work.
#ifndef TUNEFARM_COMPILER_PASSES_REMOVE_NO_OPS_H_
#define TUNEFARM_COMPILER_PASSES_REMOVE_NO_OPS_H_

#include "compiler/ir/ir.h"

namespace tunefarm::passes {

ir::Stmt RemoveNoOps(const ir::Stmt& s);

}  // namespace tunefarm::passes

#endif  // TUNEFARM_COMPILER_PASSES_REMOVE_NO_OPS_H_
