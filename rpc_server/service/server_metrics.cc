#include "tunefarm/rpc_server/server_metrics.h"

#include "tunefarm/farm_net/metrics.h"

namespace tunefarm::rpc_server {

ServerMetrics::ServerMetrics(const std::string& key, std::function<bool()> leased) {
  auto& measurements = prometheus::BuildCounter()
                           .Name("tunefarm_server_measurements_total")
                           .Help("Measurements made, by outcome.")
                           .Register(*registry_);
  // Every outcome from the start (at 0), so rates and ratios exist before the first failure.
  for (OutcomeKind k : {OutcomeKind::kOk, OutcomeKind::kInstantiation, OutcomeKind::kCompile, OutcomeKind::kRuntimeCrash,
                        OutcomeKind::kTimeout, OutcomeKind::kWrongAnswer, OutcomeKind::kBadRequest}) {
    by_result_[k] = &measurements.Add({{"key", key}, {"result", OutcomeKindName(k)}});
  }
  duration_ = &prometheus::BuildHistogram()
                   .Name("tunefarm_server_measure_duration_seconds")
                   .Help("Wall time of one measurement: child start, load, warm-up, timed runs.")
                   .Register(*registry_)
                   .Add({{"key", key}}, prometheus::Histogram::BucketBoundaries{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
                                                                                 1, 2.5, 5, 10, 30, 60});
  crashes_ = &prometheus::BuildCounter()
                  .Name("tunefarm_server_child_crashes_total")
                  .Help("Measurement children that crashed or hung and were replaced.")
                  .Register(*registry_)
                  .Add({{"key", key}});
  leased_ = farm_net::CollectWith([key, leased] {
    auto f = farm_net::Family("tunefarm_server_leased", "1 while a lease holds this server.", prometheus::MetricType::Gauge);
    farm_net::AddSample(&f, leased() ? 1 : 0, {{"key", key}});
    return std::vector<prometheus::MetricFamily>{f};
  });
}

void ServerMetrics::Observe(OutcomeKind kind, double seconds) {
  by_result_.at(kind)->Increment();
  duration_->Observe(seconds);
  if (kind == OutcomeKind::kRuntimeCrash || kind == OutcomeKind::kTimeout) crashes_->Increment();
}

std::vector<std::shared_ptr<prometheus::Collectable>> ServerMetrics::sources() const { return {registry_, leased_}; }

}  // namespace tunefarm::rpc_server
