// tunefarm dashboard --records DB [--records DB2 ...] [--tracker HOST:PORT] [--daemon HOST:PORT]
//                    [--listen 127.0.0.1:8321] [--metrics HOST:PORT] [--token-file PATH] [--tls-* PEM]
// The web dashboard over records databases (docs/dashboard.md): serves until Ctrl-C. The first
// line printed is "tunefarm dashboard on http://HOST:PORT/".
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "tools/tunefarm/command_table.h"
#include "tools/tunefarm/common_flags.h"
#include "tools/tunefarm/records_option.h"
#include "tunefarm/service/metrics.h"
#include "tunefarm/tuner/dashboard.h"

namespace tunefarm::cli {
namespace {

volatile std::sig_atomic_t g_stop = 0;

struct DashboardFlags {
  tuner::DashboardOptions options;
  std::string metrics_address;
  FarmClientFlags farm;
};

int Dashboard(DashboardFlags& f) {
  tuner::DashboardOptions& options = f.options;
  const std::string& metrics_address = f.metrics_address;
  if (options.records.empty()) options.records.push_back(kDefaultRecordsDb);
  // Without a token (no --token-file, no $TUNEFARM_TOKEN) the dashboard is read-only.
  const bool has_token = !f.farm.token_file.empty() || std::getenv("TUNEFARM_TOKEN") != nullptr;
  Result<std::string> token = has_token ? service::LoadToken(f.farm.token_file) : Result<std::string>(std::string());
  if (!token.ok()) {
    std::fprintf(stderr, "tunefarm dashboard: %s\n", token.status().message().c_str());
    return 1;
  }
  auto tls = service::LoadTlsFlags(f.farm.tls_cert, f.farm.tls_key, f.farm.tls_ca);
  if (!tls.ok()) {
    std::fprintf(stderr, "tunefarm dashboard: %s\n", tls.status().message().c_str());
    return 1;
  }
  options.token = *token;
  options.tls = *tls;
  // Before the address is announced: a SIGTERM right after it still stops the dashboard cleanly.
  std::signal(SIGTERM, [](int) { g_stop = 1; });
  std::signal(SIGINT, [](int) { g_stop = 1; });
  auto dashboard = tuner::Dashboard::Start(options);
  if (!dashboard.ok()) {
    std::fprintf(stderr, "tunefarm dashboard: %s\n", dashboard.status().message().c_str());
    return 1;
  }
  std::unique_ptr<service::MetricsEndpoint> metrics;
  if (!metrics_address.empty()) {
    auto records_metrics = tuner::RecordsMetrics(options.records[0]);
    if (!records_metrics.ok()) {
      std::fprintf(stderr, "tunefarm dashboard: %s\n", records_metrics.status().message().c_str());
      return 1;
    }
    auto endpoint = service::MetricsEndpoint::Start(metrics_address, {(*dashboard)->metrics(), *records_metrics});
    if (!endpoint.ok()) {
      std::fprintf(stderr, "tunefarm dashboard: %s\n", endpoint.status().message().c_str());
      return 1;
    }
    metrics = std::move(*endpoint);
  }
  std::printf("tunefarm dashboard on http://%s/\n", (*dashboard)->address().c_str());
  if (metrics) std::printf("tunefarm dashboard metrics on %s\n", metrics->address().c_str());
  if (options.token.empty()) std::printf("read-only: no farm token, so jobs cannot be cancelled from the page\n");
  std::fflush(stdout);
  while (!g_stop) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  // A request stuck in a slow records query must not hold the process past SIGTERM: the teardown
  // (which waits for the handlers in flight) gets 1.5 s, then the process leaves without them.
  std::thread([] {
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    std::fprintf(stderr,
                 "tunefarm dashboard: requests still running 1.5 s after the stop signal; leaving without them\n");
    std::_Exit(0);
  }).detach();
  return 0;
}

}  // namespace

Action DeclareDashboard(CLI::App& app) {
  auto f = std::make_shared<DashboardFlags>();
  app.add_option("--records", f->options.records,
                 "a records database to show (repeat for several; default ./tunefarm.db)")
      ->type_name("DB")
      ->allow_extra_args(false);
  app.add_option("--tracker", f->options.tracker, "show this rpc_tracker's farm")->type_name("HOST:PORT");
  app.add_option("--daemon", f->options.daemon, "cancel jobs through this tuner-daemon")->type_name("HOST:PORT");
  app.add_option("--listen", f->options.listen,
                 "where to serve the page (default 127.0.0.1:8321; port 0 picks a free one)")
      ->type_name("HOST:PORT");
  app.add_option("--allow-host", f->options.allowed_hosts,
                 "answer requests for this host name too (repeatable; IP addresses, localhost and this machine's name "
                 "always are; any other Host is refused: DNS rebinding)")
      ->type_name("NAME")
      ->allow_extra_args(false);
  app.add_option("--metrics", f->metrics_address, "serve Prometheus metrics on GET /metrics there (off by default)")
      ->type_name("HOST:PORT");
  AddFarmClientFlags(app, &f->farm, /*tls=*/true);
  return [f] { return Dashboard(*f); };
}

}  // namespace tunefarm::cli
