// What `tunefarm run` (and the board-side `tunefarm-run`, which has no compiler) does: load an
// artifact, feed inputs from .npy files (random when absent), run it repeat times, print the
// latency summary and the top-5 classes, optionally write the outputs. Returns the exit code:
// 0 ok, 1 a user error (printed to stderr as one line), 2 usage.
#ifndef TUNEFARM_TOOLS_RUN_TOOL_H_
#define TUNEFARM_TOOLS_RUN_TOOL_H_

#include <string>
#include <utility>
#include <vector>

#include "tunefarm/command_line/command_line.h"

namespace tunefarm::runtime {

struct RunToolOptions {
  std::string artifact;
  std::vector<std::pair<std::string, std::string>> inputs;  // NAME=FILE.npy
  std::string output;          // .npy path for output 0; outputs k > 0 go to PATH with _k before .npy
  int repeat = 10;             // timed runs after the first; 0: run once, no timing
  int threads = 0;             // 0: the thread count the artifact was compiled for (else 1)
  std::string device = "cpu";  // "cpu" or "cuda[:N]" (a device "cuda" artifact on GPU N, default 0)
  bool json = false;
  bool profile = false;                  // per-kernel time table
  std::string program = "tunefarm run";  // prefix of error messages
};

int RunTool(const RunToolOptions& options);

// Declares ARTIFACT and the flags (--input NAME=FILE.npy, --output F, --repeat N, --threads N,
// --device D, --json, --profile) on `app`, the one declaration both programs parse with.
void AddRunToolFlags(CLI::App& app, RunToolOptions* options);

}  // namespace tunefarm::runtime

#endif  // TUNEFARM_TOOLS_RUN_TOOL_H_
