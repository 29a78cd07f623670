// tuner-daemon --listen HOST:PORT [--records DB] [--tracker HOST:PORT --key KEY] [--token-file PATH]
//              [--max-running N] [--tls-cert PEM --tls-key PEM --tls-ca PEM]
// Takes tuning jobs over gRPC (tunefarm.v1.TunerDaemon; `tunefarm tune --daemon HOST:PORT`),
// keeps them in the records database and resumes unfinished ones when started again. Jobs measure
// through the farm (--tracker/--key, or the job's own) or, without a tracker, on this machine.
// The first line printed is "tuner-daemon listening on HOST:PORT".
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <string>
#include <thread>

#include "tuner/daemon/tuner_daemon_service.h"

namespace {

const char* kUsage =
    "usage: tuner-daemon --listen HOST:PORT [--records DB] [--tracker HOST:PORT --key KEY] [--token-file PATH]\n"
    "                    [--max-running N] [--tls-cert PEM --tls-key PEM --tls-ca PEM]\n"
    "  (token: --token-file or $TUNEFARM_TOKEN; it guards the job API and is sent to the tracker)";
volatile std::sig_atomic_t g_stop = 0;


}  // namespace

int main(int argc, char** argv) {
  std::string listen, token_file, tls_cert, tls_key, tls_ca;
  tunefarm::tuner::DaemonOptions options;
  options.records = "./tunefarm.db";
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--help") {
      std::printf("%s\n", kUsage);
      return 0;
    }
    if (i + 1 >= argc) {
      std::fprintf(stderr, "tuner-daemon: %s needs a value\n%s\n", a.c_str(), kUsage);
      return 2;
    }
    std::string v = argv[++i];
    if (a == "--listen") listen = v;
    else if (a == "--records") options.records = v;
    else if (a == "--tracker") options.tracker = v;
    else if (a == "--key") options.key = v;
    else if (a == "--token-file") token_file = v;
    else if (a == "--max-running") options.max_running = std::atoi(v.c_str());
    else if (a == "--tls-cert") tls_cert = v;
    else if (a == "--tls-key") tls_key = v;
    else if (a == "--tls-ca") tls_ca = v;
    else {
      std::fprintf(stderr, "tuner-daemon: unknown flag %s\n%s\n", a.c_str(), kUsage);
      return 2;
    }
  }
  if (listen.empty() || options.max_running < 1 || options.tracker.empty() != options.key.empty()) {
    std::fprintf(stderr, "tuner-daemon: --listen is required, --tracker and --key go together, --max-running >= 1\n%s\n",
                 kUsage);
    return 2;
  }
  auto token = tunefarm::tracker::LoadToken(token_file);
  if (!token.ok()) {
    std::fprintf(stderr, "tuner-daemon: %s\n", token.status().message().c_str());
    return 1;
  }
  auto tls = tunefarm::tracker::LoadTlsFlags(tls_cert, tls_key, tls_ca);
  if (!tls.ok()) {
    std::fprintf(stderr, "tuner-daemon: %s\n", tls.status().message().c_str());
    return 1;
  }
  options.token = *token;
  options.tls = *tls;
  options.measure_child = tunefarm::rpc_server::DefaultMeasureChild();
  const char* tmp = std::getenv("TMPDIR");
  if (tmp) options.tmp_root = tmp;
  auto jobs = tunefarm::tuner::JobManager::Start(options);
  if (!jobs.ok()) {
    std::fprintf(stderr, "tuner-daemon: %s\n", jobs.status().message().c_str());
    return 1;
  }
  tunefarm::tuner::TunerDaemonService service(jobs->get(), *token);
  auto started = tunefarm::tracker::StartFarmServer("tuner-daemon", listen, *tls, {&service});
  if (!started.ok()) {
    std::fprintf(stderr, "tuner-daemon: %s\n", started.status().message().c_str());
    return 1;
  }
  std::signal(SIGTERM, [](int) { g_stop = 1; });
  std::signal(SIGINT, [](int) { g_stop = 1; });
  while (!g_stop) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  std::printf("tuner-daemon: stopping; unfinished jobs resume when it starts again on %s\n", options.records.c_str());
  std::fflush(stdout);
  started->server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1));
  jobs->reset();  // stops every job after its batch in flight
  return 0;
}
