#include "tunefarm/runtime/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <random>

#include "tunefarm/runtime/safe_file.h"

namespace tunefarm {
namespace {

Status OsError(const std::string& what, const std::string& path, int err) {
  return Status::IOError("cannot write " + path + ": " + what + ": " + std::strerror(err));
}

}  // namespace

Status CheckWritableRegularPath(const std::string& path) {
  if (path.empty()) return Status::InvalidArgument("no output path given");
  struct stat st;
  if (lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return Status::OK();
    return OsError("cannot inspect it", path, errno);
  }
  if (!S_ISREG(st.st_mode)) {
    return Status::InvalidArgument(path + " is " + FileKindName(st.st_mode) + ": tunefarm writes only regular files");
  }
  return Status::OK();
}

Status WriteFileAtomically(const std::string& path, std::string_view bytes) {
  TUNEFARM_RETURN_IF_ERROR(CheckWritableRegularPath(path));
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
  mode_t mode = 0666;
  struct stat st;
  const bool replacing = stat(path.c_str(), &st) == 0;
  if (replacing) mode = st.st_mode & 07777;
  std::string tmp;
  int fd = -1;
  std::random_device rd;
  for (int attempt = 0; attempt < 16 && fd < 0; ++attempt) {
    tmp = path + ".tmp" + std::to_string(getpid()) + "_" + std::to_string(rd() % 1000000);
    fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
    if (fd < 0 && errno != EEXIST) return OsError("cannot create a temporary file in " + dir, path, errno);
  }
  if (fd < 0) return OsError("cannot create a temporary file in " + dir, path, EEXIST);
  auto fail = [&](const std::string& what, int err) {
    close(fd);
    unlink(tmp.c_str());
    return OsError(what, path, err);
  };
  if (replacing && fchmod(fd, mode) != 0) return fail("cannot keep its mode", errno);
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return fail("write failed after " + std::to_string(done) + " of " + std::to_string(bytes.size()) + " bytes",
                  errno);
    }
    done += size_t(n);
  }
  if (fsync(fd) != 0) return fail("fsync failed", errno);
  if (close(fd) != 0) {
    const int err = errno;
    unlink(tmp.c_str());
    return OsError("close failed", path, err);
  }
  if (rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    unlink(tmp.c_str());
    return OsError("cannot rename the temporary file over it", path, err);
  }
  // The rename is durable once the directory is on disk; a failure here leaves the new file in place.
  const int dfd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    fsync(dfd);
    close(dfd);
  }
  return Status::OK();
}

Result<std::string> ReadFile(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Status::NotFound("cannot open " + path + ": " + std::strerror(errno));
  std::string bytes;
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = read(fd, buf, sizeof(buf));
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      close(fd);
      return Status::IOError("cannot read " + path + ": " + std::strerror(err));
    }
    bytes.append(buf, size_t(n));
  }
  close(fd);
  return bytes;
}

}  // namespace tunefarm
