#include "tuner/daemon/daemon_metrics.h"

#include <map>
#include <string>
#include <vector>

#include "tunefarm/service/metrics.h"

namespace tunefarm::tuner {

std::shared_ptr<prometheus::Collectable> DaemonJobMetrics(JobManager* jobs) {
  using service::AddSample;
  using service::Family;
  return service::CollectWith([jobs] {
    std::map<JobState, int> by_state;
    for (JobState state : AllJobStates()) by_state[state] = 0;  // every state has a sample, 0 or not
    double trials = 0;
    for (const auto& job : jobs->List()) {
      ++by_state[job.state];
      trials += job.trials_done;
    }
    auto states = Family("tunefarm_daemon_jobs", "Tuning jobs, by state.", prometheus::MetricType::Gauge);
    for (const auto& [state, n] : by_state) AddSample(&states, n, {{"state", std::string(NameOf(state))}});
    auto measured = Family("tunefarm_daemon_trials_total",
                           "Trials the daemon's jobs measured and committed (resumed ones included).",
                           prometheus::MetricType::Counter);
    AddSample(&measured, trials);
    return std::vector<prometheus::MetricFamily>{states, measured};
  });
}

}  // namespace tunefarm::tuner
