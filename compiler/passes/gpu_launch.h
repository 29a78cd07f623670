// What a lowered GPU kernel needs at launch, and the index variables its body is written in.
//
// After BindGpuThreads a GPU kernel's body is one thread's program (SPMD): it reads the block and
// thread indices through the variables of GpuIndexVars, and GpuLaunch says how many blocks and
// threads run it and how much shared and local memory each needs.
#ifndef TUNEFARM_COMPILER_PASSES_GPU_LAUNCH_H_
#define TUNEFARM_COMPILER_PASSES_GPU_LAUNCH_H_

#include <array>
#include <cstdint>
#include <string>

#include "compiler/ir/ir.h"

namespace tunefarm::passes {

struct GpuLaunch {
  std::array<int64_t, 3> grid = {1, 1, 1};   // blocks in x, y, z
  std::array<int64_t, 3> block = {1, 1, 1};  // threads per block in x, y, z
  int64_t shared_bytes = 0;                  // static shared memory per block
  int64_t local_bytes = 0;                   // local (register/local-memory) arrays per thread
  int64_t threads_per_block() const { return block[0] * block[1] * block[2]; }
  std::string ToString() const;  // "grid(8,7,1) block(32,4,1) shared 4608 B local 64 B"
};

// blockIdx.{x,y,z} and threadIdx.{x,y,z}: int64 variables, one set per kernel.
struct GpuIndexVars {
  std::array<ir::Var, 3> block;
  std::array<ir::Var, 3> thread;
  static GpuIndexVars Make();
};

}  // namespace tunefarm::passes

#endif  // TUNEFARM_COMPILER_PASSES_GPU_LAUNCH_H_
