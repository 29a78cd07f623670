// tunefarm run ARTIFACT [--input NAME=FILE.npy ...] [--output FILE.npy] [--repeat N] [--threads N] [--json]
// The same driver and flags as the board-side tunefarm-run (runtime/tools/run_tool.cc).
#include "tools/tunefarm/command_table.h"
#include "tunefarm/tools/run_tool.h"

namespace tunefarm::cli {

Action DeclareRun(CLI::App& app) {
  auto options = std::make_shared<runtime::RunToolOptions>();
  runtime::AddRunToolFlags(app, options.get());
  return [options] { return runtime::RunTool(*options); };
}

}  // namespace tunefarm::cli
