// The parent side: a private directory, the child under a timeout, the outcome collected.
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <thread>

#include "rpc_server/measure/work_dir.h"
#include "tunefarm/rpc_server/measurement.h"
#include "tunefarm/runtime/atomic_file.h"

namespace tunefarm::rpc_server {
namespace {

bool WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), std::streamsize(bytes.size()));
  return bool(out);
}

// The file's bytes, or none when the child left no such file (it was killed first).
std::string ReadIfPresent(const std::string& path) { return ReadFile(path).value_or(""); }

constexpr const char* kDirPrefix = "tunefarm-measure-";
// How long a GPU child may take to open its device before the kernel's own timeout starts.
constexpr std::chrono::seconds kDeviceWarmUpLimit{60};

// Removes the private directory and whatever the kernel left in it (remove_all does not follow
// symbolic links out of it).
void RemoveDir(const std::string& dir) {
  std::error_code ignored;
  std::filesystem::remove_all(dir, ignored);
}

// The child's whole environment: what loading and sanitizers need, nothing of the server's
// (its farm token above all). HOME and TMPDIR point into the private directory.
std::vector<std::string> ChildEnvironment(const std::string& dir, const std::string& tmp_root) {
  std::vector<std::string> env = {"HOME=" + dir, "TMPDIR=" + dir, "CUDA_CACHE_PATH=" + tmp_root + "/cuda-cache"};
  for (const char* name : {"PATH", "LD_LIBRARY_PATH", "LANG", "LC_ALL", "TZ", "QEMU_LD_PREFIX", "ASAN_OPTIONS",
                           "UBSAN_OPTIONS", "LSAN_OPTIONS", "CUDA_VISIBLE_DEVICES", "TUNEFARM_LIBCUDA"}) {
    if (const char* value = std::getenv(name)) env.push_back(std::string(name) + "=" + value);
  }
  return env;
}

MeasureOutcome Fail(OutcomeKind kind, const std::string& message, int signal = 0) {
  MeasureOutcome o;
  o.kind = kind;
  o.message = message;
  o.signal = signal;
  return o;
}

}  // namespace

Result<std::string> PrepareWorkDir(const std::string& tmp_root, const std::string& library, const MeasureSpec& spec,
                                   MeasureOutcome* refused) {
  // Everything checkable without running anything is checked here, so a hostile request costs
  // neither a process nor a file.
  if (Status bad = ValidateSpec(spec, library.size(), spec.timing.memory_limit_bytes); !bad.ok()) {
    *refused = Fail(OutcomeKind::kBadRequest, bad.message());
    return bad;
  }
  if (Status wrong = spec.gpu.enabled ? CheckPtx(library, spec.symbol) : CheckLibraryArchitecture(library);
      !wrong.ok()) {
    *refused = Fail(OutcomeKind::kCompile, wrong.message());
    return wrong;
  }
  // The server's pid is in the name, so a later server can tell a dead one's leftovers (SweepStale).
  std::string templ = tmp_root + "/" + kDirPrefix + std::to_string(getpid()) + "-XXXXXX";
  if (!mkdtemp(templ.data())) {
    *refused = Fail(OutcomeKind::kRuntimeCrash, std::string("cannot create a work directory: ") + std::strerror(errno));
    return Status::IOError(refused->message);
  }
  const std::string dir = templ;
  chmod(dir.c_str(), 0700);
  if (!WriteFile(dir + "/kernel.so", library) || !WriteFile(dir + "/spec.pb", SerializeSpec(spec))) {
    RemoveDir(dir);
    *refused = Fail(OutcomeKind::kRuntimeCrash, "cannot write the work directory " + dir);
    return Status::IOError(refused->message);
  }
  return dir;
}

MeasureOutcome OutcomeOfChild(const std::string& dir, int status, bool timed_out, int timeout_ms,
                              const std::string& log_path) {
  if (timed_out) {
    return Fail(OutcomeKind::kTimeout, "the measurement exceeded its timeout of " + std::to_string(timeout_ms) + " ms");
  }
  if (WIFSIGNALED(status) && access((dir + "/loaded").c_str(), F_OK) != 0) {
    int sig = WTERMSIG(status);
    return Fail(OutcomeKind::kCompile,
                std::string("the kernel library could not be loaded: the loader died with signal ") +
                    std::to_string(sig) + " (" + strsignal(sig) + ")",
                sig);
  }
  if (WIFSIGNALED(status)) {
    int sig = WTERMSIG(status);
    return Fail(OutcomeKind::kRuntimeCrash,
                std::string("the kernel crashed with signal ") + std::to_string(sig) + " (" + strsignal(sig) + ")",
                sig);
  }
  auto parsed = ParseOutcome(ReadIfPresent(dir + "/outcome.pb"));
  if (parsed.ok()) return *parsed;
  std::string log = ReadIfPresent(log_path).substr(0, 512);
  return Fail(OutcomeKind::kRuntimeCrash, "the measurement exited with status " + std::to_string(WEXITSTATUS(status)) +
                                              " and no result" + (log.empty() ? "" : ": " + log));
}

Result<pid_t> SpawnMeasureChild(std::vector<std::string> argv_s, const std::string& dir, const std::string& log_path,
                                const std::vector<std::pair<int, int>>& fds, const std::string& tmp_root) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  for (const auto& [from, to] : fds) posix_spawn_file_actions_adddup2(&actions, from, to);
  posix_spawn_file_actions_addchdir_np(&actions, dir.c_str());
  // Its own session and process group: a timeout or the end of the measurement kills the child
  // and every process it started.
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSID);
  std::vector<std::string> env_s = ChildEnvironment(dir, tmp_root);
  std::vector<char*> envp;
  envp.reserve(env_s.size() + 1);
  for (auto& e : env_s) envp.push_back(e.data());
  envp.push_back(nullptr);
  const std::string child_binary = argv_s[0];
  std::vector<char*> argv;
  argv.reserve(argv_s.size() + 1);
  for (auto& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = -1;
  int rc = posix_spawnp(&pid, child_binary.c_str(), &actions, &attr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) return Status::FailedPrecondition("cannot start " + child_binary + ": " + std::strerror(rc));
  return pid;
}

MeasureOutcome MeasureIsolated(const std::vector<std::string>& child_command, const std::string& tmp_root,
                               const std::string& library, const MeasureSpec& spec) {
  MeasureOutcome refused;
  Result<std::string> prepared = PrepareWorkDir(tmp_root, library, spec, &refused);
  if (!prepared.ok()) return refused;
  const std::string dir = *prepared;
  std::vector<std::string> argv = child_command;
  argv.push_back(dir);
  Result<pid_t> spawned = SpawnMeasureChild(argv, dir, dir + "/child.log", {}, tmp_root);
  if (!spawned.ok()) {
    RemoveDir(dir);
    return Fail(OutcomeKind::kRuntimeCrash, spawned.status().message());
  }
  const pid_t pid = *spawned;
  // Wait with the deadline: short sleeps first (most kernels take milliseconds), backing off. A
  // GPU child opens the device first (cuInit and a context: 0.1-2 s, more on a first JIT), which
  // is not the kernel's time: its clock starts when the child writes device_ready, within
  // kDeviceWarmUpLimit.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(spec.timing.timeout_ms);
  bool awaiting_device = spec.gpu.enabled;
  if (awaiting_device) deadline = std::chrono::steady_clock::now() + kDeviceWarmUpLimit;
  int status = 0;
  bool timed_out = false;
  auto nap = std::chrono::microseconds(50);
  while (true) {
    pid_t done = waitpid(pid, &status, WNOHANG);
    if (done == pid) break;
    if (awaiting_device && access((dir + "/device_ready").c_str(), F_OK) == 0) {
      awaiting_device = false;
      deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(spec.timing.timeout_ms);
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      kill(-pid, SIGKILL);
      waitpid(pid, &status, 0);
      timed_out = true;
      break;
    }
    std::this_thread::sleep_for(nap);
    nap = std::min(nap * 2, std::chrono::microseconds(2000));
  }
  // Whatever the kernel started (a forked sleeper) dies with the measurement.
  kill(-pid, SIGKILL);
  MeasureOutcome outcome = timed_out && awaiting_device
                               ? Fail(OutcomeKind::kRuntimeCrash, "the GPU could not be opened within " +
                                                                      std::to_string(kDeviceWarmUpLimit.count()) + " s")
                               : OutcomeOfChild(dir, status, timed_out, spec.timing.timeout_ms, dir + "/child.log");
  RemoveDir(dir);
  return outcome;
}

void RemoveWorkDir(const std::string& dir) { RemoveDir(dir); }

int SweepStaleMeasureDirs(const std::string& tmp_root) {
  DIR* d = opendir(tmp_root.c_str());
  if (!d) return 0;
  int removed = 0;
  const std::string prefix = kDirPrefix;
  while (dirent* e = readdir(d)) {
    const std::string name = e->d_name;
    if (name.rfind(prefix, 0) != 0) continue;
    const std::string path = tmp_root + "/" + name;
    struct stat st;
    if (lstat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid()) continue;
    // "tunefarm-measure-<pid>-XXXXXX": stale when <pid> is gone. The older "tunefarm-measure-XXXXXX"
    // names carry no pid: stale after an hour (no measurement runs that long).
    const std::string rest = name.substr(prefix.size());
    const size_t dash = rest.find('-');
    bool stale;
    if (dash != std::string::npos && dash > 0 && rest.find_first_not_of("0123456789") == dash) {
      const pid_t owner = pid_t(std::atol(rest.substr(0, dash).c_str()));
      stale = owner != getpid() && kill(owner, 0) != 0 && errno == ESRCH;
    } else {
      stale = std::time(nullptr) - st.st_mtime > 3600;
    }
    if (!stale) continue;
    RemoveDir(path);
    ++removed;
  }
  closedir(d);
  return removed;
}

std::string DefaultMeasureChild() {
  char buf[4096];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  std::string self = n > 0 ? std::string(buf, size_t(n)) : "./program";
  return self.substr(0, self.rfind('/')) + "/tunefarm-measure-child";
}

}  // namespace tunefarm::rpc_server
