// Building the tuner's candidates: one config of a workload compiled to what a measurer loads (a
// shared library for CPU targets; PTX plus, with ptxas here, its cubin for CUDA), and a pool of
// build threads that hands the candidates back in the order they finish.
//
// Why a pool and not a batch of threads joined together: candidate builds are heavy-tailed. A
// ResNet-18 3x3 conv candidate for CUDA builds in 0.15-0.3 s, but one whose reduction is unrolled
// hundreds of steps deep (auto_unroll_max_step 512, 1500) spends 1.5-5 s in ptxas; a batch that waits for its slowest
// build leaves every other core idle meanwhile. The pool lets the tuner measure candidates as they come and carry a
// straggler to its next batch while the other cores build that batch (TaskTuner::MeasureClaimed).
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "tunefarm/compiler/kernel.h"
#include "tunefarm/runtime/mutex.h"
#include "tunefarm/runtime/trial_status.h"

namespace tunefarm::tuner {

struct Built {
  int64_t config = -1;
  std::string library;  // bytes; empty when the build failed
  std::string cubin;    // CUDA with ptxas here: the library assembled for the target's arch
  TrialStatus status = TrialStatus::kOk;
  bool cancelled = false;  // the tuner stopped: nothing to record
  std::string message;
  compiler::KernelInfo info;
  double build_ms = 0;
  compiler::BuildOptions::Times phases;
};

// Bounds on one candidate's external tool (ptxas, ld): timeout_ms > 0 kills it past that, and
// cancel (BuildPool::cancel()) kills it when the tuner stops.
struct BuildLimits {
  double timeout_ms = 0;
  const std::atomic<bool>* cancel = nullptr;
};

// One candidate; never fails as a call: a failed build is a Built with an empty library and the
// trial status (kInstantiation when the config cannot exist on the target, else kCompile, a tool
// past its timeout included) and message to record. A cancelled build comes back `cancelled`:
// nothing to record.
Built BuildOne(const compiler::Workload& w, const compiler::Target& t, int64_t config, const std::string& tmp,
               const BuildLimits& limits = {});

// A fixed number of build threads. Submit() queues a build; Next() returns finished ones in the
// order they finish. Thread-safe for one consumer. The destructor drops what is queued, sets
// cancel() (a build's tool is killed within 50 ms) and waits for the builds running, whose LLVM
// code generation cannot be interrupted (under a second per candidate).
class BuildPool {
 public:
  explicit BuildPool(int jobs);
  ~BuildPool();
  BuildPool(const BuildPool&) = delete;
  BuildPool& operator=(const BuildPool&) = delete;

  void Submit(std::function<Built()> build) EXCLUDES(mu_);
  // Waits for a finished build (at most wait_ms when >= 0); false when nothing is queued,
  // running or finished, or none finished within wait_ms.
  bool Next(Built* out, double wait_ms = -1) EXCLUDES(mu_);
  // Every finished build, without waiting.
  std::vector<Built> TakeFinished() EXCLUDES(mu_);
  int queued() const EXCLUDES(mu_);
  int running() const EXCLUDES(mu_);
  int jobs() const { return int(threads_.size()); }
  // Set by the destructor; builds pass it to BuildOne.
  const std::atomic<bool>* cancel() const { return &cancel_; }

 private:
  void Work() EXCLUDES(mu_);
  // Next() may return: a build finished, or none is left to finish.
  bool ReadyLocked() const REQUIRES(mu_) { return !finished_.empty() || (queue_.empty() && running_ == 0); }

  mutable Mutex mu_;
  CondVar work_cv_, done_cv_;
  std::deque<std::function<Built()>> queue_ GUARDED_BY(mu_);
  std::deque<Built> finished_ GUARDED_BY(mu_);
  int running_ GUARDED_BY(mu_) = 0;
  bool stopping_ GUARDED_BY(mu_) = false;
  std::atomic<bool> cancel_{false};
  std::vector<std::thread> threads_;
};

}  // namespace tunefarm::tuner
