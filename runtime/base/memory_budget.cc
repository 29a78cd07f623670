#include "tunefarm/runtime/memory_budget.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>

namespace tunefarm {

uint64_t MemoryBudgetBytes() {
  const int64_t pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  uint64_t budget = pages > 0 && page > 0 ? uint64_t(pages) * uint64_t(page) : UINT64_MAX;
  for (int resource : {RLIMIT_AS, RLIMIT_DATA}) {
    struct rlimit lim;
    if (getrlimit(resource, &lim) == 0 && lim.rlim_cur != RLIM_INFINITY)
      budget = std::min<uint64_t>(budget, lim.rlim_cur);
  }
  return budget;
}

}  // namespace tunefarm
