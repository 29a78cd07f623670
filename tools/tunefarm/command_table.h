// The `tunefarm` subcommands: one table (name, one-line help, handler), printed by
// `tunefarm help` (ninja's kTools[]). Each handler lives in commands/<name>.cc.
#ifndef TUNEFARM_TOOLS_TUNEFARM_COMMAND_TABLE_H_
#define TUNEFARM_TOOLS_TUNEFARM_COMMAND_TABLE_H_

#include <string>
#include <vector>

namespace tunefarm::cli {

// Parsed arguments: positionals in order, flags as name -> value ("" for switches).
struct Args {
  std::vector<std::string> positional;
  std::vector<std::pair<std::string, std::string>> flags;
  bool Has(const std::string& flag) const;
  std::string Get(const std::string& flag, const std::string& def) const;
};

// A handler returns the process exit code; it prints one clear message on a user error.
using Handler = int (*)(const Args& args);

struct Command {
  const char* name;
  const char* usage;
  const char* help;
  Handler handler;
  std::vector<std::string> switches;  // flags that take no value
};

const std::vector<Command>& Commands();

int TasksCommand(const Args& args);
int TuneCommand(const Args& args);
int CompileCommand(const Args& args);
int RunCommand(const Args& args);
int RecordsCommand(const Args& args);
int TrackerCommand(const Args& args);
int JobsCommand(const Args& args);
int DashboardCommand(const Args& args);
int OpsCommand(const Args& args);

}  // namespace tunefarm::cli

#endif  // TUNEFARM_TOOLS_TUNEFARM_COMMAND_TABLE_H_
