// The one way to read a small file that comes from outside the process (a kubeconfig, a token,
// a CA bundle, the namespace file): bounded in size and time, whatever the path names.
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

// "16 KiB", "1 MiB", "300 bytes": a cap for messages.
std::string FormatByteCount(size_t bytes);

}  // namespace leasehold
