// The client side of the local API, for `leasehold gate` and `leasehold probe`: where the sidecar
// is (SidecarTargets, the one address rule) and a non-blocking HTTP/1.0 exchange with it over
// loopback: one request, then the answer's
// head and its body as it arrives (a watch stream's body never ends). HTTP/1.0 on purpose: the
// sidecar then sends the stream without chunked encoding, ended by the close, and closes after
// every other answer. No libcurl: the peer is on 127.0.0.1 or ::1, and the gate must never
// block in a call while a timer is due, so the socket is driven by the gate's own poll loop.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/clock.h"
#include "base/status.h"

namespace leasehold::contract {

struct Target {
  std::string host;  // numeric: "127.0.0.1" or "::1"
  int port = 0;
  std::string ToString() const;
  bool operator==(const Target& o) const { return host == o.host && port == o.port; }
};

// The one rule for finding the sidecar from its --http-address (`leasehold probe --address`,
// `leasehold gate --address`, $LEASEHOLD_HTTP_ADDRESS): every endpoint it listens on, in its
// bind order, a wildcard asked on its loopback ("0.0.0.0" -> 127.0.0.1, "::" -> ::1). So
// "localhost:4040" is 127.0.0.1:4040 then [::1]:4040: a client asks the next one only when it
// cannot connect to the one before. kBadConfig (the grammar's message) for a bad address; port 0
// is refused, as nobody can be asked there.
Result<std::vector<Target>> SidecarTargets(std::string_view address);

class HttpExchange {
 public:
  // Opens a non-blocking socket, starts connecting and queues `request` (the whole request).
  // Unavailable when the connection is refused at once.
  static Result<std::unique_ptr<HttpExchange>> Start(const Target& target, std::string request);
  ~HttpExchange();
  HttpExchange(const HttpExchange&) = delete;
  HttpExchange& operator=(const HttpExchange&) = delete;

  int fd() const { return fd_; }
  // For poll(): POLLOUT until the request is written, then POLLIN.
  short poll_events() const;
  // Call when poll() reported the fd. Reads or writes what it can, at most 64 KiB of body per
  // call. Unavailable when the connection failed (refused, reset) or the answer is no HTTP; OK
  // otherwise, also at the end of the answer (closed()).
  Status OnReady();

  bool head_done() const { return head_done_; }
  int status() const { return status_; }
  // Body bytes received since the last call (after the head).
  std::string TakeBody();
  // The peer closed the connection, or a Content-Length body is complete.
  bool closed() const { return closed_; }

  static std::string Get(const std::string& path);   // "GET path HTTP/1.0" request text
  static std::string Post(const std::string& path);  // with Content-Length: 0

 private:
  HttpExchange(int fd, std::string request) : fd_(fd), out_(std::move(request)) {}
  Status ParseHead();

  int fd_ = -1;
  std::string out_;
  size_t written_ = 0;
  bool connected_ = false;
  std::string in_;
  bool head_done_ = false;
  int status_ = 0;
  long long content_length_ = -1;
  long long body_seen_ = 0;
  bool closed_ = false;
};

// Runs one exchange to the end, blocking up to `timeout`: (status, body). For the POST /release
// at exit, for `leasehold probe` and for tests; the gate's loop drives exchanges itself. Whatever
// listens at `target` may be hostile: the body kept is at most `max_body` bytes (default 64 KiB),
// and the exchange ends there (`truncated`) instead of reading on until the timeout.
struct HttpAnswer {
  int status = 0;
  std::string body;
  bool truncated = false;
};
constexpr size_t kDefaultMaxBody = size_t{64} * 1024;
// `clock` measures the timeout (the gate's and the probe's RealClock).
Result<HttpAnswer> FetchOnce(const Target& target, const std::string& request, Duration timeout,
                             const Clock& clock, size_t max_body = kDefaultMaxBody);

// FetchOnce on each of `targets` in order until one answers (any HTTP status); each gets the
// whole `timeout`. *answered (optional) is set to the target that answered. The last error,
// prefixed by the target, when none did; "target: error; target: error" in *tried (optional).
Result<HttpAnswer> FetchFirst(const std::vector<Target>& targets, const std::string& request,
                              Duration timeout, const Clock& clock,
                              size_t max_body = kDefaultMaxBody, Target* answered = nullptr,
                              std::string* tried = nullptr);

}  // namespace leasehold::contract
