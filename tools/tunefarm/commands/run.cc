// tunefarm run ARTIFACT [--input NAME=FILE.npy ...] [--output FILE.npy] [--repeat N] [--threads N] [--json]
// The same driver as the board-side tunefarm-run (runtime/tools/run_tool.cc).
#include "tools/tunefarm/command_table.h"
#include "tunefarm/tools/run_tool.h"

namespace tunefarm::cli {

int RunCommand(const Args& args) {
  std::vector<std::string> argv = args.positional;
  for (const auto& [flag, value] : args.flags) {
    argv.push_back(flag);
    if (flag != "--json" && flag != "--profile") argv.push_back(value);
  }
  runtime::RunToolOptions options;
  if (!runtime::ParseRunToolArgs(argv, &options)) return 2;
  return runtime::RunTool(options);
}

}  // namespace tunefarm::cli
