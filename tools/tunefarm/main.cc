// tunefarm: the command-line interface (TVMC habits). `tunefarm help` lists the commands,
// `tunefarm COMMAND --help` a command's flags.
#include <cstdio>
#include <csignal>
#include <cstring>
#include <string>

#include "tools/tunefarm/command_table.h"

namespace tunefarm::cli {

const std::vector<Command>& Commands() {
  static const std::vector<Command> kCommands = {
      {"tune", "tune every task of a model; every trial goes to the records database (run again to resume)", &DeclareTune},
      {"dashboard", "the web dashboard over the tuning records: jobs, farm, task tables, charts (docs/dashboard.md)",
       &DeclareDashboard},
      {"jobs", "list, follow or cancel the tuning jobs of a tuner-daemon", &DeclareJobs},
      {"ops", "list the ONNX operators tunefarm compiles", &DeclareOps},
      {"tasks", "list the tunable tasks (conv2d, depthwise, dense workloads) of a model", &DeclareTasks},
      {"compile", "compile a model (ONNX file or zoo name) into one deployable artifact", &DeclareCompile},
      {"run", "run a compiled artifact: latency summary, top-5 classes, outputs as .npy", &DeclareRun},
      {"records", "inspect the records database; move trials between machines as JSON lines", &DeclareRecords},
      {"tracker", "the farm as the tracker sees it: servers, devices, leases, queues per key", &DeclareTracker},
  };
  return kCommands;
}

}  // namespace tunefarm::cli

int main(int argc, char** argv) {
  using tunefarm::cli::Action;
  using tunefarm::cli::Commands;
  // Past a file size limit (ulimit -f) a write then fails with EFBIG and the command says which
  // file, instead of the process dying of SIGXFSZ without a word; tools it runs inherit this.
  std::signal(SIGXFSZ, SIG_IGN);
  CLI::App app{"tunefarm: tune, compile and run deep-learning models; a measurement farm of boards and GPU hosts", "tunefarm"};
  app.require_subcommand(1);
  std::vector<std::pair<CLI::App*, Action>> actions;
  for (const auto& c : Commands()) {
    CLI::App* sub = app.add_subcommand(c.name, c.help);
    actions.emplace_back(sub, c.declare(*sub));
  }
  app.footer("`tunefarm COMMAND --help` shows a command's arguments and flags.");  // after: subcommands would inherit it
  if (argc < 2 || std::strcmp(argv[1], "help") == 0) {
    std::printf("%s", app.help().c_str());
    return argc < 2 ? 2 : 0;
  }
  bool known = argv[1][0] == '-';  // flags (--help) are the app's to judge
  for (const auto& c : Commands()) known = known || std::strcmp(c.name, argv[1]) == 0;
  if (!known) {
    std::fprintf(stderr, "tunefarm: unknown command '%s' (tunefarm help lists them)\n", argv[1]);
    return 2;
  }
  if (auto exit_code = tunefarm::ParseCommandLine(app, argc, argv)) return *exit_code;
  for (auto& [sub, action] : actions) {
    if (sub->parsed()) return action();
  }
  return 2;  // require_subcommand(1) makes this unreachable
}
