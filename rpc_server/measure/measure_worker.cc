// MeasureWorker (measurement.h): one long-lived measurement child, restarted when it must be.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "rpc_server/measure/work_dir.h"
#include "tunefarm/rpc_server/measurement.h"
#include "tunefarm/runtime/cuda_device.h"

namespace tunefarm::rpc_server {
namespace {

MeasureOutcome Fail(OutcomeKind kind, const std::string& message) {
  MeasureOutcome o;
  o.kind = kind;
  o.message = message;
  return o;
}

// Reads one '\n'-terminated line from fd within the deadline: 1 = got it, 0 = EOF, -1 = timeout.
int ReadLine(int fd, std::chrono::steady_clock::time_point deadline, std::string* line) {
  line->clear();
  while (true) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return -1;
    pollfd p{fd, POLLIN, 0};
    int rc = poll(&p, 1, int(std::min<int64_t>(left.count(), 1000)));
    if (rc < 0 && errno == EINTR) continue;
    if (rc <= 0) continue;
    char c;
    ssize_t n = read(fd, &c, 1);
    if (n == 0) return 0;
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      return 0;
    }
    if (c == '\n') return 1;
    line->push_back(c);
  }
}

}  // namespace

static std::string WorkerLogPath(const std::string& tmp_root) {
  return tmp_root + "/tunefarm-measure-worker-" + std::to_string(getpid()) + ".log";
}

MeasureWorker::~MeasureWorker() {
  Stop();
  unlink(WorkerLogPath(tmp_root_).c_str());
}

bool MeasureWorker::Start(std::string* error) {
  int requests[2], replies[2];
  if (pipe2(requests, O_CLOEXEC) != 0) {
    *error = std::string("pipe: ") + std::strerror(errno);
    return false;
  }
  if (pipe2(replies, O_CLOEXEC) != 0) {
    *error = std::string("pipe: ") + std::strerror(errno);
    close(requests[0]);
    close(requests[1]);
    return false;
  }
  std::vector<std::string> argv = child_command_;
  argv.push_back("--worker");
  // The worker's own directory is the root of its per-kernel ones: its log lives there.
  const std::string log = WorkerLogPath(tmp_root_);
  Result<pid_t> pid = SpawnMeasureChild(argv, tmp_root_, log, {{requests[0], 3}, {replies[1], 4}}, tmp_root_);
  close(requests[0]);
  close(replies[1]);
  if (!pid.ok()) {
    close(requests[1]);
    close(replies[0]);
    *error = pid.status().message();
    return false;
  }
  pid_ = *pid;
  to_child_ = requests[1];
  from_child_ = replies[0];
  ++starts_;
  return true;
}

void MeasureWorker::Stop() {
  if (pid_ > 0) {
    kill(-pid_, SIGKILL);
    int status = 0;
    waitpid(pid_, &status, 0);
  }
  if (to_child_ >= 0) close(to_child_);
  if (from_child_ >= 0) close(from_child_);
  pid_ = -1;
  to_child_ = from_child_ = -1;
}

MeasureOutcome MeasureWorker::Measure(const std::string& library, const MeasureSpec& spec) {
  MeasureOutcome refused;
  Result<std::string> prepared = PrepareWorkDir(tmp_root_, library, spec, &refused);
  if (!prepared.ok()) return refused;
  const std::string dir = *prepared;
  signal(SIGPIPE, SIG_IGN);  // a dead worker's pipe must not kill the server
  // A worker that died since its last kernel (killed from outside) is replaced before this one.
  int early = 0;
  if (pid_ > 0 && waitpid(pid_, &early, WNOHANG) == pid_) {
    pid_ = -1;
    Stop();
  }
  std::string error;
  const bool fresh = pid_ < 0;
  if (fresh && !Start(&error)) {
    RemoveWorkDir(dir);
    return Fail(OutcomeKind::kRuntimeCrash, error);
  }
  std::string reply;
  // A fresh worker on a GPU first opens the device (cuInit and a context: up to seconds); that
  // is not the kernel's time.
  if (fresh && spec.gpu.enabled) {
    const std::string warm = "warm " + std::to_string(spec.gpu.ordinal) + "\n";
    const bool ok = write(to_child_, warm.data(), warm.size()) == ssize_t(warm.size()) &&
                    ReadLine(from_child_, std::chrono::steady_clock::now() + std::chrono::seconds(60), &reply) == 1;
    if (!ok) {
      Stop();
      RemoveWorkDir(dir);
      return Fail(OutcomeKind::kRuntimeCrash, "the GPU measurement worker did not start (no answer within 60 s)");
    }
  }
  const std::string request = dir + "\n";
  const bool sent = write(to_child_, request.data(), request.size()) == ssize_t(request.size());
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(spec.timing.timeout_ms);
  const int got = sent ? ReadLine(from_child_, deadline, &reply) : 0;
  MeasureOutcome outcome;
  if (got == 1 && reply == "done") {
    outcome = OutcomeOfChild(dir, 0, false, spec.timing.timeout_ms, "");
    // A context an illegal address poisoned cannot measure again (the child exits by the same
    // test): the next kernel gets a new one.
    if (IsStickyCudaError(Status::Internal(outcome.message))) Stop();
  } else {
    // Timed out, or the worker died (or stopped answering): kill it and let its exit status tell.
    int status = 0;
    kill(-pid_, SIGKILL);
    waitpid(pid_, &status, 0);
    kill(-pid_, SIGKILL);  // whatever the kernel started dies with it
    pid_ = -1;
    Stop();
    outcome = OutcomeOfChild(dir, status, got == -1, spec.timing.timeout_ms, "");
  }
  RemoveWorkDir(dir);
  return outcome;
}

}  // namespace tunefarm::rpc_server
