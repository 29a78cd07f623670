#include "tunefarm/tuner/features.h"

#include <atomic>
#include <cstddef>
#include <thread>

#include "tunefarm/tuner/search.h"

namespace tunefarm::tuner {

TaskFeatures::TaskFeatures(compiler::Workload workload, compiler::Target target, compiler::ConfigSpace space, int jobs)
    : workload_(std::move(workload)), target_(std::move(target)), space_(std::move(space)), jobs_(std::max(1, jobs)) {
  auto first = space_.Get(0);
  if (first.ok()) knob_width_ = ConfigFeatures(space_, *first).size();
}

std::vector<float> TaskFeatures::Compute(int64_t config) const {
  std::vector<float> row(Width(), 0.0f);
  auto c = space_.Get(config);
  if (!c.ok()) return row;
  std::vector<float> knobs = ConfigFeatures(space_, *c);
  std::copy(knobs.begin(), knobs.begin() + std::min(knobs.size(), knob_width_), row.begin());
  compiler::KernelSpec spec;
  spec.workload = workload_;
  spec.target = target_;
  spec.config_index = config;
  spec.symbol = "features";
  // An invalid config (a register tile too big for the target) keeps zero loop-nest features;
  // it is never measured, only scored while annealing walks through it.
  auto nest = compiler::LoopNestFeatures(spec);
  if (nest.ok()) std::copy(nest->begin(), nest->end(), row.begin() + std::ptrdiff_t(knob_width_));
  return row;
}

std::vector<std::vector<float>> TaskFeatures::Get(const std::vector<int64_t>& configs) {
  std::vector<int64_t> missing;
  for (int64_t c : configs) {
    if (!cache_.count(c)) {
      cache_[c];  // placeholder, filled below; also dedups
      missing.push_back(c);
    }
  }
  if (!missing.empty()) {
    std::vector<std::vector<float>> rows(missing.size());
    std::atomic<size_t> next{0};
    auto work = [&] {
      for (size_t i; (i = next++) < missing.size();) rows[i] = Compute(missing[i]);
    };
    std::vector<std::thread> threads;
    const int n = missing.size() < 8 ? 1 : jobs_;
    for (int j = 1; j < n; ++j) threads.emplace_back(work);
    work();
    for (auto& t : threads) t.join();
    for (size_t i = 0; i < missing.size(); ++i) cache_[missing[i]] = std::move(rows[i]);
  }
  std::vector<std::vector<float>> out;
  out.reserve(configs.size());
  for (int64_t c : configs) out.push_back(cache_[c]);
  return out;
}

}  // namespace tunefarm::tuner
