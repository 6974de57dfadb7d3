// Bearer tokens for the API client: a fixed one, or one re-read from a file (projected service
// account tokens are rotated by the kubelet, so a token read once stops working within hours).
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "base/clock.h"
#include "base/status.h"

namespace leasehold::kube {

class TokenSource {
 public:
  virtual ~TokenSource() = default;
  // The token to send now; "" means send no Authorization header. Never fails once a token
  // has been read: a failed re-read keeps the previous token.
  virtual std::string Token() = 0;
  // The server answered 401: make the next Token() re-read its source. The request that got the
  // 401 is not retried (its deadline belongs to the caller).
  virtual void Invalidate() = 0;
  // Why the source currently cannot give a fresh token ("" when it can), e.g. "token file
  // /var/run/.../token: contains a control character or whitespace at byte 5". The client adds
  // it to a 401, so "not ready" says why the agent has no valid token.
  virtual std::string Problem() { return ""; }
};

class StaticTokenSource final : public TokenSource {
 public:
  explicit StaticTokenSource(std::string token) : token_(std::move(token)) {}
  std::string Token() override { return token_; }
  void Invalidate() override {}

 private:
  const std::string token_;
};

// client-go's NewCachedFileTokenSource: the file is re-read when the cached token is older than
// `max_age` (client-go: period 1 min minus leeway 10 s = 50 s) and on the first Token() after
// Invalidate(). Contents are whitespace-trimmed, then must pass CheckBearerToken. An unreadable,
// empty or invalid file (not a regular file, over 16 KiB, control characters or inner
// whitespace) keeps the old token (logged once per run of failures, never the token itself) and
// is retried on the next call; the invalid contents are never sent. A kubelet rotates a
// projected token well before it expires, so the old one normally keeps working while the file
// is bad; once the server refuses it (401), the 401's message carries Problem().
// Ages use clock.MonotonicNow(), so tests drive it with a FakeClock. Thread-safe.
class FileTokenSource final : public TokenSource {
 public:
  static constexpr Duration kDefaultMaxAge = std::chrono::seconds(50);

  // Reads the file once. Fails (kNotFound for a missing file, kBadConfig for an empty one) unless
  // `fallback` is non-empty, in which case that token stands in until a read succeeds.
  static Result<std::unique_ptr<FileTokenSource>> Create(std::string path, const Clock& clock,
                                                         std::string fallback = "",
                                                         Duration max_age = kDefaultMaxAge);

  std::string Token() override;
  void Invalidate() override;
  std::string Problem() override;

  const std::string& path() const { return path_; }

 private:
  FileTokenSource(std::string path, const Clock& clock, Duration max_age);
  // Reads, trims and checks the file.
  Result<std::string> ReadFile() const;

  const std::string path_;
  const Clock& clock_;
  const Duration max_age_;

  std::mutex mu_;
  std::string token_;
  // When token_ was last read successfully; nullopt = never (only with a fallback) or invalidated.
  std::optional<MonoTime> read_at_;
  bool warned_ = false;  // a failure has been logged since the last successful read
  std::string problem_;  // the last failed read's message; "" after a successful one
};

// A bearer token is sent as an HTTP header, so it must be one run of visible ASCII (0x21-0x7e):
// a control character would end the header line (header injection), a space or a non-ASCII byte
// makes no valid token. kBadConfig naming the first bad byte's offset; never the token itself.
Status CheckBearerToken(std::string_view token);

// Strips ASCII whitespace from both ends.
std::string TrimSpace(std::string s);

}  // namespace leasehold::kube
