// What MeasureIsolated and MeasureWorker share (isolated_runner.cc): the checked private work
// directory of one kernel, the contained child process, and how a child's end becomes an outcome.
#ifndef TUNEFARM_RPC_SERVER_MEASURE_WORK_DIR_H_
#define TUNEFARM_RPC_SERVER_MEASURE_WORK_DIR_H_

#include <sys/types.h>

#include <string>
#include <utility>
#include <vector>

#include "tunefarm/rpc_server/measurement.h"

namespace tunefarm::rpc_server {

// Validates the spec (BAD_REQUEST) and the kernel (COMPILE: ELF for a CPU spec, PTX for a GPU
// one), then writes kernel.so and spec.pb into a fresh 0700 directory under tmp_root. On failure
// *refused is the outcome to report.
Result<std::string> PrepareWorkDir(const std::string& tmp_root, const std::string& library, const MeasureSpec& spec,
                                   MeasureOutcome* refused);

// Starts argv in its own session with the minimal environment, `dir` as its working directory,
// stdout and stderr into log_path, and the given (parent fd, child fd) pairs dup2'ed. The CUDA
// driver's JIT cache is shared by every child: CUDA_CACHE_PATH=<tmp_root>/cuda-cache (HOME is
// the private directory, so the driver's default cache would start empty each time).
Result<pid_t> SpawnMeasureChild(std::vector<std::string> argv, const std::string& dir, const std::string& log_path,
                                const std::vector<std::pair<int, int>>& fds, const std::string& tmp_root);

// The outcome of a kernel whose child ended with `status` (or was killed at its timeout): its
// outcome.pb, else the signal (COMPILE before the library loaded, RUNTIME_CRASH after).
MeasureOutcome OutcomeOfChild(const std::string& dir, int status, bool timed_out, int timeout_ms,
                              const std::string& log_path);

void RemoveWorkDir(const std::string& dir);

}  // namespace tunefarm::rpc_server

#endif  // TUNEFARM_RPC_SERVER_MEASURE_WORK_DIR_H_
