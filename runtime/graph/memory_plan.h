// PlanArena: where an artifact's intermediate tensors live, for the CPU and the GPU executor alike.
//
// Every intermediate tensor that is not a view gets an offset in one arena; a view shares its
// base's storage (and keeps it alive while the view is used). A tensor lives from the first to the
// last kernel that touches it (a graph output that views it: to the end). Tensors whose lifetimes
// do not overlap share bytes: placed greedily by size, each at the lowest offset clear of the live
// tensors already placed (TFLite's planner). Sizes are rounded up to `alignment`.
#ifndef TUNEFARM_RUNTIME_GRAPH_MEMORY_PLAN_H_
#define TUNEFARM_RUNTIME_GRAPH_MEMORY_PLAN_H_

#include <cstddef>
#include <vector>

#include "tunefarm/runtime/artifact.h"

namespace tunefarm::runtime {

struct ArenaPlan {
  std::vector<size_t> offset;  // per tensor: meaningful for intermediates that are not views
  size_t size = 0;             // bytes of the arena
};

ArenaPlan PlanArena(const Artifact& artifact, size_t alignment);

}  // namespace tunefarm::runtime

#endif  // TUNEFARM_RUNTIME_GRAPH_MEMORY_PLAN_H_
