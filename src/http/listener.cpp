#include "http/listener.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <mutex>

#include "http/event_loop.h"

namespace leasehold::http {
namespace {

// A non-blocking socket listening on `ep` at `port_wanted` (0: the kernel picks), in *fd, and
// the port it got in *port_bound; Unavailable (the socket closed) when it cannot be had.
Status Listen(const ListenEndpoint& ep, int port_wanted, int* fd_out, int* port_bound) {
  const int family = ep.ipv6 ? AF_INET6 : AF_INET;
  const int fd = socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return Status(Code::kUnavailable, std::strerror(errno));
  int yes = 1;
  // SO_REUSEADDR only allows a quick restart past TIME_WAIT. Never SO_REUSEPORT: it would let
  // a second agent (or anything else) share the port and take half the questions.
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  // Inherited by accepted sockets: an answer is one write, but a stream's frames are many.
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof yes);
  sockaddr_storage addr{};
  socklen_t len = 0;
  if (ep.ipv6) {
    setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &yes, sizeof yes);
    auto& a6 = reinterpret_cast<sockaddr_in6&>(addr);
    a6.sin6_family = AF_INET6;
    a6.sin6_port = htons(static_cast<uint16_t>(port_wanted));
    inet_pton(AF_INET6, ep.host.c_str(), &a6.sin6_addr);
    len = sizeof a6;
  } else {
    auto& a4 = reinterpret_cast<sockaddr_in&>(addr);
    a4.sin_family = AF_INET;
    a4.sin_port = htons(static_cast<uint16_t>(port_wanted));
    inet_pton(AF_INET, ep.host.c_str(), &a4.sin_addr);
    len = sizeof a4;
  }
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), len) != 0 || listen(fd, SOMAXCONN) != 0) {
    Status st(Code::kUnavailable, std::strerror(errno));
    (void)close(fd);  // never listened: nothing to lose; start-up fails with `st`
    return st;
  }
  len = sizeof addr;
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  *port_bound = ep.ipv6 ? ntohs(reinterpret_cast<sockaddr_in6&>(addr).sin6_port)
                        : ntohs(reinterpret_cast<sockaddr_in&>(addr).sin_port);
  *fd_out = fd;
  return Status::Ok();
}

}  // namespace

struct Listener::Impl {
  Impl(ListenAddress listen_address, std::shared_ptr<const Router> r, const Clock& c,
       ListenerOptions o)
      : address(std::move(listen_address)), options(std::move(o)), router(std::move(r)), clock(c) {}

  const ListenAddress address;
  const ListenerOptions options;
  const std::shared_ptr<const Router> router;  // shared by every loop
  const Clock& clock;

  std::mutex mu;  // guards the fields below
  bool started = false;
  bool stopped = false;
  int port = 0;
  std::vector<std::unique_ptr<EventLoop>> loops;

  void StopLocked() {
    if (stopped) return;
    stopped = true;
    // Every stream gets its final frame queued first; the loops then write it out.
    if (options.on_stop) options.on_stop();
    for (auto& loop : loops) loop->RequestStop();
    for (auto& loop : loops) loop->Join();
  }
};

Listener::Listener(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Listener::~Listener() { Stop(); }

Result<std::unique_ptr<Listener>> Listener::Create(std::string_view address,
                                                   std::shared_ptr<const Router> router,
                                                   const Clock& clock, ListenerOptions options) {
  auto parsed = ParseListenAddress(address);
  if (!parsed.ok()) return parsed.status();
  if (options.max_connections < 1 || options.max_requests_per_connection < 1 ||
      options.limits.max_head_bytes < 64 || options.limits.max_headers < 1 ||
      options.head_timeout <= Duration::zero() || options.write_timeout <= Duration::zero()) {
    return Status(Code::kBadConfig, "http server: every limit must be positive");
  }
  auto impl = std::make_unique<Impl>(std::move(parsed).value(), std::move(router), clock,
                                     std::move(options));
  return std::unique_ptr<Listener>(new Listener(std::move(impl)));
}

Status Listener::Start() {
  std::lock_guard<std::mutex> l(impl_->mu);
  if (impl_->started || impl_->stopped) {
    return Status(Code::kFailedPrecondition, "http server: Start() after Start() or Stop()");
  }
  impl_->started = true;
  int port = impl_->address.port;
  for (const ListenEndpoint& ep : impl_->address.endpoints) {
    auto loop = std::make_unique<EventLoop>(impl_->options, *impl_->router, impl_->clock);
    int fd = -1;
    int bound = 0;
    // Port 0: the kernel picks for the first endpoint; the others reuse its choice.
    Status st = Listen(ep, port, &fd, &bound);
    if (st.ok()) st = loop->Open(fd);
    const std::string label = EndpointLabel(ep, st.ok() ? bound : port);
    if (st.ok()) {
      port = bound;
      if (!impl_->options.off_loopback_warning.empty() && !IsLoopbackHost(ep.host)) {
        spdlog::warn("http: {} listens on {}, which is not a loopback address: {}",
                     impl_->options.name, label, impl_->options.off_loopback_warning);
      }
      loop->Start(label);
      impl_->loops.push_back(std::move(loop));
      continue;
    }
    if (ep.required) {
      impl_->StopLocked();
      return Status(Code::kUnavailable, "cannot listen on " + label + ": " + st.message());
    }
    spdlog::warn("http: cannot listen on {} ({}); serving IPv4 only", label, st.message());
  }
  impl_->port = port;
  return Status::Ok();
}

void Listener::Stop() {
  std::lock_guard<std::mutex> l(impl_->mu);
  impl_->StopLocked();
}

int Listener::port() const {
  std::lock_guard<std::mutex> l(impl_->mu);
  return impl_->loops.empty() ? 0 : impl_->port;
}

std::vector<std::string> Listener::listening() const {
  std::lock_guard<std::mutex> l(impl_->mu);
  std::vector<std::string> out;
  if (impl_->stopped) return out;
  for (const auto& loop : impl_->loops) out.push_back(loop->label());
  return out;
}

void Listener::Wake() {
  std::lock_guard<std::mutex> l(impl_->mu);
  for (auto& loop : impl_->loops) loop->Wake();
}

}  // namespace leasehold::http
