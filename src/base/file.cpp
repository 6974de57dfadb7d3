#include "base/file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

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

}  // namespace leasehold
