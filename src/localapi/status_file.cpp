#include "localapi/status_file.h"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace leasehold::localapi {
namespace {

std::string TempPathFor(const std::string& path) {
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "" : path.substr(0, slash + 1);
  const std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  // Hidden, so a reader globbing the directory does not pick it up.
  return dir + "." + name + ".tmp";
}

Status Errno(const std::string& what, const std::string& path) {
  return Status(Code::kUnavailable, what + " " + path + ": " + std::strerror(errno));
}

}  // namespace

StatusFile::StatusFile(std::string path) : path_(std::move(path)), temp_(TempPathFor(path_)) {}

Result<std::unique_ptr<StatusFile>> StatusFile::Create(std::string path,
                                                       const std::string& initial) {
  if (path.empty()) return Status(Code::kBadConfig, "must not be empty");
  if (path.back() == '/') return Status(Code::kBadConfig, "\"" + path + "\" names a directory");
  std::unique_ptr<StatusFile> file(new StatusFile(std::move(path)));
  if (Status st = file->Write(initial); !st.ok()) return st;
  return file;
}

Status StatusFile::Write(const std::string& content) {
  // Whatever is at the temporary path goes first, and the new file must be ours: a FIFO there
  // would block the write for good, a symlink would have it written elsewhere.
  unlink(temp_.c_str());
  const int fd =
      open(temp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0644);
  if (fd < 0) return Errno("cannot create", temp_);
  const std::string data = content + "\n";
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      Status st = Errno("cannot write", temp_);
      (void)close(fd);  // already failing with the write's error; the file is discarded
      unlink(temp_.c_str());
      return st;
    }
    done += static_cast<size_t>(n);
  }
  if (close(fd) != 0) {
    Status st = Errno("cannot write", temp_);
    unlink(temp_.c_str());
    return st;
  }
  if (rename(temp_.c_str(), path_.c_str()) != 0) {
    Status st = Errno("cannot rename " + temp_ + " to", path_);
    unlink(temp_.c_str());
    return st;
  }
  return Status::Ok();
}

void StatusFile::Publish(const Publication& p) {
  Status st = Write(p.json);
  if (!st.ok() && !failing_) {
    spdlog::warn("status file: {} (readers see its last content until a write succeeds)",
                 st.message());
  } else if (st.ok() && failing_) {
    spdlog::info("status file {} written again", path_);
  }
  failing_ = !st.ok();
}

}  // namespace leasehold::localapi
