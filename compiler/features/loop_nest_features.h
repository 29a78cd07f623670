// Loop-nest features: a fixed-length description of a lowered kernel's loop nest for the tuner's
// cost model -- what AutoTVM calls itervar features and Ansor per-store features, reduced to what
// decides speed on a CPU: how many iterations the main store runs, how its loops are annotated
// (vectorized, unrolled, parallel), and for each buffer it touches the stride of the innermost
// loop and the bytes touched and their reuse within the innermost 1, 2, 3, 4, 6 and 8 loops (a
// cache-footprint profile). GPU kernels add threads per block, blocks, shared and local memory,
// an occupancy estimate and store coalescing (zero for CPU kernels).
//
// Contract: the vector has LoopNestFeatureCount() entries whatever the kernel, so features of
// different workloads of one template (transfer learning) line up; the layout is versioned by
// kLoopNestFeatureVersion (tunefarm/compiler/kernel.h) and listed in docs/tuner.md. A pure
// function of the IR.
#ifndef TUNEFARM_COMPILER_FEATURES_LOOP_NEST_FEATURES_H_
#define TUNEFARM_COMPILER_FEATURES_LOOP_NEST_FEATURES_H_

#include <vector>

#include "compiler/ir/ir.h"

namespace tunefarm::features {

// Features of a loop nest after storage flattening (and, on CPUs, loop partitioning), before
// unrolling, vectorization and GPU thread binding (the annotations are still loop kinds; unrolling
// would multiply the IR's size).
std::vector<float> ExtractLoopNestFeatures(const ir::Stmt& body);
int LoopNestFeatureCount();

}  // namespace tunefarm::features

#endif  // TUNEFARM_COMPILER_FEATURES_LOOP_NEST_FEATURES_H_
