// tunefarm dashboard --records DB [--records DB2 ...] [--tracker HOST:PORT] [--daemon HOST:PORT]
//                    [--listen 127.0.0.1:8321] [--metrics HOST:PORT] [--token-file PATH] [--tls-* PEM]
// The web dashboard over records databases (docs/dashboard.md): serves until Ctrl-C. The first
// line printed is "tunefarm dashboard on http://HOST:PORT/".
#include <csignal>
#include <cstdlib>
#include <cstdio>
#include <thread>

#include "tools/tunefarm/command_table.h"
#include "tools/tunefarm/records_option.h"
#include "tunefarm/farm_net/metrics.h"
#include "tunefarm/tuner/dashboard.h"

namespace tunefarm::cli {
namespace {

volatile std::sig_atomic_t g_stop = 0;

}  // namespace

int DashboardCommand(const Args& args) {
  const char* usage =
      "usage: tunefarm dashboard [--records DB ...] [--tracker HOST:PORT] [--daemon HOST:PORT] [--listen 127.0.0.1:8321]\n"
      "                          [--metrics HOST:PORT] [--token-file PATH] [--tls-cert PEM --tls-key PEM --tls-ca PEM]";
  tuner::DashboardOptions options;
  std::string metrics_address;
  for (const auto& [flag, value] : args.flags) {
    if (flag == "--records") {
      options.records.push_back(value);
    } else if (flag == "--tracker") {
      options.tracker = value;
    } else if (flag == "--daemon") {
      options.daemon = value;
    } else if (flag == "--listen") {
      options.listen = value;
    } else if (flag == "--metrics") {
      metrics_address = value;
    } else if (flag != "--token-file" && flag != "--tls-cert" && flag != "--tls-key" && flag != "--tls-ca") {
      std::fprintf(stderr, "tunefarm dashboard: unknown flag %s\n%s\n", flag.c_str(), usage);
      return 2;
    }
  }
  if (!args.positional.empty()) {
    std::fprintf(stderr, "tunefarm dashboard: unexpected argument '%s' (databases go after --records)\n%s\n",
                 args.positional[0].c_str(), usage);
    return 2;
  }
  if (options.records.empty()) options.records.push_back(kDefaultRecordsDb);
  // Without a token (no --token-file, no $TUNEFARM_TOKEN) the dashboard is read-only.
  const bool has_token = args.Has("--token-file") || std::getenv("TUNEFARM_TOKEN") != nullptr;
  Result<std::string> token = has_token ? farm_net::LoadToken(args.Get("--token-file", "")) : Result<std::string>(std::string());
  if (!token.ok()) {
    std::fprintf(stderr, "tunefarm dashboard: %s\n", token.status().message().c_str());
    return 1;
  }
  auto tls = farm_net::LoadTlsFlags(args.Get("--tls-cert", ""), args.Get("--tls-key", ""), args.Get("--tls-ca", ""));
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
  std::unique_ptr<farm_net::MetricsEndpoint> metrics;
  if (!metrics_address.empty()) {
    auto records_metrics = tuner::RecordsMetrics(options.records[0]);
    if (!records_metrics.ok()) {
      std::fprintf(stderr, "tunefarm dashboard: %s\n", records_metrics.status().message().c_str());
      return 1;
    }
    auto endpoint = farm_net::MetricsEndpoint::Start(metrics_address, {(*dashboard)->metrics(), *records_metrics});
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
  return 0;
}

}  // namespace tunefarm::cli
