// Candidate builds and the build pool (candidate_build.h).
#include "tuner/search/candidate_build.h"

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>

namespace tunefarm::tuner {
namespace {
using Clock = std::chrono::steady_clock;
double MsSince(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }
}  // namespace

// One candidate, as the target's backend builds it (compiler::BuildCandidate): a shared library
// for CPU targets; PTX plus, with ptxas here, its cubin for CUDA ones.
Built BuildOne(const compiler::Workload& w, const compiler::Target& t, int64_t config, const std::string& tmp,
               const BuildLimits& limits) {
  Built b;
  b.config = config;
  auto t0 = Clock::now();
  compiler::KernelSpec spec;
  spec.workload = w;
  spec.target = t;
  spec.config_index = config;
  spec.symbol = "candidate";
  compiler::BuildOptions options;
  options.times = &b.phases;
  options.tool_timeout_ms = limits.timeout_ms;
  options.cancel = limits.cancel;
  auto candidate = compiler::BuildCandidate(spec, tmp, options);
  if (candidate.ok()) {
    b.library = std::move(candidate->library);
    b.cubin = std::move(candidate->cubin);
    b.info = std::move(candidate->info);
  } else {
    // InvalidArgument: the config cannot exist on the target (launch limits, registers).
    const StatusCode code = candidate.status().code();
    b.cancelled = code == StatusCode::kCancelled;
    b.status = code == StatusCode::kInvalidArgument ? TrialStatus::kInstantiation : TrialStatus::kCompile;
    b.message = candidate.status().message();
  }
  b.build_ms = MsSince(t0);
  return b;
}

BuildPool::BuildPool(int jobs) {
  for (int j = 0; j < std::max(1, jobs); ++j) {
    threads_.emplace_back([this] {
      // Builds yield to everything else here: on a GPU host that also serves the farm they run
      // while the measuring child launches kernels, whose timed rounds must not wait for a core.
      // (Linux: a thread's nice value is its own; ptxas and ld inherit it.)
      (void)setpriority(PRIO_PROCESS, id_t(syscall(SYS_gettid)), 10);
      Work();
    });
  }
}

BuildPool::~BuildPool() {
  Stop();
  for (auto& t : threads_) t.join();
}

void BuildPool::Stop() {
  {
    MutexLock lock(&mu_);
    stopping_ = true;
    queue_.clear();
  }
  cancel_ = true;
  work_cv_.SignalAll();
  done_cv_.SignalAll();
}

bool BuildPool::MeasurableLocked() const {
  if (finished_.empty()) return false;
  return !exclusive_ || (queue_.empty() && running_ == 0);
}

void BuildPool::SetExclusiveMeasurements(bool exclusive) {
  {
    MutexLock lock(&mu_);
    exclusive_ = exclusive;
  }
  work_cv_.SignalAll();
}

bool BuildPool::TakeToMeasure(std::vector<Built>* out, double wait_ms) {
  MutexLock lock(&mu_);
  const auto deadline = Clock::now() + std::chrono::duration<double, std::milli>(std::max(0.0, wait_ms));
  while (!stopping_ && !MeasurableLocked()) {
    if (wait_ms < 0) {
      done_cv_.Wait(&mu_);
    } else if (!done_cv_.WaitUntil(&mu_, deadline)) {
      break;
    }
  }
  if (stopping_ || !MeasurableLocked()) return false;
  out->assign(std::make_move_iterator(finished_.begin()), std::make_move_iterator(finished_.end()));
  finished_.clear();
  measuring_ = true;
  return true;
}

void BuildPool::DoneMeasuring() {
  {
    MutexLock lock(&mu_);
    measuring_ = false;
  }
  work_cv_.SignalAll();
}

void BuildPool::Submit(std::function<Built()> build) {
  {
    MutexLock lock(&mu_);
    queue_.push_back(std::move(build));
  }
  work_cv_.Signal();
}

void BuildPool::Work() {
  MutexLock lock(&mu_);
  for (;;) {
    while (!stopping_ && (queue_.empty() || (exclusive_ && measuring_))) work_cv_.Wait(&mu_);
    if (stopping_) return;
    std::function<Built()> build = std::move(queue_.front());
    queue_.pop_front();
    ++running_;
    lock.Unlock();
    Built b = build();
    lock.Lock();
    --running_;
    finished_.push_back(std::move(b));
    done_cv_.SignalAll();
  }
}

int BuildPool::queued() const {
  MutexLock lock(&mu_);
  return int(queue_.size());
}

int BuildPool::running() const {
  MutexLock lock(&mu_);
  return running_;
}

}  // namespace tunefarm::tuner
