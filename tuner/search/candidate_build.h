// Building the tuner's candidates: one config of a workload compiled to what a measurer loads (a
// shared library for CPU targets; PTX plus, with ptxas here, its cubin for CUDA), and a pool of
// build threads that hands the candidates back in the order they finish.
//
// Why a pool and not a batch of threads joined together: candidate builds are heavy-tailed. A
// ResNet-18 3x3 conv candidate for CUDA builds in 0.15-0.3 s, but one whose reduction is unrolled
// hundreds of steps deep (auto_unroll_max_step 512, 1500) spends 1.5-5 s in ptxas; a batch that waits for its slowest
// build leaves every other core idle meanwhile. The pool lets the tuner measure candidates as they come and carry a
// straggler on while the other cores build what comes next (tuning_pipeline.h).
//
// Measured on this machine's own cores, a CPU kernel must not be timed beside a build: the pool then
// builds only between measurements (SetExclusiveMeasurements).
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "tunefarm/compiler/kernel.h"
#include "tunefarm/rpc_server/measure_client.h"
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
  int owner = 0;                   // which task's candidate (TuningPipeline::Submit)
  rpc_server::MeasureInput input;  // what the measurer is sent, when the library was built
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

// A fixed number of build threads. Submit() queues a build; TakeToMeasure() hands finished ones
// back in the order they finish. Thread-safe for one consumer. The destructor drops what is queued, sets
// cancel() (a build's tool is killed within 50 ms) and waits for the builds running, whose LLVM
// code generation cannot be interrupted (under a second per candidate).
class BuildPool {
 public:
  explicit BuildPool(int jobs);
  ~BuildPool();
  BuildPool(const BuildPool&) = delete;
  BuildPool& operator=(const BuildPool&) = delete;

  void Submit(std::function<Built()> build) EXCLUDES(mu_);

  // Measurements on this machine's cores (exclusive): no build runs during a measurement, and
  // everything submitted is built before the next one starts. Timed beside a build on the other
  // core of a 2-core machine, resnet-18's conv kernels read 12% slower on median and up to 2.5x on
  // some (bench/RESULTS.md, issue 50), and the search then chose worse configs. Not exclusive (the
  // default): builds run while candidates are measured on a GPU or another machine.
  void SetExclusiveMeasurements(bool exclusive) EXCLUDES(mu_);
  // Waits (at most wait_ms when >= 0) until finished builds may be measured (exclusive: the pool
  // idle), then takes every finished one and counts a measurement as running until
  // DoneMeasuring(). False, taking nothing, when the wait ran out or the pool stopped.
  bool TakeToMeasure(std::vector<Built>* out, double wait_ms = -1) EXCLUDES(mu_);
  void DoneMeasuring() EXCLUDES(mu_);
  // Drops what is queued, kills the external tools of running builds (cancel()) and wakes every
  // waiter; the destructor waits for the running builds.
  void Stop() EXCLUDES(mu_);
  int queued() const EXCLUDES(mu_);
  int running() const EXCLUDES(mu_);
  int jobs() const { return int(threads_.size()); }
  // Set by the destructor; builds pass it to BuildOne.
  const std::atomic<bool>* cancel() const { return &cancel_; }

 private:
  void Work() EXCLUDES(mu_);
  bool MeasurableLocked() const REQUIRES(mu_);

  mutable Mutex mu_;
  CondVar work_cv_, done_cv_;
  std::deque<std::function<Built()>> queue_ GUARDED_BY(mu_);
  std::deque<Built> finished_ GUARDED_BY(mu_);
  int running_ GUARDED_BY(mu_) = 0;
  bool stopping_ GUARDED_BY(mu_) = false;
  bool exclusive_ GUARDED_BY(mu_) = false;
  bool measuring_ GUARDED_BY(mu_) = false;
  std::atomic<bool> cancel_{false};
  std::vector<std::thread> threads_;
};

}  // namespace tunefarm::tuner
