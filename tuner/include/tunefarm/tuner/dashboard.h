// Dashboard: the web dashboard over records databases (`tunefarm dashboard`, `tuner-daemon
// --dashboard`): a JSON API (docs/dashboard.md) and a page with its charting library embedded in
// the binary, live while tuning runs.
//
// Contract:
//  - Start opens every records database (the first is the main one; the others are for Compare)
//    as it must exist, then listens (default 127.0.0.1:8321; a wildcard host must be spelled out).
//    A database that cannot be opened or an address that cannot be bound is an error naming it.
//  - Read-only: nothing it serves writes the databases. Cancelling a daemon job (POST) needs the
//    farm token in "Authorization: Bearer"; without a token configured it is refused.
//  - Every parameter is validated before use: an unknown parameter, a non-integer id, an `after`
//    past the newest trial, an unknown task or database, a path outside the embedded assets --
//    each is a 4xx whose text names the parameter and value. Values reach SQL only as bound
//    parameters.
//  - The tracker and daemon are optional: when one is unreachable the overview says so and the
//    rest still works.
#ifndef TUNEFARM_TUNER_DASHBOARD_H_
#define TUNEFARM_TUNER_DASHBOARD_H_

#include <memory>
#include <string>
#include <vector>

#include "tunefarm/runtime/result.h"
#include "tunefarm/service/auth.h"

namespace prometheus {
class Collectable;
}

namespace tunefarm::tuner {

struct DashboardOptions {
  std::vector<std::string> records;  // at least one
  std::string tracker;               // HOST:PORT, optional: the farm in the overview
  std::string daemon;                // HOST:PORT, optional: where cancelling a job goes
  std::string listen = "127.0.0.1:8321";
  std::string token;      // the farm token; empty: read-only
  service::TlsFiles tls;  // for the tracker and daemon
  // Host header names served besides IP addresses, localhost and this machine's name (the page
  // is refused to any other name: DNS rebinding).
  std::vector<std::string> allowed_hosts;
};

class Dashboard {
 public:
  static Result<std::unique_ptr<Dashboard>> Start(const DashboardOptions& options);
  ~Dashboard();
  Dashboard(const Dashboard&) = delete;
  Dashboard& operator=(const Dashboard&) = delete;
  std::string address() const;  // "127.0.0.1:8321"
  // Request counts and durations by route, for a --metrics endpoint.
  std::shared_ptr<prometheus::Collectable> metrics() const;

  struct Impl;

 private:
  explicit Dashboard(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Prometheus metrics read from a records database, incrementally (only trials past the last id
// seen at the previous scrape are read): tunefarm_trials_total{status} and
// tunefarm_build_duration_seconds (histogram of trials' build times).
Result<std::shared_ptr<prometheus::Collectable>> RecordsMetrics(const std::string& records_path);

}  // namespace tunefarm::tuner

#endif  // TUNEFARM_TUNER_DASHBOARD_H_
