// tunefarm: the command-line interface (TVMC habits). `tunefarm help` lists the commands,
// `tunefarm COMMAND --help` a command's flags.
#include <sys/resource.h>

#include <csignal>
#include <cstdio>
#include <cstring>
#include <string>

#include "tools/tunefarm/command_table.h"

namespace tunefarm::cli {

const std::vector<Command>& Commands() {
  static const std::vector<Command> kCommands = {
      {"tune", "tune every task of a model; every trial goes to the records database (run again to resume)",
       &DeclareTune},
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

namespace {

// Set when a write of this process went past the file size limit (ulimit -f). With a handler
// instead of the default action, the write fails with EFBIG and the command reports the file it
// was writing; main then names the limit, which that message (SQLite's "disk I/O error", say) does
// not. Tools tunefarm runs (the linker) get the default action back at exec, and a tool killed by
// SIGXFSZ is reported with the limit (object_emitter.cc).
volatile std::sig_atomic_t g_file_size_limit_hit = 0;
extern "C" void NoteFileSizeLimit(int) { g_file_size_limit_hit = 1; }

void ExplainFileSizeLimit() {
  if (!g_file_size_limit_hit) return;
  struct rlimit limit {};
  getrlimit(RLIMIT_FSIZE, &limit);
  std::fprintf(stderr,
               "tunefarm: a write went past this process's file size limit (ulimit -f: %llu bytes), which is why the "
               "command failed; raise the limit or write elsewhere\n",
               static_cast<unsigned long long>(limit.rlim_cur));
}

}  // namespace

int main(int argc, char** argv) {
  using tunefarm::cli::Action;
  using tunefarm::cli::Commands;
  std::signal(SIGXFSZ, NoteFileSizeLimit);
  CLI::App app{"tunefarm: tune, compile and run deep-learning models; a measurement farm of boards and GPU hosts",
               "tunefarm"};
  app.require_subcommand(1);
  std::vector<std::pair<CLI::App*, Action>> actions;
  for (const auto& c : Commands()) {
    CLI::App* sub = app.add_subcommand(c.name, c.help);
    actions.emplace_back(sub, c.declare(*sub));
  }
  app.footer(
      "`tunefarm COMMAND --help` shows a command's arguments and flags.");  // after: subcommands would inherit it
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
    if (!sub->parsed()) continue;
    const int code = action();
    if (code != 0) ExplainFileSizeLimit();
    return code;
  }
  return 2;  // require_subcommand(1) makes this unreachable
}
