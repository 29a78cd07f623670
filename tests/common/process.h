// Child processes for integration tests: start a real binary with a pipe on its stdout and stderr, read the
// line that announces its port, kill it (any signal), reap it.
#ifndef TUNEFARM_TESTS_COMMON_PROCESS_H_
#define TUNEFARM_TESTS_COMMON_PROCESS_H_

#include <sys/types.h>

#include <string>
#include <vector>

namespace tunefarm::testing {

class ChildProcess {
 public:
  ChildProcess() = default;
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  // argv[0] is the program path; env entries are added to the current environment.
  bool Start(const std::vector<std::string>& argv, const std::vector<std::string>& env = {});
  // The first stdout line containing `marker` within timeout_ms ("" on timeout or exit).
  std::string WaitForLine(const std::string& marker, int timeout_ms);
  // Everything it printed that no WaitForLine consumed, waiting up to timeout_ms for more.
  std::string Drain(int timeout_ms);
  void Kill(int signal);
  int Wait();  // exit status as waitpid reports it
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
  int out_fd_ = -1;
  std::string buffer_;
};

// "HOST:PORT" from a line ending in HOST:PORT.
std::string AddressFromLine(const std::string& line);

}  // namespace tunefarm::testing

#endif  // TUNEFARM_TESTS_COMMON_PROCESS_H_
