// How much memory this process may use: the least of the machine's physical memory, its container's
// memory limit (cgroup memory.max) and the process's address-space and data-segment limits
// (ulimit -v, -d). What the importer compares a
// model's weights with before allocating them, so that a model naming a terabyte of external data
// is refused with the figures instead of ending the process in std::bad_alloc or the OOM killer.
#ifndef TUNEFARM_RUNTIME_MEMORY_BUDGET_H_
#define TUNEFARM_RUNTIME_MEMORY_BUDGET_H_

#include <cstdint>

namespace tunefarm {

uint64_t MemoryBudgetBytes();

}  // namespace tunefarm

#endif  // TUNEFARM_RUNTIME_MEMORY_BUDGET_H_
