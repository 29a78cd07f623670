// tunefarm-run: the board-side `tunefarm run` (runtime only: no LLVM, cross-builds for the boards).
#include "tunefarm/tools/run_tool.h"

int main(int argc, char** argv) {
  tunefarm::runtime::RunToolOptions options;
  options.program = "tunefarm-run";
  if (!tunefarm::runtime::ParseRunToolArgs(std::vector<std::string>(argv + 1, argv + argc), &options)) return 2;
  return tunefarm::runtime::RunTool(options);
}
