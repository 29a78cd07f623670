// RecordsMetrics: trials committed and their build times, read incrementally from a records
// database at scrape time (each scrape reads only the trials past the previous one's last id).
#include <prometheus/collectable.h>
#include <prometheus/counter.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include "tunefarm/runtime/mutex.h"
#include "tunefarm/tuner/dashboard.h"
#include "tunefarm/tuner/records.h"

namespace tunefarm::tuner {
namespace {

class RecordsCollectable final : public prometheus::Collectable {
 public:
  explicit RecordsCollectable(std::unique_ptr<RecordsQueries> db) : db_(std::move(db)) {
    trials_ = &prometheus::BuildCounter()
                   .Name("tunefarm_trials_total")
                   .Help("Tuning trials committed to the records database, by outcome.")
                   .Register(*registry_);
    build_ =
        &prometheus::BuildHistogram()
             .Name("tunefarm_build_duration_seconds")
             .Help("Time to build a trial's kernel (lower, compile, link), from the records database.")
             .Register(*registry_)
             .Add({}, prometheus::Histogram::BucketBoundaries{0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30});
  }

  std::vector<prometheus::MetricFamily> Collect() const override EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    // A read error leaves the counters where they were; the next scrape tries again.
    for (int64_t after = counted_.ReadFrom();;) {
      auto trials = db_->TrialsAfter(after, 0, 10000);
      if (!trials.ok() || trials->empty()) break;
      for (const auto& t : *trials) {
        if (!counted_.First(t.id)) continue;
        trials_->Add({{"status", t.status}}).Increment();
        if (t.build_ms > 0) build_->Observe(t.build_ms / 1000.0);
      }
      after = trials->back().id;
    }
    return registry_->Collect();
  }

 private:
  mutable Mutex mu_;  // one scrape at a time: the connection and what was counted
  std::unique_ptr<RecordsQueries> db_ PT_GUARDED_BY(mu_);
  // The metrics themselves are prometheus-cpp's, thread-safe on their own (a scrape reads them).
  std::shared_ptr<prometheus::Registry> registry_ = std::make_shared<prometheus::Registry>();
  prometheus::Family<prometheus::Counter>* trials_;
  prometheus::Histogram* build_;
  mutable NewTrials counted_ GUARDED_BY(mu_);
};

}  // namespace

Result<std::shared_ptr<prometheus::Collectable>> RecordsMetrics(const std::string& records_path) {
  TUNEFARM_ASSIGN_OR_RETURN(auto db, RecordsDb::Open(records_path, RecordsDb::Mode::kReadOnly));
  return std::shared_ptr<prometheus::Collectable>(std::make_shared<RecordsCollectable>(std::move(db)));
}

}  // namespace tunefarm::tuner
