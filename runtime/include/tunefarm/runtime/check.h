// TUNEFARM_CHECK: internal invariants. A failed check is a bug in tunefarm, never bad user input
// (user input gets a Status). It prints file, line and the condition, then aborts.
#ifndef TUNEFARM_RUNTIME_CHECK_H_
#define TUNEFARM_RUNTIME_CHECK_H_

namespace tunefarm::internal {
[[noreturn]] void CheckFailed(const char* file, int line, const char* condition, const char* message);
}  // namespace tunefarm::internal

#define TUNEFARM_CHECK(cond)                                                       \
  do {                                                                             \
    if (!(cond)) ::tunefarm::internal::CheckFailed(__FILE__, __LINE__, #cond, ""); \
  } while (0)

#define TUNEFARM_CHECK_MSG(cond, msg)                                                 \
  do {                                                                                \
    if (!(cond)) ::tunefarm::internal::CheckFailed(__FILE__, __LINE__, #cond, (msg)); \
  } while (0)

#endif  // TUNEFARM_RUNTIME_CHECK_H_
