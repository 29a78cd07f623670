// Result<T>: a value or the Status explaining why there is none (absl::StatusOr without absl).
//
// Contract: constructed from a T (ok) or from a non-OK Status; constructing from an OK Status is a
// programming error and is turned into an Internal error rather than an empty value. value() on an
// error aborts with the status message (an internal invariant, never user input).
#ifndef TUNEFARM_RUNTIME_RESULT_H_
#define TUNEFARM_RUNTIME_RESULT_H_

#include <cstdio>
#include <cstdlib>
#include <optional>
#include <utility>

#include "tunefarm/runtime/status.h"

namespace tunefarm {

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)) {}         // NOLINT(google-explicit-constructor)
  Result(Status status) : status_(std::move(status)) {  // NOLINT(google-explicit-constructor)
    if (status_.ok()) status_ = Status::Internal("Result constructed from an OK status");
  }

  bool ok() const { return status_.ok(); }
  const Status& status() const { return status_; }

  T& value() & {
    CheckOk();
    return *value_;
  }
  const T& value() const& {
    CheckOk();
    return *value_;
  }
  T&& value() && {
    CheckOk();
    return std::move(*value_);
  }
  T* operator->() {
    CheckOk();
    return &*value_;
  }
  const T* operator->() const {
    CheckOk();
    return &*value_;
  }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  // The value, or `fallback` when there is none (the error is dropped: for callers to whom a
  // missing value is an ordinary case, such as a file a killed child never wrote).
  T value_or(T fallback) && { return ok() ? std::move(*value_) : std::move(fallback); }

 private:
  void CheckOk() const {
    if (!status_.ok()) {
      std::fprintf(stderr, "Result::value() on error: %s\n", status_.ToString().c_str());
      std::abort();
    }
  }
  Status status_;
  std::optional<T> value_;
};

}  // namespace tunefarm

#define TUNEFARM_CONCAT_INNER_(a, b) a##b
#define TUNEFARM_CONCAT_(a, b) TUNEFARM_CONCAT_INNER_(a, b)
// TUNEFARM_ASSIGN_OR_RETURN(auto x, MakeX()); declares x or returns the error.
#define TUNEFARM_ASSIGN_OR_RETURN(lhs, expr) \
  TUNEFARM_ASSIGN_OR_RETURN_IMPL_(TUNEFARM_CONCAT_(_tf_result_, __LINE__), lhs, expr)
// NOLINTBEGIN(bugprone-macro-parentheses): `tmp` is a generated variable name and `lhs` a
// declaration ("auto x") or an lvalue; neither can be parenthesized.
#define TUNEFARM_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                                    \
  if (!tmp.ok()) return tmp.status();                   \
  lhs = std::move(tmp).value()
// NOLINTEND(bugprone-macro-parentheses)

#endif  // TUNEFARM_RUNTIME_RESULT_H_
