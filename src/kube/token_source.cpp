#include "kube/token_source.h"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace leasehold::kube {

Result<std::string> ReadWholeFile(const std::string& path) {
  const auto fail = [&path](int err) {
    return Status(err == ENOENT ? Code::kNotFound : Code::kUnavailable,
                  "cannot read " + path + ": " + std::strerror(err));
  };
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return fail(errno);
  std::string out;
  char buf[4096];
  while (true) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      ::close(fd);
      return fail(err);
    }
    out.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return out;
}

std::string TrimSpace(std::string s) {
  static constexpr const char* kSpace = " \t\r\n\v\f";
  const size_t b = s.find_first_not_of(kSpace);
  if (b == std::string::npos) return "";
  s.erase(s.find_last_not_of(kSpace) + 1);
  s.erase(0, b);
  return s;
}

FileTokenSource::FileTokenSource(std::string path, const Clock& clock, Duration max_age)
    : path_(std::move(path)), clock_(clock), max_age_(max_age) {}

Result<std::unique_ptr<FileTokenSource>> FileTokenSource::Create(std::string path,
                                                                 const Clock& clock,
                                                                 std::string fallback,
                                                                 Duration max_age) {
  std::unique_ptr<FileTokenSource> source(new FileTokenSource(std::move(path), clock, max_age));
  Result<std::string> token = source->ReadFile();
  if (token.ok()) {
    source->token_ = std::move(token).value();
    source->read_at_ = clock.MonotonicNow();
  } else if (!fallback.empty()) {
    spdlog::warn("token file: {}; using the static token until it can be read",
                 token.status().message());
    source->token_ = std::move(fallback);
    source->warned_ = true;
  } else {
    return token.status();
  }
  return source;
}

Result<std::string> FileTokenSource::ReadFile() const {
  Result<std::string> data = ReadWholeFile(path_);
  if (!data.ok()) return data.status();
  std::string token = TrimSpace(std::move(data).value());
  if (token.empty()) return Status(Code::kInvalid, "token file " + path_ + " is empty");
  return token;
}

std::string FileTokenSource::Token() {
  std::lock_guard<std::mutex> l(mu_);
  const MonoTime now = clock_.MonotonicNow();
  if (read_at_ && now - *read_at_ < max_age_) return token_;
  Result<std::string> fresh = ReadFile();
  if (fresh.ok()) {
    token_ = std::move(fresh).value();
    read_at_ = now;
    warned_ = false;
  } else if (!warned_) {
    // read_at_ stays as it was, so the next call tries again.
    spdlog::warn("keeping the previous bearer token: {}", fresh.status().message());
    warned_ = true;
  }
  return token_;
}

void FileTokenSource::Invalidate() {
  std::lock_guard<std::mutex> l(mu_);
  read_at_.reset();
}

}  // namespace leasehold::kube
