// TuningPipeline: builds and measures candidates continuously, across batches and tasks, so that
// neither the builders nor the measurer waits for a batch boundary.
//
// The tuner used to be batch-synchronous: propose 16, build them all, measure them all, refit,
// propose the next 16. Each phase left the others' resources idle: the measurer while the batch
// built, the builders while it was measured (on a 2-core machine measuring at 1 thread, one core
// in two), and everything while the model refitted. Here the scheduler submits a batch as soon as
// the builders are about to run out of work, one thread measures candidates as they are built, and
// the tuners record and learn from results as they arrive (the cost model refits on what has
// arrived; the next batch may be proposed before the current one is measured).
//
// Where the kernels are timed decides what may overlap a measurement:
//   - elsewhere (a farm server on another machine, or a GPU): builds run on every build job while
//     candidates are measured as they come;
//   - on this machine's cores: nothing. A kernel timed beside a build on another core read 12%
//     slower on median, up to 2.5x on some, and the search chose worse configs (bench/RESULTS.md,
//     issue 50), so a batch builds on every core, then is measured alone, as before; the time this
//     costs is won back by making each build and measurement cheaper.
// A farm server reached over loopback counts as this machine (Measurer::SharesThisMachine).
#pragma once

#include <atomic>
#include <deque>
#include <functional>
#include <thread>
#include <vector>

#include "tunefarm/runtime/mutex.h"
#include "tunefarm/tuner/tuner.h"
#include "tuner/search/candidate_build.h"

namespace tunefarm::tuner {

// A candidate out of the pipeline: built and measured, or failed to build (outcome unused).
struct FinishedCandidate {
  Built built;
  rpc_server::MeasureOutcome outcome;
  // This candidate's share of the measurer's time: measuring its group, and waiting before it for
  // something to measure.
  double measure_ms = 0, waited_ms = 0;
};

class TuningPipeline {
 public:
  // gpu: the target's kernels are timed on a GPU (compiler::MeasuresWhileBuilding), apart from the
  // cores that build.
  TuningPipeline(Measurer& measurer, int build_jobs, bool gpu);
  ~TuningPipeline();  // Stop(), dropping what it returns
  TuningPipeline(const TuningPipeline&) = delete;
  TuningPipeline& operator=(const TuningPipeline&) = delete;

  // Queues one candidate's build (owner: Built::owner of what comes out). Its result comes back
  // through Wait once built and measured.
  void Submit(int owner, std::function<Built()> build) EXCLUDES(mu_);
  // The builders are about to run out of work: time to propose another batch. When measurements
  // are exclusive, only once everything submitted is back.
  bool WantsMore() const EXCLUDES(mu_);
  int pending() const EXCLUDES(mu_);  // submitted, not yet returned by Wait
  // Waits (at most wait_ms) for finished candidates and returns every one there is; an error when
  // the measurer failed (the candidates it held are not returned).
  Result<std::vector<FinishedCandidate>> Wait(double wait_ms) EXCLUDES(mu_);
  // Cancels the builds, lets a measurement in progress finish, and returns what it measured.
  std::vector<FinishedCandidate> Stop() EXCLUDES(mu_);
  const std::atomic<bool>* cancel() const { return pool_.cancel(); }

 private:
  void MeasureLoop() EXCLUDES(mu_);
  // Whether measurements exclude builds, for where this measurer times kernels (file comment).
  void PlaceMeasurements();

  Measurer& measurer_;
  const bool gpu_;
  BuildPool pool_;
  mutable Mutex mu_;
  CondVar arrived_;
  std::deque<FinishedCandidate> finished_ GUARDED_BY(mu_);
  Status error_ GUARDED_BY(mu_);
  int pending_ GUARDED_BY(mu_) = 0;
  bool exclusive_ GUARDED_BY(mu_) = false;
  std::atomic<bool> stopping_{false};
  std::thread measure_thread_;
};

}  // namespace tunefarm::tuner
