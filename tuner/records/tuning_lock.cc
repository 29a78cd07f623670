#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "tunefarm/tuner/records.h"

namespace tunefarm::tuner {
namespace {

// What a tuning lock holds: empty (just made, or its holder died before writing) or the lines a
// holder writes, "pid N: ...". Anything else is a file the lock must not overwrite.
bool LooksLikeALock(const std::string& text) {
  return text.empty() || (text.rfind("pid ", 0) == 0 && text.size() < 4096 && text.find('\0') == std::string::npos);
}

std::string ReadHolder(int fd) {
  char buf[512] = {};
  const ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
  std::string who(buf, n > 0 ? size_t(n) : 0);
  while (!who.empty() && (who.back() == '\n' || who.back() == '\0')) who.pop_back();
  return who;
}

}  // namespace

Result<std::unique_ptr<TuningLock>> TuningLock::Acquire(const std::string& db_path, const std::string& holder) {
  const std::string path = db_path + ".tuning-lock";
  // O_NOFOLLOW: a symbolic link planted at the lock's name (pointing at someone else's file) is
  // refused, never followed and written through; O_NONBLOCK: a FIFO there cannot hang the open.
  const int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0644);
  if (fd < 0) {
    const int err = errno;
    if (err == ELOOP) {
      return Status::FailedPrecondition(
          "the tuning lock " + path +
          " is a symbolic link: refusing to follow it (remove it; tunefarm makes the lock itself)");
    }
    return Status::IOError("cannot create the tuning lock " + path + ": " + std::strerror(err));
  }
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    return Status::FailedPrecondition("the tuning lock " + path +
                                      " is not a regular file: refusing to use it (remove it)");
  }
  if (st.st_uid != geteuid()) {
    close(fd);
    return Status::FailedPrecondition("the tuning lock " + path + " belongs to user " + std::to_string(st.st_uid) +
                                      ", not to you: refusing to write into another user's file (if nobody is "
                                      "tuning this database, remove it)");
  }
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    const std::string who = ReadHolder(fd);
    close(fd);
    if (err != EWOULDBLOCK) return Status::IOError("cannot lock " + path + ": " + std::strerror(err));
    return Status::FailedPrecondition(
        "records database " + db_path + " is being tuned by another process (" +
        (who.empty() ? std::string("unknown") : who) +
        "); one tuner writes a database at a time: wait for it, or tune into another --records");
  }
  if (!LooksLikeALock(ReadHolder(fd))) {
    close(fd);
    return Status::FailedPrecondition(
        "the tuning lock " + path +
        " holds something other than a tuning lock: refusing to overwrite it (move it away)");
  }
  const std::string text = "pid " + std::to_string(getpid()) + ": " + holder + "\n";
  if (ftruncate(fd, 0) != 0 || pwrite(fd, text.data(), text.size(), 0) != ssize_t(text.size())) {
    // The lock holds either way; only the name shown to a second tuner is missing.
  }
  return std::unique_ptr<TuningLock>(new TuningLock(fd));
}

TuningLock::~TuningLock() {
  flock(fd_, LOCK_UN);
  close(fd_);
}

}  // namespace tunefarm::tuner
