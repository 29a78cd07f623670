// The `tunefarm` subcommands: one table (name, one-line help, declaration), the subcommands of the
// CLI11 app in main.cc; `tunefarm help` lists them and `tunefarm COMMAND --help` shows a command's
// flags. Each command lives in commands/<name>_command.cc: it declares its positionals and flags
// once on the app it is given (CLI11 makes the usage, the help and the parse errors from that) and returns the
// action that runs once they parsed.
#ifndef TUNEFARM_TOOLS_TUNEFARM_COMMAND_TABLE_H_
#define TUNEFARM_TOOLS_TUNEFARM_COMMAND_TABLE_H_

#include <functional>
#include <vector>

#include "tunefarm/command_line/command_line.h"

namespace tunefarm::cli {

// Runs the command with the parsed flags; returns the process exit code (0 ok, 1 the work failed,
// 2 the command line is wrong, 130 interrupted) after printing one clear message on an error.
using Action = std::function<int()>;

struct Command {
  const char* name;
  const char* help;
  Action (*declare)(CLI::App& app);
};

const std::vector<Command>& Commands();

Action DeclareTasks(CLI::App& app);
Action DeclareTune(CLI::App& app);
Action DeclareCompile(CLI::App& app);
Action DeclareRun(CLI::App& app);
Action DeclareRecords(CLI::App& app);
Action DeclareTracker(CLI::App& app);
Action DeclareJobs(CLI::App& app);
Action DeclareDashboard(CLI::App& app);
Action DeclareOps(CLI::App& app);

}  // namespace tunefarm::cli

#endif  // TUNEFARM_TOOLS_TUNEFARM_COMMAND_TABLE_H_
