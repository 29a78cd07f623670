// tunefarm: the command-line interface (TVMC habits). `tunefarm help` lists the commands.
#include <cstdio>
#include <cstring>
#include <string>

#include "tools/tunefarm/command_table.h"

namespace tunefarm::cli {

bool Args::Has(const std::string& flag) const {
  for (const auto& [name, value] : flags) {
    if (name == flag) return true;
  }
  return false;
}

std::string Args::Get(const std::string& flag, const std::string& def) const {
  for (const auto& [name, value] : flags) {
    if (name == flag) return value;
  }
  return def;
}

const std::vector<Command>& Commands() {
  static const std::vector<Command> kCommands = {
      {"tune", "tunefarm tune MODEL --target T [--trials N | --total-trials N [--scheduler gradient|round-robin]] "
               "[--tuner xgb|ga|random|grid] [--early-stopping N] [--time-limit S] [--records DB] "
               "[--local | --tracker HOST:PORT --key KEY] [--threads N] [--daemon HOST:PORT]",
       "tune every task of a model; every trial goes to the records database (run again to resume)", &TuneCommand,
       {"--local", "--no-transfer"}},
      {"dashboard", "tunefarm dashboard [--records DB ...] [--tracker HOST:PORT] [--daemon HOST:PORT] [--listen 127.0.0.1:8321] "
                    "[--metrics HOST:PORT] [--token-file PATH]",
       "the web dashboard over the tuning records: jobs, farm, task tables, charts (docs/dashboard.md)", &DashboardCommand, {}},
      {"jobs", "tunefarm jobs list|watch|cancel --daemon HOST:PORT [JOB_ID] [--token-file PATH] [--json]",
       "list, follow or cancel the tuning jobs of a tuner-daemon", &JobsCommand, {"--json"}},
      {"ops", "tunefarm ops [--markdown]", "list the ONNX operators tunefarm compiles", &OpsCommand, {"--markdown"}},
      {"tasks", "tunefarm tasks MODEL [--target T] [--opt-level 0-3] [--json]",
       "list the tunable tasks (conv2d, depthwise, dense workloads) of a model", &TasksCommand, {"--json"}},
      {"compile", "tunefarm compile MODEL --target T [--records DB|none] [--opt-level 0-3] -o OUT",
       "compile a model (ONNX file or zoo name) into one deployable artifact", &CompileCommand, {}},
      {"run", "tunefarm run ARTIFACT [--input NAME=FILE.npy ...] [--output FILE.npy] [--repeat N] [--threads N] [--json] [--profile]",
       "run a compiled artifact: latency summary, top-5 classes, outputs as .npy", &RunCommand, {"--json", "--profile"}},
      {"records", "tunefarm records list|best|stats|export|import [--records DB] [--workload KEY] [--target T] [--json]",
       "inspect the records database; move trials between machines as JSON lines", &RecordsCommand, {"--json"}},
      {"tracker", "tunefarm tracker status --tracker HOST:PORT [--token-file PATH] [--tls-cert PEM --tls-key PEM --tls-ca PEM] [--json]",
       "the farm as the tracker sees it: servers, devices, leases, queues per key", &TrackerCommand, {"--json"}},
  };
  return kCommands;
}

namespace {

void PrintHelp() {
  std::printf("usage: tunefarm COMMAND [ARGS]\n\ncommands:\n");
  for (const Command& c : Commands()) std::printf("  %-10s %s\n             %s\n", c.name, c.help, c.usage);
}

}  // namespace
}  // namespace tunefarm::cli

int main(int argc, char** argv) {
  using namespace tunefarm::cli;  // NOLINT(google-build-using-namespace)
  if (argc < 2 || std::strcmp(argv[1], "help") == 0 || std::strcmp(argv[1], "--help") == 0) {
    PrintHelp();
    return argc < 2 ? 2 : 0;
  }
  for (const Command& c : Commands()) {
    if (c.name != std::string(argv[1])) continue;
    Args args;
    for (int i = 2; i < argc; ++i) {
      std::string a = argv[i];
      if (a.rfind("--", 0) != 0 && a != "-o") {  // -o: TVMC's short form of --output
        args.positional.push_back(a);
        continue;
      }
      bool is_switch = false;
      for (const auto& s : c.switches) is_switch = is_switch || s == a;
      if (is_switch) {
        args.flags.emplace_back(a, "");
      } else if (i + 1 < argc) {
        args.flags.emplace_back(a, argv[++i]);
      } else {
        std::fprintf(stderr, "tunefarm %s: flag %s needs a value\nusage: %s\n", c.name, a.c_str(), c.usage);
        return 2;
      }
    }
    return c.handler(args);
  }
  std::fprintf(stderr, "tunefarm: unknown command '%s' (try: tunefarm help)\n", argv[1]);
  return 2;
}
