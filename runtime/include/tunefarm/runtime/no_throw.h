// NoThrow: the boundary where exceptions become Status. Import, compile, task extraction and the
// daemon's jobs run through it, so a model that needs more memory than the process may have
// (std::bad_alloc) or a library that throws ends that one command or job with an error naming
// `what`, never the process (and with it a daemon's other jobs).
#ifndef TUNEFARM_RUNTIME_NO_THROW_H_
#define TUNEFARM_RUNTIME_NO_THROW_H_

#include <exception>
#include <new>
#include <string>

#include "tunefarm/runtime/memory_budget.h"
#include "tunefarm/runtime/status.h"

namespace tunefarm {

// fn returns a Status or a Result<T>; so does NoThrow.
template <typename Fn>
auto NoThrow(const std::string& what, Fn&& fn) -> decltype(fn()) {
  try {
    return fn();
  } catch (const std::bad_alloc&) {
    return Status::ResourceExhausted(what + " ran out of memory (this process may use " +
                                     std::to_string(MemoryBudgetBytes() >> 20) + " MiB)");
  } catch (const std::exception& e) {
    return Status::Internal(what + " failed: " + e.what());
  }
}

}  // namespace tunefarm

#endif  // TUNEFARM_RUNTIME_NO_THROW_H_
