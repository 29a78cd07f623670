// `tunefarm tune --daemon HOST:PORT`: submits the tuning job to a tuner-daemon and streams its
// progress until the job ends. Ctrl-C leaves the job running on the daemon.
#ifndef TUNEFARM_TOOLS_TUNEFARM_COMMANDS_TUNE_DAEMON_CLIENT_H_
#define TUNEFARM_TOOLS_TUNEFARM_COMMANDS_TUNE_DAEMON_CLIENT_H_

#include <string>

#include "tools/tunefarm/command_table.h"
#include "tunefarm/compiler/input_shape.h"
#include "tunefarm/tuner/tuner.h"
#include "tunefarm/tuner/tuning_job.h"
#include "tunefarm/v1/tuner.grpc.pb.h"

namespace tunefarm::cli {

// Exit code: 0 done, 1 failed or unreachable, 130 cancelled.
// Follows a job's WatchJob stream, printing each new progress line, until the job ends; *last gets
// the job as the final event described it.
grpc::Status StreamJobProgress(v1::TunerDaemon::Stub& stub, const std::string& token, int64_t id, v1::TuningJob* last);

// What `tunefarm tune --daemon` sends besides the tuning options.
struct DaemonSubmission {
  std::string daemon, token_file, model, target, tracker, key;
  std::vector<compiler::InputShape> input_shapes;
};

int TuneThroughDaemon(const DaemonSubmission& job, const tuner::TuneOptions& options,
                      const tuner::ScheduleOptions& schedule);

// The job's spec as tuner-daemon takes it, and as the jobs table records a `tunefarm tune` run.
tuner::TuningJobSpec TuningJobSpecOf(const DaemonSubmission& job, const tuner::TuneOptions& options,
                                     const tuner::ScheduleOptions& schedule);

}  // namespace tunefarm::cli

#endif  // TUNEFARM_TOOLS_TUNEFARM_COMMANDS_TUNE_DAEMON_CLIENT_H_
