#include "tunefarm/runtime/safe_file.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

namespace tunefarm {
namespace {

std::string Errno(int err) { return std::strerror(err); }

Status RefuseKind(const std::string& what, const std::string& path, mode_t mode) {
  return Status::InvalidArgument(what + " " + path + " is " + FileKindName(mode) + ", not a regular file");
}

// Opens relative beneath dirfd with no symlink anywhere on the way; -1 and errno on failure.
int OpenNoSymlinks(int dirfd, const std::string& relative, BeneathResolver resolver) {
#ifdef SYS_openat2
  if (resolver == BeneathResolver::kBest) {
    struct open_how how {};
    how.flags = O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC;
    how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
    const int64_t fd = syscall(SYS_openat2, dirfd, relative.c_str(), &how, sizeof(how));
    if (fd >= 0 || (errno != ENOSYS && errno != EPERM)) return int(fd);  // EPERM: a seccomp filter
  }
#endif
  // The walk: each directory component opened O_NOFOLLOW|O_DIRECTORY beneath the last, the file
  // O_NOFOLLOW. ".." and absolute paths never get here (callers refuse them lexically), but an
  // empty or "." component is skipped and ".." refused again for safety.
  std::vector<std::string> parts;
  size_t start = 0;
  while (start <= relative.size()) {
    const size_t slash = relative.find('/', start);
    const std::string part = relative.substr(start, slash == std::string::npos ? std::string::npos : slash - start);
    if (part == "..") {
      errno = EXDEV;
      return -1;
    }
    if (!part.empty() && part != ".") parts.push_back(part);
    if (slash == std::string::npos) break;
    start = slash + 1;
  }
  if (parts.empty()) {
    errno = EISDIR;
    return -1;
  }
  int current = dirfd;
  for (size_t i = 0; i < parts.size(); ++i) {
    const bool last = i + 1 == parts.size();
    const int flags = O_NOFOLLOW | O_CLOEXEC | (last ? O_RDONLY | O_NONBLOCK | O_NOCTTY : O_PATH | O_DIRECTORY);
    const int next = openat(current, parts[i].c_str(), flags);
    const int err = errno;
    if (current != dirfd) close(current);
    if (next < 0) {
      errno = err == ENOTDIR && !last ? ELOOP : err;  // a symlinked directory fails O_DIRECTORY|O_NOFOLLOW
      return -1;
    }
    current = next;
  }
  return current;
}

}  // namespace

const char* FileKindName(mode_t mode) {
  if (S_ISREG(mode)) return "a regular file";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISLNK(mode)) return "a symbolic link";
  return "not a regular file";
}

OpenedFile& OpenedFile::operator=(OpenedFile&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) close(fd_);
    fd_ = o.fd_;
    st_ = o.st_;
    path_ = std::move(o.path_);
    o.fd_ = -1;
  }
  return *this;
}

OpenedFile::~OpenedFile() {
  if (fd_ >= 0) close(fd_);
}

Result<OpenedFile> OpenRegularFile(const std::string& path, const std::string& what) {
  const int fd = open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) return Status::NotFound("cannot open " + what + " " + path + ": " + Errno(errno));
  struct stat st;
  if (fstat(fd, &st) != 0) {
    const int err = errno;
    close(fd);
    return Status::IOError("cannot inspect " + what + " " + path + ": " + Errno(err));
  }
  OpenedFile file(fd, st, path);
  if (!S_ISREG(st.st_mode)) return RefuseKind(what, path, st.st_mode);
  return file;
}

Result<OpenedFile> OpenBeneath(const std::string& dir, const std::string& relative, const std::string& what,
                               BeneathResolver resolver) {
  const std::string path = dir + "/" + relative;
  const int dirfd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dirfd < 0) return Status::NotFound("cannot open the folder of " + what + " " + dir + ": " + Errno(errno));
  struct stat dir_st;
  fstat(dirfd, &dir_st);
  const int fd = OpenNoSymlinks(dirfd, relative, resolver);
  const int err = errno;
  close(dirfd);
  if (fd < 0) {
    if (err == ELOOP || err == EXDEV) {
      return Status::InvalidArgument(what + ": " + path +
                                     " goes through a symbolic link or leaves its folder: tunefarm reads only files "
                                     "inside the model's folder and follows no link there");
    }
    return Status::NotFound("cannot open " + what + " " + path + ": " + Errno(err));
  }
  struct stat st;
  if (fstat(fd, &st) != 0) {
    const int e = errno;
    close(fd);
    return Status::IOError("cannot inspect " + what + " " + path + ": " + Errno(e));
  }
  OpenedFile file(fd, st, path);
  if (!S_ISREG(st.st_mode)) return RefuseKind(what, path, st.st_mode);
  // A hard link is the file itself: no path check can tell it from the folder's own files. One
  // whose owner is not the folder's, and which that owner could not read, someone else put there.
  if (st.st_nlink > 1 && st.st_uid != dir_st.st_uid && (st.st_mode & S_IROTH) == 0) {
    return Status::InvalidArgument(what + ": " + path + " is a hard link to a file of user " +
                                   std::to_string(st.st_uid) + " that the folder's owner (user " +
                                   std::to_string(dir_st.st_uid) + ") could not read: refusing to read it");
  }
  return file;
}

Status ReadExactly(const OpenedFile& file, uint64_t offset, size_t length, char* out, const std::string& what) {
  size_t done = 0;
  while (done < length) {
    const ssize_t n = pread(file.fd(), out + done, length - done, off_t(offset + done));
    if (n < 0) {
      if (errno == EINTR) continue;
      return Status::IOError("cannot read " + what + " " + file.path() + ": " + Errno(errno));
    }
    if (n == 0) {
      return Status::IOError("cannot read " + what + " " + file.path() + ": it ends after " +
                             std::to_string(offset + done) + " bytes (it changed while being read?)");
    }
    done += size_t(n);
  }
  return Status::OK();
}

}  // namespace tunefarm
