#include "tunefarm/runtime/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <functional>
#include <ostream>
#include <random>
#include <streambuf>

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

namespace {

// Writes [data, data + n) to fd, adding to *written; 0, or the errno of the write that failed.
int WriteAll(int fd, const char* data, size_t n, uint64_t* written) {
  size_t done = 0;
  while (done < n) {
    const ssize_t k = write(fd, data + done, n - done);
    if (k < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    done += size_t(k);
    *written += uint64_t(k);
  }
  return 0;
}

// An ostream's buffer over a descriptor: 64 KiB at a time, the first failed write remembered.
class FdStreamBuf : public std::streambuf {
 public:
  explicit FdStreamBuf(int fd) : fd_(fd) { setp(buf_, buf_ + sizeof(buf_)); }
  int error() const { return error_; }
  uint64_t written() const { return written_; }

 protected:
  int overflow(int c) override {
    if (Flush() != 0) return traits_type::eof();
    if (c != traits_type::eof()) {
      *pptr() = char(c);
      pbump(1);
    }
    return traits_type::not_eof(c);
  }
  int sync() override { return Flush() == 0 ? 0 : -1; }

 private:
  int Flush() {
    if (error_ == 0) error_ = WriteAll(fd_, pbase(), size_t(pptr() - pbase()), &written_);
    setp(buf_, buf_ + sizeof(buf_));
    return error_;
  }
  int fd_;
  int error_ = 0;
  uint64_t written_ = 0;
  char buf_[1 << 16];
};

// A new file beside path (same directory, so the rename is atomic) that `produce` fills, fsync'ed
// and renamed over path; on any failure it is removed and path is untouched.
Status ReplaceAtomically(const std::string& path, const std::function<Status(int fd)>& produce) {
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
  auto give_up = [&](const Status& why) {
    close(fd);
    unlink(tmp.c_str());
    return why;
  };
  if (replacing && fchmod(fd, mode) != 0) return give_up(OsError("cannot keep its mode", path, errno));
  if (Status s = produce(fd); !s.ok()) return give_up(s);
  if (fsync(fd) != 0) return give_up(OsError("fsync failed", path, errno));
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

}  // namespace

Status WriteFileAtomically(const std::string& path, std::string_view bytes) {
  return ReplaceAtomically(path, [&](int fd) {
    uint64_t done = 0;
    if (const int err = WriteAll(fd, bytes.data(), bytes.size(), &done); err != 0) {
      return OsError("write failed after " + std::to_string(done) + " of " + std::to_string(bytes.size()) + " bytes",
                     path, err);
    }
    return Status::OK();
  });
}

Status WriteFileAtomically(const std::string& path, const std::function<Status(std::ostream&)>& produce) {
  return ReplaceAtomically(path, [&](int fd) {
    FdStreamBuf buffer(fd);
    std::ostream out(&buffer);
    Status s = produce(out);
    out.flush();
    if (buffer.error() != 0) {
      return OsError("write failed after " + std::to_string(buffer.written()) + " bytes", path, buffer.error());
    }
    return s;
  });
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
