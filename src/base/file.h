// The one way to read a small file that comes from outside the process (a kubeconfig, a token,
// a CA bundle, the namespace file): bounded in size and time, whatever the path names. And the
// one way to replace a file atomically (the status files, `leasehold install`).
#pragma once

#include <cstddef>
#include <string>

#include "base/status.h"

namespace leasehold {

// Size caps for the files the agent reads, in bytes. Each is far above what a real file holds
// and far below what could hurt a sidecar with a 64 MiB memory limit.
inline constexpr size_t kMaxTokenFileBytes = 16 << 10;     // projected JWTs are ~1 KiB
inline constexpr size_t kMaxCaFileBytes = 1 << 20;         // a CA bundle of a few hundred certs
inline constexpr size_t kMaxNamespaceFileBytes = 1 << 10;  // a namespace is at most 63 bytes
inline constexpr size_t kMaxKubeconfigBytes = 4 << 20;     // large multi-cluster kubeconfigs

// Reads the whole of `path`, following symlinks (service-account files are ..data/ links), if it
// is a regular file of at most `max_bytes`. Opens with O_NONBLOCK, so a FIFO or a device never
// blocks the open, checks fstat before reading anything, and reads at most max_bytes + 1 bytes,
// so a file that grows or lies about its size cannot make it allocate more.
// Errors (the message names the path):
//   kNotFound     it does not exist: "cannot read PATH: No such file or directory"
//   kBadConfig    not a regular file: "PATH is a FIFO, not a regular file"
//                 too large: "PATH is larger than 16 KiB"
//   kUnavailable  any other open/read error (permissions, I/O), with errno's text
Result<std::string> ReadRegularFile(const std::string& path, size_t max_bytes);

// Like ReadRegularFile without keeping the contents: for a file another library opens later
// (curl reads the CA and client certificate itself), so that it fails at start-up instead.
Status CheckRegularFile(const std::string& path, size_t max_bytes);

// How WriteFileAtomically and CopyFileAtomically create the new file.
struct AtomicWriteOptions {
  // Permission bits of the new file. Without exact_mode the umask applies (open(2)); with it,
  // fchmod sets them as given (install: an executable whatever the init container's umask).
  unsigned mode = 0644;
  bool exact_mode = false;
  // fsync before the rename, so the new content survives a crash of the node. Off only for
  // files that describe a running process (the status files), which mean nothing after one.
  bool durable = true;
};

// The one atomic file writer: a reader of `path` sees its old content or the new one, never a
// part, and a failure leaves the old content in place. Writes a temporary file in path's
// directory, then fsyncs (AtomicWriteOptions::durable), closes and renames it over `path`. The
// temporary file:
//   * is named "DIR/.NAME.tmp" plus a suffix unique to this call (pid, a per-process counter and
//     a random number), so concurrent writers of one path, in one process or several (also in
//     other pid namespaces sharing the volume), never write into each other's file; hidden, so a
//     reader globbing DIR does not pick it up;
//   * is created O_CREAT|O_EXCL|O_NOFOLLOW|O_NONBLOCK: a symlink planted at its name is never
//     written through, and a FIFO never blocks the open. Whatever already sits at the name (a
//     stale file of a crashed writer whose pid and number came round again) is unlinked and the
//     create tried once more;
//   * is unlinked on every failure; what sits at the bare name DIR/.NAME.tmp (the one name
//     older versions used, or a FIFO or symlink planted there) is unlinked before each write.
// write() is retried on EINTR and short writes; fsync and close() are checked (close can report
// a deferred write error: NFS, a full disk), and a failed one never replaces the old content.
// What sits at `path` itself is replaced, not written through or opened: a symlink (the link
// itself), a FIFO (no reader needed), a regular file. A directory there fails the rename.
// Errors are kUnavailable, naming the step and the temporary file by its name without the unique
// suffix ("cannot create DIR/.NAME.tmp: No such file or directory", "cannot write ...", "cannot
// rename DIR/.NAME.tmp to PATH: Is a directory"), so a message is the same on every run.
Status WriteFileAtomically(const std::string& path, const std::string& content,
                           const AtomicWriteOptions& options = {});

// Like WriteFileAtomically with the content read from `source` (opened O_RDONLY, streamed in
// 64 KiB blocks, never whole in memory): `leasehold install` copying its own binary.
// A read error is kUnavailable "cannot read SOURCE: ...".
Status CopyFileAtomically(const std::string& source, const std::string& path,
                          const AtomicWriteOptions& options = {});

// The temporary name WriteFileAtomically reports for `path` (without the unique suffix).
std::string AtomicTempName(const std::string& path);

// "16 KiB", "1 MiB", "300 bytes": a cap for messages.
std::string FormatByteCount(size_t bytes);

}  // namespace leasehold
