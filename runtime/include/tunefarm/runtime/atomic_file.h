// Whole files, in and out. WriteFileAtomically: every file tunefarm writes for the user (artifacts,
// run outputs, record exports) goes through here, so a crash, a full disk or a kill leaves either
// the old file or the whole new one, never a fragment. ReadFile: every whole file tunefarm reads
// (specs, PTX, cubins, .npy, kernel cases, tokens and certificates, /proc) goes through here.
//
// Contract:
//  - path must be absent or a regular file. A directory, device, FIFO, socket or symlink is refused
//    before anything is written ("X is a character device: tunefarm writes only regular files"):
//    writing through rename would replace the node itself (/dev/null as a regular file).
//  - The bytes go to a new file beside path (same directory, so rename is atomic), are fsync'ed,
//    renamed over path, and the directory is fsync'ed. On any failure the temporary file is removed
//    and path is untouched; the error names path and carries the OS's reason (strerror).
//  - New files get mode 0666 minus the umask; a replaced file keeps its mode.
//  - ReadFile: the file's bytes; NotFound "cannot open PATH: <strerror>" when it cannot be opened,
//    IOError "cannot read PATH" when a read fails. Callers that owe their users a message of their
//    own ("cannot read token file X") put it around this one's.
#ifndef TUNEFARM_RUNTIME_ATOMIC_FILE_H_
#define TUNEFARM_RUNTIME_ATOMIC_FILE_H_

#include <functional>
#include <ostream>
#include <string>
#include <string_view>

#include "tunefarm/runtime/result.h"
#include "tunefarm/runtime/status.h"

namespace tunefarm {

Status WriteFileAtomically(const std::string& path, std::string_view bytes);
// The same for output made a piece at a time (a records export of any size, never held whole):
// `produce` writes to the stream; its error, or a failed write, leaves path untouched.
Status WriteFileAtomically(const std::string& path, const std::function<Status(std::ostream&)>& produce);

// OK when path is absent or a regular file; otherwise the refusal WriteFileAtomically gives.
Status CheckWritableRegularPath(const std::string& path);

Result<std::string> ReadFile(const std::string& path);

}  // namespace tunefarm

#endif  // TUNEFARM_RUNTIME_ATOMIC_FILE_H_
