// tuner-daemon --listen HOST:PORT [--records DB] [--tracker HOST:PORT --key KEY] [--token-file PATH]
//              [--max-running N] [--job-memory MIB] [--metrics HOST:PORT] [--dashboard HOST:PORT
//              [--dashboard-allow-host NAME]]
//              [--tls-cert PEM --tls-key PEM --tls-ca PEM]
// Takes tuning jobs over gRPC (tunefarm.v1.TunerDaemon; `tunefarm tune --daemon HOST:PORT`),
// keeps them in the records database and resumes unfinished ones when started again. Jobs measure
// through the farm (--tracker/--key, or the job's own) or, without a tracker, on this machine.
// The first line printed is "tuner-daemon listening on HOST:PORT". With --metrics, Prometheus
// metrics on GET /metrics there (jobs by state, trials measured; docs/metrics.md). With
// --dashboard, the web dashboard over its records database (docs/dashboard.md), cancelling through
// this daemon with its token.
#include <unistd.h>

#include <cstdio>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "tunefarm/command_line/command_line.h"
#include "tunefarm/service/daemon.h"
#include "tunefarm/tuner/dashboard.h"
#include "tuner/daemon/daemon_metrics.h"
#include "tuner/daemon/tuner_daemon_service.h"

namespace {

constexpr int kShutdownLimitSeconds = 30;

}  // namespace

int main(int argc, char** argv) {
  tunefarm::service::DaemonFlags flags;
  tunefarm::tuner::DaemonOptions options;
  options.records = "./tunefarm.db";
  std::string dashboard_address;
  std::vector<std::string> dashboard_hosts;
  CLI::App app{
      "tuner-daemon: takes tuning jobs over gRPC (tunefarm tune --daemon), keeps them in the records database and "
      "resumes unfinished ones when started again (token: --token-file or $TUNEFARM_TOKEN; it guards the job API "
      "and is sent to the tracker)",
      "tuner-daemon"};
  tunefarm::service::AddDaemonFlags(app, &flags);
  app.add_option(
         "--records", options.records,
         "the records database of every job: a file (default ./tunefarm.db) or postgresql://USER@HOST[:PORT]/DB")
      ->type_name("DB");
  app.add_option("--name", options.name,
                 "this daemon's name in the records database: daemons sharing a PostgreSQL database need their own "
                 "(default tuner-daemon)");
  auto* tracker = app.add_option("--tracker", options.tracker,
                                 "measure through this farm (default: a job's own, else this machine)")
                      ->type_name("HOST:PORT");
  auto* key = app.add_option("--key", options.key, "the device key to lease on --tracker");
  tracker->needs(key);
  key->needs(tracker);
  tunefarm::AddIntFlag(app, "--max-running", &options.max_running, 1, 1024, "jobs tuned at the same time (default 2)");
  int job_memory_mib = 0;
  tunefarm::AddIntFlag(app, "--job-memory", &job_memory_mib, 64, 1 << 24,
                       "MiB the jobs' memory estimates may add up to at once; a job waits for room, and one that needs "
                       "more than this is refused (default: half of this machine's memory)");
  app.add_option("--dashboard", dashboard_address, "serve the web dashboard over the records there (off by default)")
      ->type_name("HOST:PORT");
  app.add_option(
         "--dashboard-allow-host", dashboard_hosts,
         "a host name the dashboard may be reached by (repeatable; IP addresses, localhost and this machine's name "
         "always are)")
      ->type_name("NAME")
      ->allow_extra_args(false);
  if (auto exit_code = tunefarm::ParseCommandLine(app, argc, argv)) return *exit_code;
  options.job_memory_bytes = int64_t(job_memory_mib) << 20;
  auto secrets = tunefarm::service::LoadDaemonSecrets(flags);
  if (!secrets.ok()) {
    std::fprintf(stderr, "tuner-daemon: %s\n", secrets.status().message().c_str());
    return 1;
  }
  options.token = secrets->token;
  options.tls = secrets->tls;
  options.measure_child = tunefarm::rpc_server::DefaultMeasureChild();
  const char* tmp = std::getenv("TMPDIR");
  if (tmp) options.tmp_root = tmp;
  // Before the records database is opened: a write past ulimit -f must fail, not end the daemon.
  tunefarm::service::PrepareDaemonProcess("tuner-daemon");
  // Work directories a killed daemon or tune left behind (their pid is gone) go first.
  tunefarm::rpc_server::SweepStaleMeasureDirs(options.tmp_root);
  auto jobs = tunefarm::tuner::JobManager::Start(options);
  if (!jobs.ok()) {
    std::fprintf(stderr, "tuner-daemon: %s\n", jobs.status().message().c_str());
    return 1;
  }
  tunefarm::tuner::TunerDaemonService service(jobs->get());

  tunefarm::service::Daemon daemon;
  daemon.name = "tuner-daemon";
  daemon.max_request_bytes = tunefarm::service::kDaemonMessageCap;
  daemon.services = {{tunefarm::v1::TunerDaemon::service_full_name(), &service}};
  daemon.metrics = [&]() -> tunefarm::Result<tunefarm::service::MetricSources> {
    TUNEFARM_ASSIGN_OR_RETURN(auto records_metrics, tunefarm::tuner::RecordsMetrics(options.records));
    return tunefarm::service::MetricSources{tunefarm::tuner::DaemonJobMetrics(jobs->get()), records_metrics};
  };
  std::unique_ptr<tunefarm::tuner::Dashboard> dashboard;
  daemon.on_started = [&](const tunefarm::service::FarmServer& server) -> tunefarm::Status {
    if (dashboard_address.empty()) return tunefarm::Status::OK();
    tunefarm::tuner::DashboardOptions d;
    d.records = {options.records};
    d.tracker = options.tracker;
    d.daemon = server.address;
    d.listen = dashboard_address;
    d.token = options.token;
    d.tls = options.tls;
    d.allowed_hosts = dashboard_hosts;
    auto started = tunefarm::tuner::Dashboard::Start(d);
    if (!started.ok()) return tunefarm::Status(started.status().code(), "--dashboard: " + started.status().message());
    dashboard = std::move(*started);
    std::printf("tuner-daemon dashboard on http://%s/\n", dashboard->address().c_str());
    std::fflush(stdout);
    return tunefarm::Status::OK();
  };
  daemon.stopping = [&] {
    std::printf("tuner-daemon: stopping; unfinished jobs resume when it starts again on %s\n",
                tunefarm::tuner::DisplayRecordsLocation(options.records).c_str());
    std::fflush(stdout);
    dashboard.reset();
  };
  // Every job stops once its measurement in flight is done; a job stuck longer than this (a hostile model in
  // task extraction) must not keep the daemon alive: its trials are committed one by one, and
  // unfinished jobs resume at the next start.
  daemon.stopped = [&] {
    std::promise<void> stopped;
    auto done = stopped.get_future();
    std::thread stopper([&] {
      jobs->reset();
      stopped.set_value();
    });
    if (done.wait_for(std::chrono::seconds(kShutdownLimitSeconds)) != std::future_status::ready) {
      std::printf(
          "tuner-daemon: jobs did not stop within %d s; exiting anyway (unfinished jobs resume at the next start)\n",
          kShutdownLimitSeconds);
      std::fflush(stdout);
      std::_Exit(1);
    }
    stopper.join();
    return 0;
  };
  return tunefarm::service::RunDaemon(flags, *secrets, daemon);
}
