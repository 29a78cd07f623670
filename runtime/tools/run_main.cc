// tunefarm-run: the board-side `tunefarm run` (runtime only: no LLVM, cross-builds for the boards).
#include "tunefarm/tools/run_tool.h"

int main(int argc, char** argv) {
  tunefarm::runtime::RunToolOptions options;
  options.program = "tunefarm-run";
  CLI::App app{"tunefarm-run: run a compiled artifact on this machine: latency summary, top-5 classes, outputs as .npy",
               "tunefarm-run"};
  tunefarm::runtime::AddRunToolFlags(app, &options);
  if (auto exit_code = tunefarm::ParseCommandLine(app, argc, argv)) return *exit_code;
  return tunefarm::runtime::RunTool(options);
}
