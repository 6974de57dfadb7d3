#include "base/file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <functional>
#include <random>

namespace leasehold {
namespace {

const char* KindName(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a plain file";
}

Status OpenError(const std::string& path, int err) {
  return Status(err == ENOENT || err == ENOTDIR ? Code::kNotFound : Code::kUnavailable,
                "cannot read " + path + ": " + std::strerror(err));
}

Status TooLarge(const std::string& path, size_t max_bytes) {
  return Status(Code::kBadConfig, path + " is larger than " + FormatByteCount(max_bytes));
}

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) (void)::close(fd_);  // read-only: a failed close loses nothing
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

// Opens `path` and checks it is a regular file no larger than max_bytes; -1 and *status on error.
int OpenRegular(const std::string& path, size_t max_bytes, Status* status) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) {
    *status = OpenError(path, errno);
    return -1;
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    *status = OpenError(path, errno);
    (void)::close(fd);  // read-only, already failing
    return -1;
  }
  if (!S_ISREG(st.st_mode)) {
    *status =
        Status(Code::kBadConfig, path + " is " + KindName(st.st_mode) + ", not a regular file");
    (void)::close(fd);  // read-only, already failing
    return -1;
  }
  if (st.st_size < 0 || static_cast<unsigned long long>(st.st_size) > max_bytes) {
    *status = TooLarge(path, max_bytes);
    (void)::close(fd);  // read-only, already failing
    return -1;
  }
  return fd;
}

}  // namespace

std::string FormatByteCount(size_t bytes) {
  if (bytes >= (1u << 20) && bytes % (1u << 20) == 0) return std::to_string(bytes >> 20) + " MiB";
  if (bytes >= (1u << 10) && bytes % (1u << 10) == 0) return std::to_string(bytes >> 10) + " KiB";
  return std::to_string(bytes) + (bytes == 1 ? " byte" : " bytes");
}

Result<std::string> ReadRegularFile(const std::string& path, size_t max_bytes) {
  Status status;
  const Fd fd(OpenRegular(path, max_bytes, &status));
  if (fd.get() < 0) return status;
  std::string out;
  char buf[4096];
  // Up to max_bytes + 1: one byte more than allowed proves the file too large.
  while (out.size() <= max_bytes) {
    const size_t want = std::min(sizeof buf, max_bytes + 1 - out.size());
    const ssize_t n = ::read(fd.get(), buf, want);
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      return Status(Code::kUnavailable, "cannot read " + path + ": " + std::strerror(errno));
    }
    out.append(buf, static_cast<size_t>(n));
  }
  if (out.size() > max_bytes) return TooLarge(path, max_bytes);
  return out;
}

Status CheckRegularFile(const std::string& path, size_t max_bytes) {
  Status status;
  const Fd fd(OpenRegular(path, max_bytes, &status));
  return status;
}

namespace {

Status WriteError(const std::string& what, const std::string& name, int err) {
  return Status(Code::kUnavailable, what + " " + name + ": " + std::strerror(err));
}

// A suffix no other call, in this process or another, uses at the same time: the pid, a counter
// of this process and 32 random bits (pids repeat across pid namespaces sharing a volume).
std::string UniqueSuffix() {
  static std::atomic<uint64_t> counter{0};
  thread_local std::mt19937_64 rng{std::random_device{}()};
  char buf[64];
  std::snprintf(buf, sizeof buf, ".%ld.%llu.%08x", static_cast<long>(::getpid()),
                static_cast<unsigned long long>(counter.fetch_add(1)),
                static_cast<unsigned>(rng() & 0xffffffffu));
  return buf;
}

// Writes all of data to fd, retrying EINTR and short writes; errno on failure.
bool WriteAll(int fd, const char* data, size_t size) {
  size_t done = 0;
  while (done < size) {
    const ssize_t n = ::write(fd, data + done, size - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n == 0) errno = EIO;
      return false;
    }
    done += static_cast<size_t>(n);
  }
  return true;
}

// The shared steps of WriteFileAtomically and CopyFileAtomically; `fill` writes the content to
// the temporary file's descriptor and returns its error (the temporary is discarded then).
Status AtomicReplace(const std::string& path, const AtomicWriteOptions& options,
                     const std::function<Status(int fd, const std::string& name)>& fill) {
  const std::string name = AtomicTempName(path);
  const std::string temp = name + UniqueSuffix();
  // The bare name is no writer's now; an older version's writer used it, and junk planted there
  // (a FIFO, a symlink) goes too, as it always did.
  (void)::unlink(name.c_str());  // mostly ENOENT; nothing depends on it
  constexpr int kFlags = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC;
  int fd = ::open(temp.c_str(), kFlags, static_cast<mode_t>(options.mode));
  if (fd < 0 && errno == EEXIST) {
    // A stale temporary of a crashed writer with the same suffix: it is not ours to keep.
    (void)::unlink(temp.c_str());  // the retried open reports what matters
    fd = ::open(temp.c_str(), kFlags, static_cast<mode_t>(options.mode));
  }
  if (fd < 0) return WriteError("cannot create", name, errno);
  Status st = fill(fd, name);
  if (st.ok() && options.exact_mode && ::fchmod(fd, static_cast<mode_t>(options.mode)) != 0) {
    st = WriteError("cannot write", name, errno);
  }
  if (st.ok() && options.durable && ::fsync(fd) != 0) st = WriteError("cannot write", name, errno);
  // close() can report a deferred write error: the file may be incomplete, so it must not
  // replace the old content.
  if (::close(fd) != 0 && st.ok()) st = WriteError("cannot write", name, errno);
  if (st.ok() && ::rename(temp.c_str(), path.c_str()) != 0) {
    st = WriteError("cannot rename " + name + " to", path, errno);
  }
  if (!st.ok()) (void)::unlink(temp.c_str());  // already failing; a leftover is only litter
  return st;
}

}  // namespace

std::string AtomicTempName(const std::string& path) {
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "" : path.substr(0, slash + 1);
  const std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  return dir + "." + base + ".tmp";
}

Status WriteFileAtomically(const std::string& path, const std::string& content,
                           const AtomicWriteOptions& options) {
  return AtomicReplace(path, options, [&content](int fd, const std::string& name) {
    if (!WriteAll(fd, content.data(), content.size())) {
      return WriteError("cannot write", name, errno);
    }
    return Status::Ok();
  });
}

Status CopyFileAtomically(const std::string& source, const std::string& path,
                          const AtomicWriteOptions& options) {
  const int in = ::open(source.c_str(), O_RDONLY | O_CLOEXEC);
  if (in < 0) return WriteError("cannot read", source, errno);
  Fd closer(in);
  return AtomicReplace(path, options, [in, &source](int fd, const std::string& name) {
    char buf[64 * 1024];
    for (;;) {
      const ssize_t n = ::read(in, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return WriteError("cannot read", source, errno);
      if (n == 0) return Status::Ok();
      if (!WriteAll(fd, buf, static_cast<size_t>(n))) {
        return WriteError("cannot write", name, errno);
      }
    }
  });
}

}  // namespace leasehold
