// The dashboard's JSON views over one records database (docs/dashboard.md is their reference):
// each takes validated parameters and returns the answer's JSON, or a Status the server maps to
// an HTTP status (NotFound 404, InvalidArgument 400). Private to tuner/dashboard/.
#ifndef TUNEFARM_TUNER_DASHBOARD_DASHBOARD_VIEWS_H_
#define TUNEFARM_TUNER_DASHBOARD_DASHBOARD_VIEWS_H_

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tunefarm/runtime/result.h"
#include "tunefarm/tuner/records_roles.h"

namespace tunefarm::tuner::dashboard {

using Json = nlohmann::ordered_json;

// A target-neutral workload key as the page shows it: the operator and its shapes, and the dtype
// unless float32 ("conv2d|N1_C64_H56_W56|K64_R3x3_S1x1_P1_1_1_1_D1x1_G1|NCHW|float32" -> "conv2d
// N1_C64_H56_W56 K64_R3x3_S1x1_P1_1_1_1_D1x1_G1"). A key of another form is returned whole. The page
// never parses keys: every name it shows comes from here.
std::string WorkloadDisplayName(const std::string& key);
// A task as the page names it: "IMPLEMENTATION " + WorkloadDisplayName(key).
std::string TaskDisplayName(const std::string& template_name, const std::string& workload_key);

// Milliseconds since the epoch of the database's timestamps ("2026-11-23T14:58:00.123Z"); 0 when
// the text is not one.
int64_t EpochMs(const std::string& iso);

// What the views that show jobs read of one records database: its queries and its jobs.
struct DashboardRecords {
  RecordsQueries& queries;
  JobStore& jobs;
};

// Trials, newest id, jobs with progress and ETA, the newest failures.
Result<Json> OverviewView(DashboardRecords db);
// The models: one per daemon job, plus "trials outside jobs" (job 0) when there are any.
Result<Json> ModelsView(DashboardRecords db);
// The task table (MetaSchedule's columns) and the estimated end-to-end latency over time.
Result<Json> ModelView(DashboardRecords db, int64_t job_id);
// One workload: per-target figures, error groups, fastest configs, knob importance.
Result<Json> TaskView(RecordsQueries& db, int64_t workload_id);
// Trials after an id (of one workload, or all with 0), as columns; `more` when limit cut it.
Result<Json> TrialsView(RecordsQueries& db, int64_t workload_id, int64_t after, int64_t limit);
// A workload by key in each database: per target and device, trials and best latency.
Result<Json> CompareView(const std::vector<RecordsQueries*>& dbs, const std::string& workload_key);

}  // namespace tunefarm::tuner::dashboard

#endif  // TUNEFARM_TUNER_DASHBOARD_DASHBOARD_VIEWS_H_
