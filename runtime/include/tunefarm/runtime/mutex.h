// Mutex, MutexLock and CondVar: std::mutex and std::condition_variable with clang's thread-safety
// annotations (https://clang.llvm.org/docs/ThreadSafetyAnalysis.html), so that a field marked
// GUARDED_BY(mu_) read or written without mu_ held is a compile error in the clang check
// (scripts/check_style.sh: -Wthread-safety -Werror) rather than a race found in production.
// libstdc++'s std::mutex carries no annotations, hence these thin wrappers; under GCC the macros
// expand to nothing and the classes cost what the std ones do.
//
// Contract:
//  - Mutex is not recursive; MutexLock holds it for a scope and may Unlock() and Lock() it again
//    inside (e.g. around slow work); it releases it at the end of the scope if held.
//  - CondVar::Wait* must be called with the mutex held (REQUIRES), and return with it held. Wake-ups
//    may be spurious: callers wait in a loop on their condition, which the analysis then checks.
#ifndef TUNEFARM_RUNTIME_MUTEX_H_
#define TUNEFARM_RUNTIME_MUTEX_H_

#include <chrono>
#include <condition_variable>
#include <mutex>

#if defined(__clang__)
#define TUNEFARM_THREAD_ANNOTATION(x) __attribute__((x))
#else
#define TUNEFARM_THREAD_ANNOTATION(x)
#endif

#define CAPABILITY(x) TUNEFARM_THREAD_ANNOTATION(capability(x))
#define SCOPED_CAPABILITY TUNEFARM_THREAD_ANNOTATION(scoped_lockable)
#define REQUIRES(...) TUNEFARM_THREAD_ANNOTATION(requires_capability(__VA_ARGS__))
#define ACQUIRE(...) TUNEFARM_THREAD_ANNOTATION(acquire_capability(__VA_ARGS__))
#define RELEASE(...) TUNEFARM_THREAD_ANNOTATION(release_capability(__VA_ARGS__))
#define TRY_ACQUIRE(...) TUNEFARM_THREAD_ANNOTATION(try_acquire_capability(__VA_ARGS__))
#define EXCLUDES(...) TUNEFARM_THREAD_ANNOTATION(locks_excluded(__VA_ARGS__))
// gRPC's headers bring absl/base/internal/thread_annotations.h, which defines these four under the
// same names and meanings (the same attributes under clang, nothing elsewhere): whichever comes
// first stands, and a redefinition here would fail -Werror. (One in absl's system header after
// ours is not diagnosed.)
#ifndef GUARDED_BY
#define GUARDED_BY(x) TUNEFARM_THREAD_ANNOTATION(guarded_by(x))
#endif
#ifndef PT_GUARDED_BY
#define PT_GUARDED_BY(x) TUNEFARM_THREAD_ANNOTATION(pt_guarded_by(x))
#endif
#ifndef ACQUIRED_BEFORE
#define ACQUIRED_BEFORE(...) TUNEFARM_THREAD_ANNOTATION(acquired_before(__VA_ARGS__))
#endif
#ifndef NO_THREAD_SAFETY_ANALYSIS
#define NO_THREAD_SAFETY_ANALYSIS TUNEFARM_THREAD_ANNOTATION(no_thread_safety_analysis)
#endif

namespace tunefarm {

class CAPABILITY("mutex") Mutex {
 public:
  Mutex() = default;
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  void Lock() ACQUIRE() { mu_.lock(); }
  void Unlock() RELEASE() { mu_.unlock(); }
  bool TryLock() TRY_ACQUIRE(true) { return mu_.try_lock(); }

 private:
  friend class CondVar;
  std::mutex mu_;
};

// A mutex its holder may lock again on the same thread: for a callback run under it that can
// re-enter the object (a subscriber list whose callback may unsubscribe). The analysis treats it as
// a plain capability, so fields it guards are checked like any other; it sees re-entry only inside
// one function, and the re-entries this exists for come through callbacks.
class CAPABILITY("mutex") RecursiveMutex {
 public:
  RecursiveMutex() = default;
  RecursiveMutex(const RecursiveMutex&) = delete;
  RecursiveMutex& operator=(const RecursiveMutex&) = delete;

  void Lock() ACQUIRE() { mu_.lock(); }
  void Unlock() RELEASE() { mu_.unlock(); }

 private:
  std::recursive_mutex mu_;
};

class SCOPED_CAPABILITY RecursiveMutexLock {
 public:
  explicit RecursiveMutexLock(RecursiveMutex* mu) ACQUIRE(mu) : mu_(mu) { mu_->Lock(); }
  ~RecursiveMutexLock() RELEASE() { mu_->Unlock(); }
  RecursiveMutexLock(const RecursiveMutexLock&) = delete;
  RecursiveMutexLock& operator=(const RecursiveMutexLock&) = delete;

 private:
  RecursiveMutex* const mu_;
};

class SCOPED_CAPABILITY MutexLock {
 public:
  explicit MutexLock(Mutex* mu) ACQUIRE(mu) : mu_(mu) { mu_->Lock(); }
  ~MutexLock() RELEASE() {
    if (held_) mu_->Unlock();
  }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

  // Around work that must not hold the mutex; the scope's end releases only what is held.
  void Unlock() RELEASE() {
    mu_->Unlock();
    held_ = false;
  }
  void Lock() ACQUIRE() {
    mu_->Lock();
    held_ = true;
  }

 private:
  Mutex* const mu_;
  bool held_ = true;
};

class CondVar {
 public:
  void Wait(Mutex* mu) REQUIRES(mu) {
    std::unique_lock<std::mutex> lock(mu->mu_, std::adopt_lock);
    cv_.wait(lock);
    lock.release();  // still held: the caller's
  }
  // False once `deadline` has passed (the mutex is held again either way).
  template <typename Clock, typename Duration>
  bool WaitUntil(Mutex* mu, const std::chrono::time_point<Clock, Duration>& deadline) REQUIRES(mu) {
    std::unique_lock<std::mutex> lock(mu->mu_, std::adopt_lock);
    const bool in_time = cv_.wait_until(lock, deadline) == std::cv_status::no_timeout;
    lock.release();
    return in_time;
  }
  template <typename Rep, typename Period>
  bool WaitFor(Mutex* mu, const std::chrono::duration<Rep, Period>& timeout) REQUIRES(mu) {
    return WaitUntil(mu, std::chrono::steady_clock::now() + timeout);
  }
  void Signal() { cv_.notify_one(); }
  void SignalAll() { cv_.notify_all(); }

 private:
  std::condition_variable cv_;
};

}  // namespace tunefarm

#endif  // TUNEFARM_RUNTIME_MUTEX_H_
