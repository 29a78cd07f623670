// TuningPipeline (tuning_pipeline.h).
#include "tuner/search/tuning_pipeline.h"

#include <algorithm>
#include <chrono>

namespace tunefarm::tuner {
namespace {
using Clock = std::chrono::steady_clock;
double MsSince(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }
}  // namespace

TuningPipeline::TuningPipeline(Measurer& measurer, int build_jobs, bool gpu)
    : measurer_(measurer), gpu_(gpu), pool_(build_jobs) {
  PlaceMeasurements();
  measure_thread_ = std::thread([this] { MeasureLoop(); });
}

TuningPipeline::~TuningPipeline() { (void)Stop(); }

void TuningPipeline::PlaceMeasurements() {
  const bool exclusive = !gpu_ && measurer_.SharesThisMachine();
  pool_.SetExclusiveMeasurements(exclusive);
  MutexLock lock(&mu_);
  exclusive_ = exclusive;
}

void TuningPipeline::Submit(int owner, std::function<Built()> build) {
  {
    MutexLock lock(&mu_);
    ++pending_;
  }
  pool_.Submit([owner, build = std::move(build)] {
    Built b = build();
    b.owner = owner;
    return b;
  });
}

bool TuningPipeline::WantsMore() const {
  const int queued = pool_.queued(), running = pool_.running();
  MutexLock lock(&mu_);
  if (exclusive_) return pending_ == 0;
  // Builds queued for less than one more round of the builders, and the measurer not behind by
  // more than a round either (proposing far ahead of the results only blinds the cost model).
  const int built_not_returned = pending_ - queued - running;
  return queued < pool_.jobs() && built_not_returned <= pool_.jobs();
}

int TuningPipeline::pending() const {
  MutexLock lock(&mu_);
  return pending_;
}

void TuningPipeline::MeasureLoop() {
  for (;;) {
    std::vector<Built> ready;
    const auto t_wait = Clock::now();
    if (!pool_.TakeToMeasure(&ready)) return;  // stopped
    const double waited_ms = MsSince(t_wait);
    std::vector<rpc_server::MeasureInput> inputs;
    std::vector<size_t> input_of(ready.size(), SIZE_MAX);
    for (size_t i = 0; i < ready.size(); ++i) {
      if (ready[i].library.empty() || ready[i].cancelled) continue;
      input_of[i] = inputs.size();
      inputs.push_back(ready[i].input);
    }
    const auto t_measure = Clock::now();
    Result<std::vector<rpc_server::MeasureOutcome>> outcomes = std::vector<rpc_server::MeasureOutcome>{};
    if (!inputs.empty()) outcomes = measurer_.Measure(inputs);
    const double measure_ms = MsSince(t_measure);
    pool_.DoneMeasuring();
    PlaceMeasurements();  // a farm's lease says where its server is only once it measured
    MutexLock lock(&mu_);
    if (!outcomes.ok()) {
      error_ = outcomes.status();
      arrived_.SignalAll();
      return;
    }
    if (outcomes->size() != inputs.size()) {
      error_ = Status::Internal("the measurer returned " + std::to_string(outcomes->size()) + " outcomes for " +
                                std::to_string(inputs.size()) + " kernels");
      arrived_.SignalAll();
      return;
    }
    const double share = 1.0 / double(std::max<size_t>(1, ready.size()));
    for (size_t i = 0; i < ready.size(); ++i) {
      if (ready[i].cancelled) {  // stopping: nothing to record; its claim is released by its tuner
        --pending_;
        continue;
      }
      FinishedCandidate f;
      f.built = std::move(ready[i]);
      if (input_of[i] != SIZE_MAX) f.outcome = std::move((*outcomes)[input_of[i]]);
      f.measure_ms = measure_ms * share;
      f.waited_ms = waited_ms * share;
      finished_.push_back(std::move(f));
    }
    arrived_.SignalAll();
  }
}

Result<std::vector<FinishedCandidate>> TuningPipeline::Wait(double wait_ms) {
  MutexLock lock(&mu_);
  const auto deadline = Clock::now() + std::chrono::duration<double, std::milli>(std::max(0.0, wait_ms));
  while (finished_.empty() && error_.ok() && pending_ > 0) {
    if (!arrived_.WaitUntil(&mu_, deadline)) break;
  }
  if (!error_.ok()) return error_;
  std::vector<FinishedCandidate> out(std::make_move_iterator(finished_.begin()),
                                     std::make_move_iterator(finished_.end()));
  finished_.clear();
  pending_ -= int(out.size());
  return out;
}

std::vector<FinishedCandidate> TuningPipeline::Stop() {
  if (!stopping_.exchange(true)) {
    pool_.Stop();
    if (measure_thread_.joinable()) measure_thread_.join();
  }
  MutexLock lock(&mu_);
  std::vector<FinishedCandidate> out(std::make_move_iterator(finished_.begin()),
                                     std::make_move_iterator(finished_.end()));
  finished_.clear();
  pending_ -= int(out.size());
  return out;
}

}  // namespace tunefarm::tuner
