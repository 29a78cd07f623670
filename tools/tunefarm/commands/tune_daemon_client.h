// `tunefarm tune --daemon HOST:PORT`: submits the tuning job to a tuner-daemon and streams its
// progress until the job ends. Ctrl-C leaves the job running on the daemon.
#ifndef TUNEFARM_TOOLS_TUNEFARM_COMMANDS_TUNE_DAEMON_CLIENT_H_
#define TUNEFARM_TOOLS_TUNEFARM_COMMANDS_TUNE_DAEMON_CLIENT_H_

#include <string>

#include "tools/tunefarm/command_table.h"
#include "tunefarm/service/auth.h"
#include "tunefarm/tuner/tuning_job.h"
#include "tunefarm/v1/tuner.grpc.pb.h"

namespace tunefarm::cli {

// Exit code: 0 done, 1 failed or unreachable, 130 cancelled.
// Follows a job's WatchJob stream, printing each new progress line, until the job ends; *last gets
// the job as the final event described it.
grpc::Status StreamJobProgress(v1::TunerDaemon::Stub& stub, const std::string& token, int64_t id, v1::TuningJob* last);

// Submits `spec` to the tuner-daemon at `daemon` (with the farm token and, when given, mutual TLS)
// and follows the job to its end.
int TuneThroughDaemon(const std::string& daemon, const std::string& token_file, const service::TlsFiles& tls,
                      const tuner::TuningJobSpec& spec);

}  // namespace tunefarm::cli

#endif  // TUNEFARM_TOOLS_TUNEFARM_COMMANDS_TUNE_DAEMON_CLIENT_H_
