// StorageFlatten: maps multi-dimensional tensor accesses to flat buffer accesses.
//
// Arguments (placeholders and outputs) become the given buffer variables, row-major over their
// full shape. Every ProducerRealize becomes an Allocate of the realized region (row-major over the
// region's extents), and accesses inside it are offset by the region's mins.
// Precondition: every accessed tensor is an argument or realized around the access.
#ifndef TUNEFARM_COMPILER_PASSES_STORAGE_FLATTEN_H_
#define TUNEFARM_COMPILER_PASSES_STORAGE_FLATTEN_H_

#include <vector>

#include "compiler/ir/ir.h"

namespace tunefarm::passes {

struct BufferBinding {
  ir::Tensor tensor;
  ir::Var buffer;  // handle-typed
};

ir::Stmt StorageFlatten(const ir::Stmt& s, const std::vector<BufferBinding>& args);

}  // namespace tunefarm::passes

#endif  // TUNEFARM_COMPILER_PASSES_STORAGE_FLATTEN_H_
