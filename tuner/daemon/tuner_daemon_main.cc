// tuner-daemon --listen HOST:PORT [--records DB] [--tracker HOST:PORT --key KEY] [--token-file PATH]
//              [--max-running N] [--job-memory MIB] [--metrics HOST:PORT] [--dashboard HOST:PORT [--dashboard-allow-host NAME]]
//              [--tls-cert PEM --tls-key PEM --tls-ca PEM]
// Takes tuning jobs over gRPC (tunefarm.v1.TunerDaemon; `tunefarm tune --daemon HOST:PORT`),
// keeps them in the records database and resumes unfinished ones when started again. Jobs measure
// through the farm (--tracker/--key, or the job's own) or, without a tracker, on this machine.
// The first line printed is "tuner-daemon listening on HOST:PORT". With --metrics, Prometheus
// metrics on GET /metrics there (jobs by state, trials measured; docs/metrics.md). With
// --dashboard, the web dashboard over its records database (docs/dashboard.md), cancelling through
// this daemon with its token.
#include <unistd.h>

#include <csignal>
#include <future>
#include <map>
#include <memory>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "tunefarm/farm_net/flags.h"
#include "tunefarm/command_line/command_line.h"
#if TUNEFARM_HAVE_METRICS
#include "tunefarm/farm_net/metrics.h"
#endif
#include "tunefarm/farm_net/server.h"
#include "tuner/daemon/tuner_daemon_service.h"
#include "tunefarm/tuner/dashboard.h"

namespace {

volatile std::sig_atomic_t g_stop = 0;
constexpr int kShutdownLimitSeconds = 30;

#if TUNEFARM_HAVE_METRICS
// Jobs by state and the trials they measured, read from the job list at each scrape.
std::shared_ptr<prometheus::Collectable> DaemonMetrics(tunefarm::tuner::JobManager* jobs) {
  using tunefarm::farm_net::AddSample;
  using tunefarm::farm_net::Family;
  return tunefarm::farm_net::CollectWith([jobs] {
    std::map<std::string, int> by_state = {{"queued", 0}, {"running", 0}, {"done", 0}, {"failed", 0}, {"cancelled", 0}};
    double trials = 0;
    for (const auto& job : jobs->List()) {
      ++by_state[job.state()];
      trials += job.trials_done();
    }
    auto states = Family("tunefarm_daemon_jobs", "Tuning jobs, by state.", prometheus::MetricType::Gauge);
    for (const auto& [state, n] : by_state) AddSample(&states, n, {{"state", state}});
    auto measured = Family("tunefarm_daemon_trials_total", "Trials the daemon's jobs measured and committed (resumed ones included).",
                           prometheus::MetricType::Counter);
    AddSample(&measured, trials);
    return std::vector<prometheus::MetricFamily>{states, measured};
  });
}
#endif


}  // namespace

int main(int argc, char** argv) {
  // Before anything is announced: a SIGTERM right after "listening on" still stops it cleanly.
  std::signal(SIGTERM, [](int) { g_stop = 1; });
  std::signal(SIGINT, [](int) { g_stop = 1; });
  tunefarm::farm_net::CommonDaemonFlags common;
  tunefarm::tuner::DaemonOptions options;
  options.records = "./tunefarm.db";
  std::string metrics_address, dashboard_address;
  std::vector<std::string> dashboard_hosts;
  CLI::App app{"tuner-daemon: takes tuning jobs over gRPC (tunefarm tune --daemon), keeps them in the records database and "
               "resumes unfinished ones when started again (token: --token-file or $TUNEFARM_TOKEN; it guards the job API "
               "and is sent to the tracker)",
               "tuner-daemon"};
  tunefarm::farm_net::AddCommonDaemonFlags(app, &common);
  app.add_option("--records", options.records,
                 "the records database of every job: a file (default ./tunefarm.db) or postgresql://USER@HOST[:PORT]/DB")
      ->type_name("DB");
  app.add_option("--name", options.name,
                 "this daemon's name in the records database: daemons sharing a PostgreSQL database need their own "
                 "(default tuner-daemon)");
  auto* tracker = app.add_option("--tracker", options.tracker, "measure through this farm (default: a job's own, else this machine)")
                      ->type_name("HOST:PORT");
  auto* key = app.add_option("--key", options.key, "the device key to lease on --tracker");
  tracker->needs(key);
  key->needs(tracker);
  tunefarm::AddIntFlag(app, "--max-running", &options.max_running, 1, 1024, "jobs tuned at the same time (default 2)");
  int job_memory_mib = 0;
  tunefarm::AddIntFlag(app, "--job-memory", &job_memory_mib, 64, 1 << 24,
                       "MiB the jobs' memory estimates may add up to at once; a job waits for room, and one that needs "
                       "more than this is refused (default: half of this machine's memory)");
  app.add_option("--metrics", metrics_address, "serve Prometheus metrics on GET /metrics there (off by default)")->type_name("HOST:PORT");
  app.add_option("--dashboard", dashboard_address, "serve the web dashboard over the records there (off by default)")
      ->type_name("HOST:PORT");
  app.add_option("--dashboard-allow-host", dashboard_hosts,
                 "a host name the dashboard may be reached by (repeatable; IP addresses, localhost and this machine's name "
                 "always are)")
      ->type_name("NAME")
      ->allow_extra_args(false);
  if (auto exit_code = tunefarm::ParseCommandLine(app, argc, argv)) return *exit_code;
  options.job_memory_bytes = int64_t(job_memory_mib) << 20;
  auto token = tunefarm::farm_net::LoadToken(common.token_file);
  if (!token.ok()) {
    std::fprintf(stderr, "tuner-daemon: %s\n", token.status().message().c_str());
    return 1;
  }
  auto tls = tunefarm::farm_net::LoadTlsFlags(common.tls_cert, common.tls_key, common.tls_ca);
  if (!tls.ok()) {
    std::fprintf(stderr, "tuner-daemon: %s\n", tls.status().message().c_str());
    return 1;
  }
  options.token = *token;
  options.tls = *tls;
  options.measure_child = tunefarm::rpc_server::DefaultMeasureChild();
  const char* tmp = std::getenv("TMPDIR");
  if (tmp) options.tmp_root = tmp;
  // Work directories a killed daemon or tune left behind (their pid is gone) go first.
  tunefarm::rpc_server::SweepStaleMeasureDirs(options.tmp_root);
  auto jobs = tunefarm::tuner::JobManager::Start(options);
  if (!jobs.ok()) {
    std::fprintf(stderr, "tuner-daemon: %s\n", jobs.status().message().c_str());
    return 1;
  }
  tunefarm::tuner::TunerDaemonService service(jobs->get());
  auto started = tunefarm::farm_net::StartFarmServer(
      {"tuner-daemon", common.listen, *tls, *token, tunefarm::farm_net::kDaemonMessageCap}, {{tunefarm::v1::TunerDaemon::service_full_name(), &service}});
  if (!started.ok()) {
    std::fprintf(stderr, "tuner-daemon: %s\n", started.status().message().c_str());
    return 1;
  }
#if TUNEFARM_HAVE_METRICS
  std::unique_ptr<tunefarm::farm_net::MetricsEndpoint> metrics;
  if (!metrics_address.empty()) {
    auto records_metrics = tunefarm::tuner::RecordsMetrics(options.records);
    if (!records_metrics.ok()) {
      std::fprintf(stderr, "tuner-daemon: %s\n", records_metrics.status().message().c_str());
      started->Shutdown();
      return 1;
    }
    auto endpoint = tunefarm::farm_net::MetricsEndpoint::Start(metrics_address, {DaemonMetrics(jobs->get()), *records_metrics});
    if (!endpoint.ok()) {
      std::fprintf(stderr, "tuner-daemon: %s\n", endpoint.status().message().c_str());
      started->Shutdown();
      return 1;
    }
    metrics = std::move(*endpoint);
    std::printf("tuner-daemon metrics on %s\n", metrics->address().c_str());
    std::fflush(stdout);
  }
#else
  if (!metrics_address.empty()) {
    std::fprintf(stderr, "tuner-daemon: --metrics: this build has no Prometheus metrics (prometheus-cpp was not found)\n");
    started->Shutdown();
    return 1;
  }
#endif
  std::unique_ptr<tunefarm::tuner::Dashboard> dashboard;
  if (!dashboard_address.empty()) {
    tunefarm::tuner::DashboardOptions d;
    d.records = {options.records};
    d.tracker = options.tracker;
    d.daemon = started->address;
    d.listen = dashboard_address;
    d.token = options.token;
    d.tls = options.tls;
    d.allowed_hosts = dashboard_hosts;
    auto started_dashboard = tunefarm::tuner::Dashboard::Start(d);
    if (!started_dashboard.ok()) {
      std::fprintf(stderr, "tuner-daemon: --dashboard: %s\n", started_dashboard.status().message().c_str());
      started->Shutdown();
      return 1;
    }
    dashboard = std::move(*started_dashboard);
    std::printf("tuner-daemon dashboard on http://%s/\n", dashboard->address().c_str());
    std::fflush(stdout);
  }
  while (!g_stop) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  std::printf("tuner-daemon: stopping; unfinished jobs resume when it starts again on %s\n",
              tunefarm::tuner::DisplayRecordsLocation(options.records).c_str());
  std::fflush(stdout);
#if TUNEFARM_HAVE_METRICS
  metrics.reset();  // it reads the job list
#endif
  dashboard.reset();
  started->Shutdown();
  // Every job stops after its batch in flight; a job stuck longer than this (a hostile model in
  // task extraction) must not keep the daemon alive: its trials are committed one by one, and
  // unfinished jobs resume at the next start.
  std::promise<void> stopped;
  auto done = stopped.get_future();
  std::thread stopper([&] {
    jobs->reset();
    stopped.set_value();
  });
  if (done.wait_for(std::chrono::seconds(kShutdownLimitSeconds)) != std::future_status::ready) {
    std::printf("tuner-daemon: jobs did not stop within %d s; exiting anyway (unfinished jobs resume at the next start)\n",
                kShutdownLimitSeconds);
    std::fflush(stdout);
    std::_Exit(1);
  }
  stopper.join();
  return 0;
}
