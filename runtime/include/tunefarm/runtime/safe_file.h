// Reading files that someone else may be changing while tunefarm reads them: a model's external
// data, `--input` .npy files, artifacts. A path is checked once, on the descriptor that is read,
// never by name and then opened again (the race where another user swaps the file for a symlink
// between the check and the open).
//
// Contract:
//  - OpenRegularFile(path, what): opens `path` read-only and non-blocking (a FIFO never blocks the
//    open), fstat's that descriptor and refuses anything but a regular file, naming its kind:
//    "WHAT PATH is a FIFO, not a regular file". A symlink given by the user is followed (it is the
//    user's own path); use OpenBeneath where the path comes from a file.
//  - OpenDirectory(path) holds a folder open; OpenRegularFileIn(dir, name) and OpenBeneath(dir, ...)
//    open relative to that descriptor, so a folder renamed or swapped for a symlink after it was
//    opened changes nothing (a model and its external data come from one folder).
//  - OpenBeneath(dir, relative, what): the regular file `relative` inside directory `dir`,
//    resolved without following a symlink at any component and never above `dir`:
//    openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS) where the kernel has it, else a walk of the
//    components each opened O_NOFOLLOW beneath the last. A file with other hard links whose owner
//    is not the directory's owner is refused too (a link the folder's owner did not make to a file
//    they could not read).
//  - ReadExactly(file, offset, length, out, what): reads exactly those bytes with pread (IOError if
//    the file is shorter, as when it shrank after the fstat). Large data is read in chunks into its
//    final buffer rather than mapped: a mapping of a file that another user truncates faults
//    (SIGBUS) when touched, a read only comes up short.
//  Every error names `what` and the path.
#ifndef TUNEFARM_RUNTIME_SAFE_FILE_H_
#define TUNEFARM_RUNTIME_SAFE_FILE_H_

#include <sys/stat.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>

#include "tunefarm/runtime/result.h"
#include "tunefarm/runtime/status.h"

namespace tunefarm {

// "a directory", "a FIFO", "a symbolic link", ...: what a file that is not a regular file is.
const char* FileKindName(mode_t mode);

class OpenedFile {
 public:
  OpenedFile() = default;
  OpenedFile(int fd, const struct stat& st, std::string path) : fd_(fd), st_(st), path_(std::move(path)) {}
  OpenedFile(OpenedFile&& o) noexcept : fd_(o.fd_), st_(o.st_), path_(std::move(o.path_)) { o.fd_ = -1; }
  OpenedFile& operator=(OpenedFile&& o) noexcept;
  OpenedFile(const OpenedFile&) = delete;
  OpenedFile& operator=(const OpenedFile&) = delete;
  ~OpenedFile();

  int fd() const { return fd_; }
  uint64_t size() const { return uint64_t(st_.st_size); }
  const struct stat& stat() const { return st_; }
  const std::string& path() const { return path_; }

 private:
  int fd_ = -1;
  struct stat st_ {};
  std::string path_;
};

Result<OpenedFile> OpenRegularFile(const std::string& path, const std::string& what);
// A directory held open (the caller's own path: links on the way to it are followed), so that the
// files beneath it are opened relative to this directory even if its path is swapped later.
Result<OpenedFile> OpenDirectory(const std::string& path, const std::string& what);
// `name` in an opened directory, opened as OpenRegularFile opens a path.
Result<OpenedFile> OpenRegularFileIn(const OpenedFile& dir, const std::string& name, const std::string& what);
// How OpenBeneath resolves: openat2 where the kernel has it (Linux 5.6; a container's seccomp
// profile may refuse it) else the walk, or the walk alone (what a test of the fallback asks for).
enum class BeneathResolver { kBest, kWalk };
Result<OpenedFile> OpenBeneath(const OpenedFile& dir, const std::string& relative, const std::string& what,
                               BeneathResolver resolver = BeneathResolver::kBest);
// The same below the directory at `dir`, opened for this one call.
Result<OpenedFile> OpenBeneath(const std::string& dir, const std::string& relative, const std::string& what,
                               BeneathResolver resolver = BeneathResolver::kBest);

Status ReadExactly(const OpenedFile& file, uint64_t offset, size_t length, char* out, const std::string& what);

}  // namespace tunefarm

#endif  // TUNEFARM_RUNTIME_SAFE_FILE_H_
