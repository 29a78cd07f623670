#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "tunefarm/tuner/records.h"

namespace tunefarm::tuner {

Result<std::unique_ptr<TuningLock>> TuningLock::Acquire(const std::string& db_path, const std::string& holder) {
  const std::string path = db_path + ".tuning-lock";
  const int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return Status::IOError("cannot create the tuning lock " + path + ": " + std::strerror(errno));
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    char buf[512] = {};
    const ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
    close(fd);
    if (err != EWOULDBLOCK) return Status::IOError("cannot lock " + path + ": " + std::strerror(err));
    std::string who(buf, n > 0 ? size_t(n) : 0);
    while (!who.empty() && (who.back() == '\n' || who.back() == '\0')) who.pop_back();
    return Status::FailedPrecondition("records database " + db_path + " is being tuned by another process (" +
                                      (who.empty() ? std::string("unknown") : who) +
                                      "); one tuner writes a database at a time: wait for it, or tune into another --records");
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
