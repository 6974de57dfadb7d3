#include "server/http_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <spdlog/spdlog.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <thread>
#include <unordered_map>

namespace leasehold::server {
namespace {

using Steady = std::chrono::steady_clock;

// A stream takes frames from its hub queue only while less than this much of its output waits:
// a reader that falls behind then leaves them queued, where the hub's queue limit cuts it off.
constexpr size_t kStreamOutputLow = 16 * 1024;
// Frames taken from the hub per wake-up.
constexpr size_t kFramesPerTake = 16;
// Connections accepted per wake-up of the listening socket, so that a flood of connects cannot
// keep the loop from serving the connections it already has.
constexpr int kAcceptsPerWake = 64;
// Bytes read from a socket per wake-up.
constexpr size_t kReadChunk = 16 * 1024;
// Shed connections are logged at most this often, with their count.
constexpr auto kShedLogEvery = std::chrono::seconds(10);

// After the last answer of a connection (Connection: close, an error), what the peer still
// sends is read and dropped for at most this long before the close: closing with unread input
// would send a reset, which can destroy the answer before the peer has read it.
constexpr auto kLinger = std::chrono::seconds(1);
// ... and for at most this many bytes: a peer that keeps sending gets the reset.
constexpr size_t kLingerBytes = 64 * 1024;

// epoll's data word: the fd in the low 32 bits, a generation in the next 24 (so that an event
// for a closed connection is not taken for a new one that got the same fd number in the same
// batch), what it is in the top 8.
enum class Tag : uint64_t { kListen = 1, kWake = 2, kSocket = 3, kSignal = 4 };
uint64_t Key(Tag tag, int fd, uint32_t gen = 0) {
  return (static_cast<uint64_t>(tag) << 56) | (static_cast<uint64_t>(gen & 0xffffffu) << 32) |
         static_cast<uint32_t>(fd);
}

std::string PeerLabel(const sockaddr_storage& a) {
  char host[INET6_ADDRSTRLEN] = "?";
  int port = 0;
  if (a.ss_family == AF_INET) {
    const auto& in = reinterpret_cast<const sockaddr_in&>(a);
    inet_ntop(AF_INET, &in.sin_addr, host, sizeof host);
    port = ntohs(in.sin_port);
    return std::string(host) + ":" + std::to_string(port);
  }
  const auto& in6 = reinterpret_cast<const sockaddr_in6&>(a);
  inet_ntop(AF_INET6, &in6.sin6_addr, host, sizeof host);
  port = ntohs(in6.sin6_port);
  return "[" + std::string(host) + "]:" + std::to_string(port);
}

const char* ReasonPhrase(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 202:
      return "Accepted";
    case 400:
      return "Bad Request";
    case 403:
      return "Forbidden";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 408:
      return "Request Timeout";
    case 413:
      return "Content Too Large";
    case 431:
      return "Request Header Fields Too Large";
    case 500:
      return "Internal Server Error";
    case 501:
      return "Not Implemented";
    case 503:
      return "Service Unavailable";
    case 505:
      return "HTTP Version Not Supported";
    default:
      return "Unknown";
  }
}

// The status line and headers of `a`, with its body unless `head_only`.
std::string Serialize(const HttpAnswer& a, bool head_only, bool keep_alive, int minor_version) {
  std::string out;
  out.reserve(160 + a.body.size());
  out += "HTTP/1.1 ";
  out += std::to_string(a.status);
  out += ' ';
  out += ReasonPhrase(a.status);
  out += "\r\n";
  if (!a.content_type.empty()) out += "Content-Type: " + a.content_type + "\r\n";
  for (const auto& [name, value] : a.headers) out += name + ": " + value + "\r\n";
  out += "Cache-Control: no-store\r\nContent-Length: ";
  out += std::to_string(a.body.size());
  out += "\r\n";
  if (!keep_alive) {
    out += "Connection: close\r\n";
  } else if (minor_version == 0) {
    out += "Connection: keep-alive\r\n";
  }
  out += "\r\n";
  if (!head_only) out += a.body;
  return out;
}

HttpAnswer JsonError(int status, const std::string& message) {
  HttpAnswer a;
  a.status = status;
  a.content_type = "application/json";
  // Our own words only (see HeadParse::reason): nothing to escape but the quotes we never use.
  a.body = "{\"error\":\"" + message + "\"}\n";
  return a;
}

std::string Chunk(const std::string& data) {
  char size[24];
  std::snprintf(size, sizeof size, "%zx\r\n", data.size());
  return size + data + "\r\n";
}

struct Conn {
  int fd = -1;
  uint32_t gen = 0;  // see Key()
  std::string peer;  // for logs
  bool loopback = false;
  std::string in;      // received and not yet parsed
  std::string out;     // to send
  size_t out_off = 0;  // bytes of `out` already sent
  // kHttp: the request (head and body) must be complete by `request_deadline`; queued output
  // must be gone by `write_deadline`.
  Steady::time_point wait_since;  // start of the current wait for a request: shedding order
  Steady::time_point request_deadline;
  Steady::time_point write_deadline;
  int answered = 0;
  bool close_after_write = false;  // the last answer was sent with "Connection: close"
  bool lingering = false;          // it was sent; input is dropped until kLinger has passed
  size_t lingered = 0;             // bytes dropped meanwhile
  bool peer_closed = false;
  bool processing = false;  // inside Process(): Flush() must not re-enter it
  uint32_t interest = 0;    // the epoll events registered
  bool registered = false;

  // A watch stream, once GET /leader/watch was accepted.
  std::shared_ptr<WatchHub::Client> client;
  bool chunked = false;
  bool stream_ended = false;  // the hub said so: close once `out` is sent
  Steady::time_point last_frame;

  size_t pending() const { return out.size() - out_off; }
  bool streaming() const { return client != nullptr; }
};

}  // namespace

struct HttpServer::Impl {
  // One listening socket and its event loop.
  struct Loop {
    Impl* server = nullptr;
    ListenEndpoint endpoint;
    std::string label;
    int listen_fd = -1;
    int epoll_fd = -1;
    int wake_fd = -1;   // eventfd: Stop()
    int spare_fd = -1;  // held open so that EMFILE can still accept-and-close
    std::thread thread;
    std::atomic<bool> stopping{false};

    // Loop thread only.
    std::unordered_map<int, std::unique_ptr<Conn>> conns;
    std::unordered_map<int, Conn*> by_signal;  // a stream's hub eventfd -> its connection
    int ordinary = 0;                          // connections that are not streams
    uint32_t next_gen = 0;
    Steady::time_point next_sweep = Steady::time_point::max();
    uint64_t shed_unlogged = 0;
    Steady::time_point shed_logged_at{};

    ~Loop() {
      for (int fd : {listen_fd, epoll_fd, wake_fd, spare_fd}) {
        if (fd >= 0) close(fd);
      }
    }

    void Run();
    void Accept();
    void OnSocket(Conn& c, uint32_t events);
    void OnSignal(Conn& c);
    void Read(Conn& c);
    void Process(Conn& c);
    void Answer(Conn& c, const RequestHead& head);
    void StartStream(Conn& c, const RequestHead& head);
    void TakeFrames(Conn& c);
    void Queue(Conn& c, std::string data);
    void Flush(Conn& c);
    void Interest(Conn& c);
    void Close(Conn& c);
    void Linger(Conn& c);
    bool Alive(int fd, uint32_t gen) const {
      const auto it = conns.find(fd);
      return it != conns.end() && it->second->gen == gen;
    }
    void ShedOne(Steady::time_point now);
    void Sweep(Steady::time_point now);
    void Arm(Steady::time_point at) { next_sweep = std::min(next_sweep, at); }
  };

  ListenAddress address;
  SnapshotSource source;
  const Clock* clock = nullptr;
  HandlerOptions handler_options;
  ServerOptions options;

  std::mutex mu;  // guards the fields below
  bool started = false;
  bool stopped = false;
  int port = 0;
  std::vector<std::unique_ptr<Loop>> loops;

  void StopLocked() {
    if (stopped) return;
    stopped = true;
    // Every stream gets its final event queued first; the loops then write it out.
    if (options.watch != nullptr) options.watch->Close();
    for (auto& loop : loops) {
      loop->stopping = true;
      const uint64_t one = 1;
      [[maybe_unused]] ssize_t n = write(loop->wake_fd, &one, sizeof one);
    }
    for (auto& loop : loops) {
      if (loop->thread.joinable()) loop->thread.join();
    }
  }

  Status Bind(Loop& loop, int port_wanted, int* port_bound);
};

void HttpServer::Impl::Loop::Run() {
  constexpr int kMaxEvents = 64;
  epoll_event events[kMaxEvents];
  Steady::time_point stop_deadline = Steady::time_point::max();
  while (true) {
    const Steady::time_point now = Steady::now();
    if (stopping && stop_deadline == Steady::time_point::max()) {
      // Stop accepting; what is queued (a stream's final event, an answer) has write_timeout
      // to leave, and nothing new is read.
      stop_deadline = now + server->options.write_timeout;
      epoll_ctl(epoll_fd, EPOLL_CTL_DEL, listen_fd, nullptr);
      std::vector<Conn*> all;
      for (auto& [fd, c] : conns) all.push_back(c.get());
      for (Conn* c : all) {
        const int fd = c->fd;
        const uint32_t gen = c->gen;
        if (c->streaming()) TakeFrames(*c);
        if (!Alive(fd, gen)) continue;
        c->close_after_write = true;
        if (c->pending() == 0 && (!c->streaming() || c->stream_ended)) {
          Close(*c);
        } else {
          Interest(*c);
        }
      }
    }
    if (stopping && (conns.empty() || now >= stop_deadline)) break;
    if (now >= next_sweep) Sweep(now);
    Steady::time_point until = std::min(next_sweep, stop_deadline);
    int timeout_ms = -1;
    if (until != Steady::time_point::max()) {
      timeout_ms = static_cast<int>(std::clamp<int64_t>(
          std::chrono::ceil<std::chrono::milliseconds>(until - now).count(), 0, 60000));
    }
    const int n = epoll_wait(epoll_fd, events, kMaxEvents, timeout_ms);
    if (n < 0) {
      if (errno == EINTR) continue;
      spdlog::error("http {}: epoll_wait: {}", label, std::strerror(errno));
      break;
    }
    for (int i = 0; i < n; ++i) {
      const uint64_t key = events[i].data.u64;
      const auto tag = static_cast<Tag>(key >> 56);
      const auto gen = static_cast<uint32_t>((key >> 32) & 0xffffffu);
      const int fd = static_cast<int>(key & 0xffffffffu);
      if (tag == Tag::kListen) {
        Accept();
      } else if (tag == Tag::kWake) {
        uint64_t v;
        [[maybe_unused]] ssize_t r = read(wake_fd, &v, sizeof v);
      } else if (tag == Tag::kSignal) {
        const auto it = by_signal.find(fd);
        if (it != by_signal.end() && (it->second->gen & 0xffffffu) == gen) OnSignal(*it->second);
      } else {
        const auto it = conns.find(fd);
        if (it != conns.end() && (it->second->gen & 0xffffffu) == gen) {
          OnSocket(*it->second, events[i].events);
        }
      }
    }
  }
  std::vector<Conn*> all;
  for (auto& [fd, c] : conns) all.push_back(c.get());
  for (Conn* c : all) Close(*c);
}

void HttpServer::Impl::Loop::Accept() {
  const ServerOptions& o = server->options;
  for (int i = 0; i < kAcceptsPerWake && !stopping; ++i) {
    sockaddr_storage peer{};
    socklen_t len = sizeof peer;
    const int fd =
        accept4(listen_fd, reinterpret_cast<sockaddr*>(&peer), &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
    const Steady::time_point now = Steady::now();
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      if (errno == EMFILE || errno == ENFILE) {
        // Out of descriptors: make room by shedding, or else refuse this one connection
        // through the spare descriptor, so that the backlog does not fill with it.
        if (ordinary > 0) {
          ShedOne(now);
          continue;
        }
        if (spare_fd >= 0) {
          close(spare_fd);
          const int refused = accept(listen_fd, nullptr, nullptr);
          if (refused >= 0) close(refused);
          spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
        }
      }
      return;  // EAGAIN: nothing more to accept
    }
    if (ordinary >= o.max_connections) ShedOne(now);
    auto c = std::make_unique<Conn>();
    c->fd = fd;
    c->gen = ++next_gen & 0xffffffu;
    c->peer = PeerLabel(peer);
    c->loopback = IsLoopbackAddress(peer);
    c->wait_since = now;
    c->request_deadline = now + o.head_timeout;
    Arm(c->request_deadline);
    Conn& ref = *c;
    conns.emplace(fd, std::move(c));
    ++ordinary;
    Interest(ref);
    // The request often arrives with the connection: serve it now, ahead of older ones.
    Read(ref);
  }
}

void HttpServer::Impl::Loop::ShedOne(Steady::time_point now) {
  Conn* victim = nullptr;
  for (auto& [fd, c] : conns) {
    if (c->streaming()) continue;
    // Connections waiting for their request first (idle or slow), the longest waiting first;
    // one whose answer is on its way only when no such connection is left.
    const bool waiting = c->pending() == 0;
    if (victim == nullptr) {
      victim = c.get();
      continue;
    }
    const bool victim_waiting = victim->pending() == 0;
    if (waiting != victim_waiting) {
      if (waiting) victim = c.get();
    } else if (c->wait_since < victim->wait_since) {
      victim = c.get();
    }
  }
  if (victim == nullptr) return;
  ++shed_unlogged;
  if (now - shed_logged_at >= kShedLogEvery) {
    spdlog::warn(
        "http {}: {} connection(s) shed to stay within {} (the longest waiting for a "
        "request first)",
        label, shed_unlogged, server->options.max_connections);
    shed_unlogged = 0;
    shed_logged_at = now;
  }
  Close(*victim);
}

void HttpServer::Impl::Loop::OnSocket(Conn& c, uint32_t events) {
  const int fd = c.fd;
  const uint32_t gen = c.gen;
  if ((events & (EPOLLERR | EPOLLHUP)) != 0) {
    Close(c);
    return;
  }
  if ((events & EPOLLOUT) != 0) {
    Flush(c);
    if (!Alive(fd, gen)) return;
  }
  if ((events & (EPOLLIN | EPOLLRDHUP)) != 0) Read(c);
}

void HttpServer::Impl::Loop::Read(Conn& c) {
  const ServerOptions& o = server->options;
  const int fd = c.fd;
  if (c.lingering) {
    char drop[kReadChunk];
    while (true) {
      const ssize_t n = recv(fd, drop, sizeof drop, 0);
      if (n > 0) c.lingered += static_cast<size_t>(n);
      if (n == 0 || c.lingered > kLingerBytes ||
          (n < 0 && errno != EINTR && errno != EAGAIN && errno != EWOULDBLOCK)) {
        Close(c);
        return;
      }
      if (n < 0 && errno != EINTR) return;
    }
  }
  // Never more than one request head and body ahead (pipelining): the rest stays in the
  // kernel's buffer until the answers before it are out.
  const size_t cap = o.limits.max_head_bytes + o.limits.max_body_bytes;
  char buf[kReadChunk];
  while (true) {
    const size_t room =
        c.streaming() ? sizeof buf : std::min(sizeof buf, cap - std::min(cap, c.in.size()));
    if (room == 0 || c.close_after_write || stopping) break;
    const ssize_t n = recv(fd, buf, room, 0);
    if (n > 0) {
      // A stream's client has nothing to say: what it sends is dropped.
      if (!c.streaming()) c.in.append(buf, static_cast<size_t>(n));
      if (static_cast<size_t>(n) < room) break;
      if (!c.streaming()) break;
      continue;
    }
    if (n == 0) {
      c.peer_closed = true;
      break;
    }
    if (errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) {
      Close(c);
      return;
    }
    break;
  }
  if (c.streaming()) {
    if (c.peer_closed) Close(c);
    return;
  }
  Process(c);
}

// Answers every complete request in `in`, in order, while the output has room.
void HttpServer::Impl::Loop::Process(Conn& c) {
  const ServerOptions& o = server->options;
  const int fd = c.fd;
  const uint32_t gen = c.gen;
  c.processing = true;
  while (!c.close_after_write && !c.streaming() && c.pending() < o.max_pending_output) {
    if (c.in.empty()) break;
    HeadParse p = ParseRequestHead(c.in, o.limits);
    if (p.state == HeadParse::State::kIncomplete) break;
    if (p.state == HeadParse::State::kError) {
      spdlog::debug("http {}: {} sent a bad request: {} {}", label, c.peer, p.status, p.reason);
      c.in.clear();
      c.close_after_write = true;
      Queue(c, Serialize(JsonError(p.status, p.reason), false, false, 1));
      break;
    }
    const RequestHead& head = p.head;
    if (c.in.size() < head.head_bytes + head.body_bytes) break;  // the body is still coming
    c.in.erase(0, head.head_bytes + head.body_bytes);            // the body is read and discarded
    if (head.method == "GET" && server->options.watch != nullptr &&
        !server->handler_options.probe_only && DecodeTarget(head.target).path == "/leader/watch") {
      StartStream(c, head);
    } else {
      Answer(c, head);
    }
    if (!Alive(fd, gen)) return;
  }
  c.processing = false;
  if (c.lingering) return;
  if (c.peer_closed && c.pending() == 0 && !c.streaming()) {
    Close(c);
    return;
  }
  Interest(c);
}

void HttpServer::Impl::Loop::Answer(Conn& c, const RequestHead& head) {
  const ServerOptions& o = server->options;
  DecodedTarget target = DecodeTarget(head.target);
  HttpQuery q;
  q.method = head.method;
  q.path = std::move(target.path);
  q.params = std::move(target.params);
  q.loopback_peer = c.loopback;
  bool head_keep = head.keep_alive;
  HttpAnswer a;
  if (q.path == "/leader/watch" && q.method == "HEAD" && o.watch != nullptr &&
      !server->handler_options.probe_only) {
    a.content_type = "text/event-stream";
  } else {
    const bool promise = AnswersLeadership(q.path) && !server->handler_options.probe_only;
    try {
      a = Handle(q, server->source(promise), *server->clock, server->handler_options);
    } catch (const std::exception& e) {
      // Out of memory, most likely: this request fails, the loop and the election go on.
      spdlog::error("http {}: {} {} failed: {}", label, q.method, q.path, e.what());
      a = JsonError(500, "internal error");
      head_keep = false;
    }
  }
  // The path may hold any byte: the log's formatter escapes every message (app/logging.cpp).
  spdlog::debug("http {}: {} {} from {} -> {}", label, q.method, q.path, c.peer, a.status);
  ++c.answered;
  const bool keep = head_keep && c.answered < o.max_requests_per_connection;
  if (!keep) c.close_after_write = true;
  Queue(c, Serialize(a, head.method == "HEAD", keep, head.minor_version));
}

void HttpServer::Impl::Loop::StartStream(Conn& c, const RequestHead& head) {
  WatchHub* hub = server->options.watch;
  auto client = hub->Attach(c.peer);
  if (!client.ok()) {
    HttpAnswer a = JsonError(503, client.status().message());
    a.headers.emplace_back("Retry-After", "1");
    ++c.answered;
    const bool keep = head.keep_alive && c.answered < server->options.max_requests_per_connection;
    if (!keep) c.close_after_write = true;
    Queue(c, Serialize(a, false, keep, head.minor_version));
    return;
  }
  c.client = std::move(client).value();
  c.in.clear();
  c.in.shrink_to_fit();
  --ordinary;
  c.chunked = head.minor_version == 1;
  const int sfd = hub->SignalFd(*c.client);
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.u64 = Key(Tag::kSignal, sfd, c.gen);
  epoll_ctl(epoll_fd, EPOLL_CTL_ADD, sfd, &ev);
  by_signal.emplace(sfd, &c);
  // An HTTP/1.0 client cannot read chunks: its stream ends when the connection does.
  const int fd = c.fd;
  const uint32_t gen = c.gen;
  Queue(c, std::string("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                       "Cache-Control: no-store\r\n") +
               (c.chunked ? "Transfer-Encoding: chunked\r\n" : "Connection: close\r\n") + "\r\n");
  if (!Alive(fd, gen)) return;
  c.last_frame = Steady::now();
  Arm(c.last_frame + hub->options().heartbeat);
  TakeFrames(c);
}

void HttpServer::Impl::Loop::OnSignal(Conn& c) {
  const int fd = c.fd;
  const uint32_t gen = c.gen;
  TakeFrames(c);
  if (!Alive(fd, gen)) return;
  if (c.stream_ended && c.pending() == 0) Close(c);
}

void HttpServer::Impl::Loop::TakeFrames(Conn& c) {
  WatchHub* hub = server->options.watch;
  if (c.stream_ended) return;
  const bool full = c.pending() >= kStreamOutputLow;
  WatchHub::Frames f = hub->Take(*c.client, full ? 0 : kFramesPerTake);
  if (full) {
    // Its frames wait in the hub's queue; once the hub cut it off, nothing it could still
    // read is worth waiting for.
    if (f.ended) Close(c);
    return;
  }
  std::string data;
  for (const std::string& frame : f.frames) data += c.chunked ? Chunk(frame) : frame;
  if (f.ended) {
    c.stream_ended = true;
    if (c.chunked) data += "0\r\n\r\n";
  }
  if (!f.frames.empty()) {
    c.last_frame = Steady::now();
    Arm(c.last_frame + hub->options().heartbeat);
  }
  if (!data.empty()) Queue(c, std::move(data));
}

void HttpServer::Impl::Loop::Queue(Conn& c, std::string data) {
  if (c.pending() == 0) {
    c.out = std::move(data);
    c.out_off = 0;
    c.write_deadline = Steady::now() + server->options.write_timeout;
    Arm(c.write_deadline);
  } else {
    c.out += data;
  }
  Flush(c);
}

void HttpServer::Impl::Loop::Flush(Conn& c) {
  while (c.pending() > 0) {
    const ssize_t n = send(c.fd, c.out.data() + c.out_off, c.pending(), MSG_NOSIGNAL);
    if (n > 0) {
      c.out_off += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    Close(c);
    return;
  }
  if (c.pending() > 0) {
    Interest(c);
    return;
  }
  c.out.clear();
  c.out_off = 0;
  if (c.streaming()) {
    if (c.stream_ended) {
      Close(c);
      return;
    }
    Arm(c.last_frame + server->options.watch->options().heartbeat);
    TakeFrames(c);  // frames left in the hub's queue while the output was full
    return;
  }
  if (c.close_after_write || c.peer_closed) {
    Linger(c);
    return;
  }
  const Steady::time_point now = Steady::now();
  c.wait_since = now;
  c.request_deadline = now + server->options.head_timeout;
  Arm(c.request_deadline);
  // Requests that waited behind this answer (pipelining); inside Process() its loop goes on.
  if (!c.in.empty() && !c.processing) {
    Process(c);
  } else {
    Interest(c);
  }
}

void HttpServer::Impl::Loop::Interest(Conn& c) {
  // Level-triggered: ask only for what the connection can act on now, or the loop spins.
  uint32_t want = 0;
  if (c.pending() > 0) want |= EPOLLOUT;
  if (c.lingering ||
      (!c.peer_closed && (c.streaming() || (!c.close_after_write &&
                                            c.pending() < server->options.max_pending_output)))) {
    want |= EPOLLIN | EPOLLRDHUP;
  }
  if (c.registered && want == c.interest) return;
  epoll_event ev{};
  ev.events = want;
  ev.data.u64 = Key(Tag::kSocket, c.fd, c.gen);
  epoll_ctl(epoll_fd, c.registered ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, c.fd, &ev);
  c.registered = true;
  c.interest = want;
}

void HttpServer::Impl::Loop::Linger(Conn& c) {
  if (stopping) {
    Close(c);
    return;
  }
  // Half-close: the peer reads the whole answer, then the end.
  shutdown(c.fd, SHUT_WR);
  c.lingering = true;
  c.in.clear();
  c.request_deadline = Steady::now() + kLinger;
  Arm(c.request_deadline);
  Interest(c);
}

void HttpServer::Impl::Loop::Close(Conn& c) {
  const int fd = c.fd;
  if (c.streaming()) {
    const int sfd = server->options.watch->SignalFd(*c.client);
    epoll_ctl(epoll_fd, EPOLL_CTL_DEL, sfd, nullptr);
    by_signal.erase(sfd);
  } else {
    --ordinary;
  }
  epoll_ctl(epoll_fd, EPOLL_CTL_DEL, fd, nullptr);
  close(fd);
  conns.erase(fd);  // drops the hub client: it unregisters
}

void HttpServer::Impl::Loop::Sweep(Steady::time_point now) {
  const ServerOptions& o = server->options;
  next_sweep = Steady::time_point::max();
  std::vector<Conn*> expired, late;
  for (auto& [fd, c] : conns) {
    if (c->pending() > 0) {
      if (now >= c->write_deadline) {
        expired.push_back(c.get());
        continue;
      }
      Arm(c->write_deadline);
    }
    if (c->streaming()) {
      // While output waits, its write deadline is the stream's timer; a ping would add nothing.
      if (c->pending() == 0) {
        const Steady::time_point ping_at = c->last_frame + o.watch->options().heartbeat;
        if (now >= ping_at) {
          late.push_back(c.get());
        } else {
          Arm(ping_at);
        }
      }
    } else if (c->pending() == 0) {
      if (now >= c->request_deadline) {
        expired.push_back(c.get());
      } else {
        Arm(c->request_deadline);
      }
    }
  }
  for (Conn* c : expired) {
    if (!c->streaming() && c->pending() == 0 && !c->in.empty() && !c->lingering) {
      // A request begun and not finished in time gets an answer; an idle keep-alive
      // connection is just closed, as clients expect of an idle timeout.
      c->close_after_write = true;
      c->in.clear();
      const int fd = c->fd;
      const uint32_t gen = c->gen;
      Queue(*c, Serialize(JsonError(408, "the request did not arrive within the time limit"), false,
                          false, 1));
      if (Alive(fd, gen) && c->pending() > 0) {
        // It did not take the answer at once: it gets no more time.
        Close(*c);
      }
      continue;
    }
    Close(*c);
  }
  for (Conn* c : late) {
    c->last_frame = now;
    Arm(now + o.watch->options().heartbeat);
    Queue(*c, c->chunked ? Chunk(WatchHub::kPing) : std::string(WatchHub::kPing));
  }
}

Status HttpServer::Impl::Bind(Loop& loop, int port_wanted, int* port_bound) {
  const ListenEndpoint& ep = loop.endpoint;
  const int family = ep.ipv6 ? AF_INET6 : AF_INET;
  const int fd = socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return Status(Code::kUnavailable, std::strerror(errno));
  loop.listen_fd = fd;
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
    return Status(Code::kUnavailable, std::strerror(errno));
  }
  len = sizeof addr;
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  *port_bound = ep.ipv6 ? ntohs(reinterpret_cast<sockaddr_in6&>(addr).sin6_port)
                        : ntohs(reinterpret_cast<sockaddr_in&>(addr).sin_port);
  loop.epoll_fd = epoll_create1(EPOLL_CLOEXEC);
  loop.wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  loop.spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (loop.epoll_fd < 0 || loop.wake_fd < 0)
    return Status(Code::kUnavailable, std::strerror(errno));
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.u64 = Key(Tag::kListen, fd);
  epoll_ctl(loop.epoll_fd, EPOLL_CTL_ADD, fd, &ev);
  ev.data.u64 = Key(Tag::kWake, loop.wake_fd);
  epoll_ctl(loop.epoll_fd, EPOLL_CTL_ADD, loop.wake_fd, &ev);
  return Status::Ok();
}

HttpServer::HttpServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

HttpServer::~HttpServer() { Stop(); }

Result<std::unique_ptr<HttpServer>> HttpServer::Create(std::string_view address,
                                                       SnapshotSource source, const Clock& clock,
                                                       HandlerOptions handler_options,
                                                       ServerOptions options) {
  auto parsed = ParseListenAddress(address);
  if (!parsed.ok()) return parsed.status();
  if (!source) return Status(Code::kInvalid, "http server: no snapshot source");
  if (options.max_connections < 1 || options.max_requests_per_connection < 1 ||
      options.limits.max_head_bytes < 64 || options.limits.max_headers < 1 ||
      options.head_timeout <= Duration::zero() || options.write_timeout <= Duration::zero()) {
    return Status(Code::kInvalid, "http server: every limit must be positive");
  }
  auto impl = std::make_unique<Impl>();
  impl->address = std::move(parsed).value();
  impl->source = std::move(source);
  impl->clock = &clock;
  impl->handler_options = std::move(handler_options);
  impl->options = options;
  return std::unique_ptr<HttpServer>(new HttpServer(std::move(impl)));
}

Status HttpServer::Start() {
  std::lock_guard<std::mutex> l(impl_->mu);
  if (impl_->started || impl_->stopped) {
    return Status(Code::kInvalid, "http server: Start() after Start() or Stop()");
  }
  impl_->started = true;
  int port = impl_->address.port;
  for (const ListenEndpoint& ep : impl_->address.endpoints) {
    auto loop = std::make_unique<Impl::Loop>();
    loop->server = impl_.get();
    loop->endpoint = ep;
    int bound = 0;
    // Port 0: the kernel picks for the first endpoint; the others reuse its choice.
    const Status st = impl_->Bind(*loop, port, &bound);
    const std::string label = EndpointLabel(ep, st.ok() ? bound : port);
    if (st.ok()) {
      port = bound;
      loop->label = label;
      if (!impl_->handler_options.probe_only && !IsLoopbackHost(ep.host)) {
        spdlog::warn(
            "http: the local API listens on {}, which is not a loopback address: every peer "
            "that can reach it can read the leader and the lock (POST /release is still "
            "refused from off the loopback)",
            label);
      }
      Impl::Loop* raw = loop.get();
      loop->thread = std::thread([raw] { raw->Run(); });
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

void HttpServer::Stop() {
  std::lock_guard<std::mutex> l(impl_->mu);
  impl_->StopLocked();
}

int HttpServer::port() const {
  std::lock_guard<std::mutex> l(impl_->mu);
  return impl_->loops.empty() ? 0 : impl_->port;
}

std::vector<std::string> HttpServer::listening() const {
  std::lock_guard<std::mutex> l(impl_->mu);
  std::vector<std::string> out;
  if (impl_->stopped) return out;
  for (const auto& loop : impl_->loops) out.push_back(loop->label);
  return out;
}

}  // namespace leasehold::server
