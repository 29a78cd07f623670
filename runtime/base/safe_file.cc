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

// How a file opened in a directory is named in messages: "w.bin" in ".", else "DIR/w.bin".
std::string Joined(const std::string& dir, const std::string& name) { return dir == "." ? name : dir + "/" + name; }

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
    int err = errno;
    if (next < 0 && err == ENOTDIR && !last) {
      // O_DIRECTORY|O_NOFOLLOW fails alike on a symlinked directory and on a file: tell them apart.
      struct stat st;
      if (fstatat(current, parts[i].c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode)) err = ELOOP;
    }
    if (current != dirfd) close(current);
    if (next < 0) {
      errno = err;
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

namespace {

// The file open at fd (named `path` in messages): fstat'ed on that descriptor and kept, or the
// descriptor closed and the error returned.
Result<OpenedFile> Inspect(int fd, const std::string& path, const std::string& what) {
  struct stat st;
  if (fstat(fd, &st) != 0) {
    const int err = errno;
    close(fd);
    return Status::IOError("cannot inspect " + what + " " + path + ": " + Errno(err));
  }
  return OpenedFile(fd, st, path);
}

Result<OpenedFile> RegularOnly(Result<OpenedFile> file, const std::string& what) {
  if (file.ok() && !S_ISREG(file->stat().st_mode)) return RefuseKind(what, file->path(), file->stat().st_mode);
  return file;
}

}  // namespace

Result<OpenedFile> OpenRegularFile(const std::string& path, const std::string& what) {
  const int fd = open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) return Status::NotFound("cannot open " + what + " " + path + ": " + Errno(errno));
  return RegularOnly(Inspect(fd, path, what), what);
}

Result<OpenedFile> OpenDirectory(const std::string& path, const std::string& what) {
  const int fd = open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return Status::NotFound("cannot open " + path + ", the folder of " + what + ": " + Errno(errno));
  return Inspect(fd, path, what);
}

Result<OpenedFile> OpenRegularFileIn(const OpenedFile& dir, const std::string& name, const std::string& what) {
  const std::string path = Joined(dir.path(), name);
  const int fd = openat(dir.fd(), name.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) return Status::NotFound("cannot open " + what + " " + path + ": " + Errno(errno));
  return RegularOnly(Inspect(fd, path, what), what);
}

Result<OpenedFile> OpenBeneath(const OpenedFile& dir, const std::string& relative, const std::string& what,
                               BeneathResolver resolver) {
  const std::string path = Joined(dir.path(), relative);
  const int fd = OpenNoSymlinks(dir.fd(), relative, resolver);
  if (fd < 0) {
    const int err = errno;
    if (err == ELOOP || err == EXDEV) {
      return Status::InvalidArgument(what + ": " + path +
                                     " goes through a symbolic link or leaves its folder: tunefarm reads only files "
                                     "inside the model's folder and follows no link there");
    }
    if (err == ENOTDIR) {
      return Status::NotFound("cannot open " + what + " " + path + ": a part of the path before its end is a file");
    }
    return Status::NotFound("cannot open " + what + " " + path + ": " + Errno(err));
  }
  TUNEFARM_ASSIGN_OR_RETURN(OpenedFile file, RegularOnly(Inspect(fd, path, what), what));
  const struct stat& st = file.stat();
  // A hard link is the file itself: no path check can tell it from the folder's own files. One
  // whose owner is not the folder's, and which that owner could not read, someone else put there.
  if (st.st_nlink > 1 && st.st_uid != dir.stat().st_uid && (st.st_mode & S_IROTH) == 0) {
    return Status::InvalidArgument(what + ": " + path + " is a hard link to a file of user " +
                                   std::to_string(st.st_uid) + " that the folder's owner (user " +
                                   std::to_string(dir.stat().st_uid) + ") could not read: refusing to read it");
  }
  return file;
}

Result<OpenedFile> OpenBeneath(const std::string& dir, const std::string& relative, const std::string& what,
                               BeneathResolver resolver) {
  TUNEFARM_ASSIGN_OR_RETURN(OpenedFile folder, OpenDirectory(dir, what));
  return OpenBeneath(folder, relative, what, resolver);
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
