#include "kube/token_source.h"

#include <spdlog/spdlog.h>

#include <string>

#include "base/file.h"

namespace leasehold::kube {

Status CheckBearerToken(std::string_view token) {
  for (size_t i = 0; i < token.size(); ++i) {
    const auto c = static_cast<unsigned char>(token[i]);
    if (c <= 0x20 || c >= 0x7f) {
      return Status(Code::kBadConfig,
                    "contains a control character, whitespace or non-ASCII byte at byte " +
                        std::to_string(i) + " (a bearer token is visible ASCII only)");
    }
  }
  return Status::Ok();
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
    source->problem_ = token.status().message();
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
  Result<std::string> data = ReadRegularFile(path_, kMaxTokenFileBytes);
  if (!data.ok()) return data.status();
  std::string token = TrimSpace(std::move(data).value());
  if (token.empty()) return Status(Code::kBadConfig, "token file " + path_ + " is empty");
  if (Status s = CheckBearerToken(token); !s.ok()) {
    return Status(s.code(), "token file " + path_ + ": " + s.message());
  }
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
    problem_.clear();
  } else {
    problem_ = fresh.status().message();
    if (!warned_) {
      // read_at_ stays as it was, so the next call tries again.
      spdlog::warn("keeping the previous bearer token: {}", problem_);
      warned_ = true;
    }
  }
  return token_;
}

std::string FileTokenSource::Problem() {
  std::lock_guard<std::mutex> l(mu_);
  return problem_;
}

void FileTokenSource::Invalidate() {
  std::lock_guard<std::mutex> l(mu_);
  read_at_.reset();
}

}  // namespace leasehold::kube
