#include "contract/loopback_client.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "base/listen_address.h"

namespace leasehold::contract {
namespace {

constexpr size_t kMaxHead = size_t{16} * 1024;
// Body bytes one OnReady() call reads at most. The peer may send faster than we drain: without a
// cap the read loop would never see EAGAIN, and the callers' bounds (FetchOnce's max_body and
// deadline, the gate's timers) would never get their turn. poll() is level-triggered, so the
// rest is read on the next call.
constexpr size_t kMaxReadPerCall = size_t{64} * 1024;

Status Errno(const std::string& what, int err) {
  return Status(Code::kUnavailable, what + ": " + std::strerror(err));
}

}  // namespace

Result<std::vector<Target>> SidecarTargets(std::string_view address) {
  auto parsed = ParseListenAddress(address);
  if (!parsed.ok()) return parsed.status();
  if (parsed->port == 0 || parsed->endpoints.empty()) {
    return Status(Code::kBadConfig, "the port must not be 0");
  }
  std::vector<Target> out;
  for (const ListenEndpoint& ep : parsed->endpoints) {
    std::string host = ep.host;
    if (host == "0.0.0.0") host = "127.0.0.1";
    if (host == "::") host = "::1";
    out.push_back(Target{host, parsed->port});
  }
  return out;
}

std::string Target::ToString() const {
  return (host.find(':') != std::string::npos ? "[" + host + "]" : host) + ":" +
         std::to_string(port);
}

std::string HttpExchange::Get(const std::string& path) {
  return "GET " + path + " HTTP/1.0\r\nHost: localhost\r\nUser-Agent: leasehold-gate\r\n\r\n";
}

std::string HttpExchange::Post(const std::string& path) {
  return "POST " + path +
         " HTTP/1.0\r\nHost: localhost\r\nUser-Agent: leasehold-gate\r\nContent-Length: 0\r\n\r\n";
}

Result<std::unique_ptr<HttpExchange>> HttpExchange::Start(const Target& target,
                                                          std::string request) {
  sockaddr_storage ss{};
  socklen_t len = 0;
  int family = AF_INET;
  if (target.host.find(':') != std::string::npos) {
    family = AF_INET6;
    auto* a = reinterpret_cast<sockaddr_in6*>(&ss);
    a->sin6_family = AF_INET6;
    a->sin6_port = htons(static_cast<uint16_t>(target.port));
    if (inet_pton(AF_INET6, target.host.c_str(), &a->sin6_addr) != 1) {
      return Status(Code::kBadConfig, "not a numeric address: " + target.host);
    }
    len = sizeof(sockaddr_in6);
  } else {
    auto* a = reinterpret_cast<sockaddr_in*>(&ss);
    a->sin_family = AF_INET;
    a->sin_port = htons(static_cast<uint16_t>(target.port));
    if (inet_pton(AF_INET, target.host.c_str(), &a->sin_addr) != 1) {
      return Status(Code::kBadConfig, "not a numeric address: " + target.host);
    }
    len = sizeof(sockaddr_in);
  }
  const int fd = socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return Errno("socket", errno);
  const int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  std::unique_ptr<HttpExchange> ex(new HttpExchange(fd, std::move(request)));
  if (connect(fd, reinterpret_cast<sockaddr*>(&ss), len) == 0) {
    ex->connected_ = true;
  } else if (errno != EINPROGRESS) {
    return Errno("connect to " + target.ToString(), errno);
  }
  return ex;
}

HttpExchange::~HttpExchange() {
  // The exchange is over (or abandoned): a failed close of the socket loses nothing of ours.
  if (fd_ >= 0) (void)close(fd_);
}

short HttpExchange::poll_events() const {
  if (closed_) return 0;
  return written_ < out_.size() ? POLLOUT : POLLIN;
}

Status HttpExchange::ParseHead() {
  const size_t end = in_.find("\r\n\r\n");
  if (end == std::string::npos) {
    if (in_.size() > kMaxHead) return Status(Code::kUnavailable, "answer head too long");
    return Status();
  }
  const std::string head = in_.substr(0, end);
  in_.erase(0, end + 4);
  if (head.rfind("HTTP/1.", 0) != 0 || head.size() < 12) {
    return Status(Code::kUnavailable, "not an HTTP answer");
  }
  char* code_end = nullptr;
  const long code = std::strtol(head.c_str() + 9, &code_end, 10);
  if (code_end != head.c_str() + 12 || code < 100 || code > 599) {
    return Status(Code::kUnavailable, "not an HTTP status line");
  }
  status_ = static_cast<int>(code);
  size_t pos = head.find("\r\n");
  while (pos != std::string::npos) {
    const size_t next = head.find("\r\n", pos + 2);
    std::string line =
        head.substr(pos + 2, next == std::string::npos ? std::string::npos : next - pos - 2);
    for (size_t i = 0; i < line.size() && line[i] != ':'; ++i) {
      line[i] = static_cast<char>(std::tolower(static_cast<unsigned char>(line[i])));
    }
    if (line.rfind("content-length:", 0) == 0) content_length_ = std::atoll(line.c_str() + 15);
    pos = next;
  }
  head_done_ = true;
  return Status();
}

Status HttpExchange::OnReady() {
  if (closed_) return Status();
  if (!connected_) {
    int err = 0;
    socklen_t len = sizeof err;
    getsockopt(fd_, SOL_SOCKET, SO_ERROR, &err, &len);
    if (err != 0) return Errno("connect", err);
    connected_ = true;
  }
  while (written_ < out_.size()) {
    const ssize_t n = send(fd_, out_.data() + written_, out_.size() - written_, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK) return Status();
      if (errno == EINTR) continue;
      return Errno("send", errno);
    }
    written_ += static_cast<size_t>(n);
  }
  char buf[16 * 1024];
  size_t read_now = 0;
  for (;;) {
    if (head_done_ && read_now >= kMaxReadPerCall) break;
    const ssize_t n = recv(fd_, buf, sizeof buf, 0);
    if (n < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK) break;
      if (errno == EINTR) continue;
      return Errno("recv", errno);
    }
    if (n == 0) {
      closed_ = true;
      break;
    }
    in_.append(buf, static_cast<size_t>(n));
    read_now += static_cast<size_t>(n);
    if (head_done_) {
      body_seen_ += n;
    } else {
      if (Status st = ParseHead(); !st.ok()) return st;
      if (!head_done_) continue;
      body_seen_ = static_cast<long long>(in_.size());
    }
    if (content_length_ >= 0 && body_seen_ >= content_length_) {
      closed_ = true;
      break;
    }
  }
  if (closed_ && !head_done_)
    return Status(Code::kUnavailable, "connection closed before an answer");
  return Status();
}

std::string HttpExchange::TakeBody() {
  if (!head_done_) return "";
  std::string out;
  out.swap(in_);
  return out;
}

Result<HttpAnswer> FetchOnce(const Target& target, const std::string& request, Duration timeout,
                             const Clock& clock, size_t max_body) {
  auto ex = HttpExchange::Start(target, request);
  if (!ex.ok()) return ex.status();
  const MonoTime deadline = clock.MonotonicNow() + timeout;
  HttpAnswer answer;
  while (!(*ex)->closed()) {
    if (answer.body.size() > max_body) {
      answer.status = (*ex)->status();
      answer.body.resize(max_body);
      answer.truncated = true;
      return answer;
    }
    const Duration left = deadline - clock.MonotonicNow();
    if (left <= Duration::zero()) return Status(Code::kDeadlineExceeded, "no answer in time");
    pollfd p{(*ex)->fd(), (*ex)->poll_events(), 0};
    const int ms =
        static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(left).count()) + 1;
    if (poll(&p, 1, ms) < 0 && errno != EINTR) return Errno("poll", errno);
    if (p.revents == 0) continue;
    if (Status st = (*ex)->OnReady(); !st.ok()) return st;
    answer.body += (*ex)->TakeBody();
  }
  answer.status = (*ex)->status();
  answer.body += (*ex)->TakeBody();
  if (answer.body.size() > max_body) {
    answer.body.resize(max_body);
    answer.truncated = true;
  }
  return answer;
}

Result<HttpAnswer> FetchFirst(const std::vector<Target>& targets, const std::string& request,
                              Duration timeout, const Clock& clock, size_t max_body,
                              Target* answered, std::string* tried) {
  Status last(Code::kUnavailable, "no address to ask");
  std::string all;
  for (const Target& target : targets) {
    auto res = FetchOnce(target, request, timeout, clock, max_body);
    if (res.ok()) {
      if (answered != nullptr) *answered = target;
      if (tried != nullptr) *tried = all;
      return res;
    }
    last = Status(res.status().code(), target.ToString() + ": " + res.status().message());
    all += (all.empty() ? "" : "; ") + last.message();
  }
  if (tried != nullptr) *tried = all;
  return last;
}

}  // namespace leasehold::contract
