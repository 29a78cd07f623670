#include "tunefarm/runtime/memory_budget.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>

namespace tunefarm {

uint64_t MemoryBudgetBytes() {
  const int64_t pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  uint64_t budget = pages > 0 && page > 0 ? uint64_t(pages) * uint64_t(page) : UINT64_MAX;
  // A container's memory limit (cgroup v2 at the root of the process's own namespace, v1's
  // memory controller otherwise): past it the OOM killer ends the process, so it counts too.
  for (const char* limit_file : {"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"}) {
    std::ifstream in(limit_file);
    uint64_t bytes = 0;
    if (in >> bytes && bytes > 0) budget = std::min(budget, bytes);  // "max" reads as no number
  }
  for (int resource : {RLIMIT_AS, RLIMIT_DATA}) {
    struct rlimit lim;
    if (getrlimit(resource, &lim) == 0 && lim.rlim_cur != RLIM_INFINITY)
      budget = std::min<uint64_t>(budget, lim.rlim_cur);
  }
  return budget;
}

}  // namespace tunefarm
