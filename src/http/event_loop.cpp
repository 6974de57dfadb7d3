#include "http/event_loop.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <spdlog/spdlog.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "base/listen_address.h"
#include "http/response.h"

namespace leasehold::http {
namespace {

// A stream takes frames from its Stream only while less than this much of its output waits: a
// reader that falls behind then leaves them queued there (the local API's hub cuts it off at
// its queue limit).
constexpr size_t kStreamOutputLow = size_t{16} * 1024;
// Frames taken from a Stream per wake-up.
constexpr size_t kFramesPerTake = 16;
// Connections accepted per wake-up of the listening socket, so that a flood of connects cannot
// keep the loop from serving the connections it already has.
constexpr int kAcceptsPerWake = 64;
// Bytes read from a socket per wake-up.
constexpr size_t kReadChunk = size_t{16} * 1024;
// Shed connections are logged at most this often, with their count.
constexpr auto kShedLogEvery = std::chrono::seconds(10);

// After the last answer of a connection (Connection: close, an error), what the peer still
// sends is read and dropped for at most this long before the close: closing with unread input
// would send a reset, which can destroy the answer before the peer has read it.
constexpr auto kLinger = std::chrono::seconds(1);
// ... and for at most this many bytes: a peer that keeps sending gets the reset.
constexpr size_t kLingerBytes = size_t{64} * 1024;

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

}  // namespace

EventLoop::EventLoop(const ListenerOptions& options, const Router& router, const Clock& clock)
    : options_(options), router_(router), clock_(clock) {}

EventLoop::~EventLoop() {
  for (int fd : {listen_fd_, epoll_fd_, wake_fd_, spare_fd_}) {
    // Nothing was written through these: a failed close loses no data, and Linux frees the
    // descriptor even then (close(2)), so there is nothing to retry.
    if (fd >= 0) (void)close(fd);
  }
}

Status EventLoop::Open(int listen_fd) {
  listen_fd_ = listen_fd;
  epoll_fd_ = epoll_create1(EPOLL_CLOEXEC);
  wake_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  spare_fd_ = open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (epoll_fd_ < 0 || wake_fd_ < 0) return Status(Code::kUnavailable, std::strerror(errno));
  // A listener that epoll does not watch would accept nothing, and one without its wake fd could
  // not be stopped: either fails start-up.
  if (!Ctl(EPOLL_CTL_ADD, listen_fd_, EPOLLIN, Key(Tag::kListen, listen_fd_)) ||
      !Ctl(EPOLL_CTL_ADD, wake_fd_, EPOLLIN, Key(Tag::kWake, wake_fd_))) {
    return Status(Code::kUnavailable,
                  std::string("epoll_ctl on the listening socket: ") + std::strerror(errno));
  }
  return Status::Ok();
}

void EventLoop::Start(std::string label) {
  label_ = std::move(label);
  thread_ = std::thread([this] { Run(); });
}

void EventLoop::RequestStop() {
  stopping_ = true;
  const uint64_t one = 1;
  [[maybe_unused]] ssize_t n = write(wake_fd_, &one, sizeof one);
}

void EventLoop::Wake() {
  const uint64_t one = 1;
  [[maybe_unused]] ssize_t n = write(wake_fd_, &one, sizeof one);
}

void EventLoop::Join() {
  if (thread_.joinable()) thread_.join();
}

void EventLoop::Run() {
  constexpr int kMaxEvents = 64;
  epoll_event events[kMaxEvents];
  MonoTime stop_deadline = MonoTime::max();
  while (true) {
    const MonoTime now = clock_.MonotonicNow();
    if (stopping_ && stop_deadline == MonoTime::max()) {
      // Stop accepting; what is queued (a stream's final event, an answer) has write_timeout
      // to leave, and nothing new is read.
      stop_deadline = now + options_.write_timeout;
      BeginStop();
    }
    if (stopping_ && (conns_.empty() || now >= stop_deadline)) break;
    if (now >= next_sweep_) Sweep(now);
    MonoTime until = std::min(next_sweep_, stop_deadline);
    int timeout_ms = -1;
    if (until != MonoTime::max()) {
      timeout_ms = static_cast<int>(std::clamp<int64_t>(
          std::chrono::ceil<std::chrono::milliseconds>(until - now).count(), 0, 60000));
    }
    const int n = epoll_wait(epoll_fd_, events, kMaxEvents, timeout_ms);
    if (n < 0) {
      if (errno == EINTR) continue;
      spdlog::error("http {}: epoll_wait: {}", label_, std::strerror(errno));
      break;
    }
    // The listener goes last: the hang-ups and requests that arrived with it in this batch are
    // taken first, so that a connection whose peer has already closed it is gone before Accept
    // counts connections against max_connections and sheds a live one in its place.
    const epoll_event* listener = nullptr;
    for (int i = 0; i < n; ++i) {
      if (static_cast<Tag>(events[i].data.u64 >> 56) == Tag::kListen) {
        listener = &events[i];
      } else {
        Dispatch(events[i]);
      }
    }
    if (listener != nullptr) Dispatch(*listener);
  }
  std::vector<Connection*> all;
  for (auto& [fd, c] : conns_) all.push_back(c.get());
  for (Connection* c : all) Close(*c);
}

void EventLoop::BeginStop() {
  // Logged by Ctl if it fails; the loop then may still see the listener ready, but Accept takes
  // nothing once stopping_ is set, so a failure costs wake-ups, not a connection.
  (void)Ctl(EPOLL_CTL_DEL, listen_fd_, 0, 0);
  std::vector<Connection*> all;
  for (auto& [fd, c] : conns_) all.push_back(c.get());
  for (Connection* c : all) {
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

void EventLoop::Dispatch(const epoll_event& event) {
  const uint64_t key = event.data.u64;
  const auto tag = static_cast<Tag>(key >> 56);
  const auto gen = static_cast<uint32_t>((key >> 32) & 0xffffffu);
  const int fd = static_cast<int>(key & 0xffffffffu);
  if (tag == Tag::kListen) {
    Accept();
  } else if (tag == Tag::kWake) {
    uint64_t v;
    [[maybe_unused]] ssize_t r = read(wake_fd_, &v, sizeof v);
  } else if (tag == Tag::kSignal) {
    const auto it = by_signal_.find(fd);
    if (it != by_signal_.end() && (it->second->gen & 0xffffffu) == gen) OnSignal(*it->second);
  } else {
    const auto it = conns_.find(fd);
    if (it != conns_.end() && (it->second->gen & 0xffffffu) == gen) {
      OnSocket(*it->second, event.events);
    }
  }
}

void EventLoop::Accept() {
  for (int i = 0; i < kAcceptsPerWake && !stopping_; ++i) {
    // At the limit after accepting in this wake: the connections just answered may have been
    // closed by their peers already, unseen until the next epoll_wait. The listener is
    // level-triggered, so it is back in the next batch, after those hang-ups; shed only then.
    if (i > 0 && ordinary_ >= options_.max_connections) return;
    sockaddr_storage peer{};
    socklen_t len = sizeof peer;
    const int fd =
        accept4(listen_fd_, reinterpret_cast<sockaddr*>(&peer), &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
    const MonoTime now = clock_.MonotonicNow();
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      if (errno == EMFILE || errno == ENFILE) {
        // Out of descriptors: make room by shedding, or else refuse this one connection
        // through the spare descriptor, so that the backlog does not fill with it.
        if (ordinary_ > 0) {
          ShedOne(now);
          continue;
        }
        if (spare_fd_ >= 0) {
          // Neither descriptor carried data of ours: a failed close loses nothing, and Linux
          // frees the descriptor even then.
          (void)close(spare_fd_);
          const int refused = accept(listen_fd_, nullptr, nullptr);
          if (refused >= 0) (void)close(refused);
          spare_fd_ = open("/dev/null", O_RDONLY | O_CLOEXEC);
        }
      }
      return;  // EAGAIN: nothing more to accept
    }
    if (ordinary_ >= options_.max_connections) ShedOne(now);
    auto c = std::make_unique<Connection>();
    c->fd = fd;
    c->gen = ++next_gen_ & 0xffffffu;
    c->peer = PeerLabel(peer);
    c->loopback = IsLoopbackAddress(peer);
    c->wait_since = now;
    c->wait_seq = ++next_wait_seq_;
    c->request_deadline = now + options_.head_timeout;
    Arm(c->request_deadline);
    Connection& ref = *c;
    conns_.emplace(fd, std::move(c));
    ++ordinary_;
    Interest(ref);
    // The request often arrives with the connection: serve it now, ahead of older ones.
    Read(ref);
  }
}

void EventLoop::ShedOne(MonoTime now) {
  Connection* victim = nullptr;
  for (auto& [fd, c] : conns_) {
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
    } else if (c->wait_since < victim->wait_since ||
               (c->wait_since == victim->wait_since && c->wait_seq < victim->wait_seq)) {
      // Ties (a clock that did not move) go to the one that began waiting first.
      victim = c.get();
    }
  }
  if (victim == nullptr) return;
  ++shed_unlogged_;
  if (now - shed_logged_at_ >= kShedLogEvery) {
    spdlog::warn(
        "http {}: {} connection(s) shed to stay within {} (the longest waiting for a "
        "request first)",
        label_, shed_unlogged_, options_.max_connections);
    shed_unlogged_ = 0;
    shed_logged_at_ = now;
  }
  Close(*victim);
}

void EventLoop::OnSocket(Connection& c, uint32_t events) {
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

void EventLoop::Read(Connection& c) {
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
  const size_t cap = options_.limits.max_head_bytes + options_.limits.max_body_bytes;
  char buf[kReadChunk];
  while (true) {
    const size_t room =
        c.streaming() ? sizeof buf : std::min(sizeof buf, cap - std::min(cap, c.in.size()));
    if (room == 0 || c.close_after_write || stopping_) break;
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
void EventLoop::Process(Connection& c) {
  const int fd = c.fd;
  const uint32_t gen = c.gen;
  c.processing = true;
  while (!c.close_after_write && !c.streaming() && c.pending() < options_.max_pending_output) {
    if (c.in.empty()) break;
    HeadParse p = ParseRequestHead(c.in, options_.limits);
    if (p.state == HeadParse::State::kIncomplete) break;
    if (p.state == HeadParse::State::kError) {
      spdlog::debug("http {}: {} sent a bad request: {} {}", label_, c.peer, p.status, p.reason);
      c.in.clear();
      c.close_after_write = true;
      Queue(c, SerializeAnswer(JsonError(p.status, p.reason), false, false, 1));
      break;
    }
    const RequestHead& head = p.head;
    if (c.in.size() < head.head_bytes + head.body_bytes) break;  // the body is still coming
    c.in.erase(0, head.head_bytes + head.body_bytes);            // the body is read and discarded
    Routed routed = router_.Serve(head, Peer{label_, c.peer, c.loopback});
    if (routed.stream != nullptr) {
      StartStream(c, std::move(routed));
    } else {
      Respond(c, head, routed);
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

void EventLoop::Respond(Connection& c, const RequestHead& head, const Routed& routed) {
  ++c.answered;
  const bool keep = routed.keep_alive && c.answered < options_.max_requests_per_connection;
  if (!keep) c.close_after_write = true;
  Queue(c, SerializeAnswer(routed.answer, head.method == "HEAD", keep, head.minor_version));
}

void EventLoop::StartStream(Connection& c, Routed routed) {
  c.client = std::move(routed.stream);
  c.in.clear();
  c.in.shrink_to_fit();
  --ordinary_;
  c.chunked = routed.chunked;
  const int sfd = c.client->SignalFd();
  if (!Ctl(EPOLL_CTL_ADD, sfd, EPOLLIN, Key(Tag::kSignal, sfd, c.gen))) {
    // Frames would never be taken: the stream is closed rather than left silent. by_signal_ is
    // still filled, as Close removes the signal fd for every streaming connection.
    Break(c);
  }
  by_signal_.emplace(sfd, &c);
  const int fd = c.fd;
  const uint32_t gen = c.gen;
  // Before the head is queued: writing it may already take and send frames (Flush), which
  // move last_frame on, and the heartbeat must count from the last of them.
  c.last_frame = clock_.MonotonicNow();
  Queue(c, StreamHead(c.chunked));
  if (!Alive(fd, gen)) return;
  Arm(c.last_frame + c.client->Heartbeat());
  TakeFrames(c);
}

void EventLoop::OnSignal(Connection& c) {
  const int fd = c.fd;
  const uint32_t gen = c.gen;
  TakeFrames(c);
  if (!Alive(fd, gen)) return;
  if (c.stream_ended && c.pending() == 0) Close(c);
}

void EventLoop::TakeFrames(Connection& c) {
  if (c.stream_ended) return;
  const bool full = c.pending() >= kStreamOutputLow;
  Stream::Frames f = c.client->Take(full ? 0 : kFramesPerTake);
  if (full) {
    // Its frames wait in the Stream's queue; once the Stream cut it off, nothing it could
    // still read is worth waiting for.
    if (f.ended) Close(c);
    return;
  }
  std::string data;
  for (const std::string& frame : f.frames) data += c.chunked ? Chunk(frame) : frame;
  if (f.ended) {
    c.stream_ended = true;
    if (c.chunked) data += kLastChunk;
  }
  if (!f.frames.empty()) {
    c.last_frame = clock_.MonotonicNow();
    Arm(c.last_frame + c.client->Heartbeat());
  }
  if (!data.empty()) Queue(c, std::move(data));
}

void EventLoop::Queue(Connection& c, std::string data) {
  if (c.pending() == 0) {
    c.out = std::move(data);
    c.out_off = 0;
    c.write_deadline = clock_.MonotonicNow() + options_.write_timeout;
    Arm(c.write_deadline);
  } else {
    c.out += data;
  }
  Flush(c);
}

void EventLoop::Flush(Connection& c) {
  // Read before the bytes leave: once the peer has them it may act (a test may advance a fake
  // clock), and the wait for its next request must not count from after that.
  const MonoTime sent_at = clock_.MonotonicNow();
  // A write-ready reported for output that already left (in the round that queued it) is no
  // end of an answer: it must not restart the wait for the next request (found by the
  // fake-clock tests, where such an event can arrive after the clock moved).
  const bool had_output = c.pending() > 0;
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
    Arm(c.last_frame + c.client->Heartbeat());
    TakeFrames(c);  // frames left in the Stream's queue while the output was full
    return;
  }
  if (c.close_after_write || c.peer_closed) {
    Linger(c);
    return;
  }
  if (had_output) {
    c.wait_since = sent_at;
    c.wait_seq = ++next_wait_seq_;
    c.request_deadline = sent_at + options_.head_timeout;
    Arm(c.request_deadline);
  }
  // Requests that waited behind this answer (pipelining); inside Process() its loop goes on.
  if (!c.in.empty() && !c.processing) {
    Process(c);
  } else {
    Interest(c);
  }
}

void EventLoop::Interest(Connection& c) {
  const uint32_t want = c.WantedEvents(options_.max_pending_output);
  if (c.registered && want == c.interest) return;
  if (!Ctl(c.registered ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, c.fd, want,
           Key(Tag::kSocket, c.fd, c.gen))) {
    Break(c);
    return;
  }
  c.registered = true;
  c.interest = want;
}

bool EventLoop::Ctl(int op, int fd, uint32_t events, uint64_t key) {
  epoll_event ev{};
  ev.events = events;
  ev.data.u64 = key;
  if (epoll_ctl(epoll_fd_, op, fd, op == EPOLL_CTL_DEL ? nullptr : &ev) == 0) return true;
  const int err = errno;
  if (!ctl_failure_logged_) {
    ctl_failure_logged_ = true;
    spdlog::error(
        "http {}: epoll_ctl (op {}) failed: {}; affected connections are closed "
        "(logged once)",
        label_, op, std::strerror(err));
  }
  errno = err;
  return false;
}

void EventLoop::Break(Connection& c) {
  c.broken = true;
  Arm(clock_.MonotonicNow());
}

void EventLoop::Linger(Connection& c) {
  if (stopping_) {
    Close(c);
    return;
  }
  // Half-close: the peer reads the whole answer, then the end.
  shutdown(c.fd, SHUT_WR);
  c.lingering = true;
  c.in.clear();
  c.request_deadline = clock_.MonotonicNow() + kLinger;
  Arm(c.request_deadline);
  Interest(c);
}

void EventLoop::Close(Connection& c) {
  const int fd = c.fd;
  if (c.streaming()) {
    const int sfd = c.client->SignalFd();
    // A failed DEL (logged by Ctl) leaves nothing behind: closing the last descriptor of a
    // file removes it from every epoll set, and the Stream closes its signal fd as it goes.
    (void)Ctl(EPOLL_CTL_DEL, sfd, 0, 0);
    by_signal_.erase(sfd);
  } else {
    --ordinary_;
  }
  if (c.registered) (void)Ctl(EPOLL_CTL_DEL, fd, 0, 0);  // as above
  // A socket's close() cannot lose data we still could act on (what is unsent is abandoned
  // either way) and Linux frees the descriptor even when it reports an error.
  (void)close(fd);
  conns_.erase(fd);  // drops the Stream (the local API's hub client unregisters)
}

void EventLoop::Sweep(MonoTime now) {
  next_sweep_ = MonoTime::max();
  std::vector<Connection*> expired, late, broken;
  for (auto& [fd, c] : conns_) {
    if (c->broken) {
      broken.push_back(c.get());
      continue;
    }
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
        const MonoTime ping_at = c->last_frame + c->client->Heartbeat();
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
  for (Connection* c : broken) Close(*c);
  for (Connection* c : expired) {
    if (!c->streaming() && c->pending() == 0 && !c->in.empty() && !c->lingering) {
      // A request begun and not finished in time gets an answer; an idle keep-alive
      // connection is just closed, as clients expect of an idle timeout.
      c->close_after_write = true;
      c->in.clear();
      const int fd = c->fd;
      const uint32_t gen = c->gen;
      Queue(*c, SerializeAnswer(JsonError(408, "the request did not arrive within the time limit"),
                                false, false, 1));
      if (Alive(fd, gen) && c->pending() > 0) {
        // It did not take the answer at once: it gets no more time.
        Close(*c);
      }
      continue;
    }
    Close(*c);
  }
  for (Connection* c : late) {
    c->last_frame = now;
    Arm(now + c->client->Heartbeat());
    const std::string ping = c->client->KeepAlive();
    Queue(*c, c->chunked ? Chunk(ping) : ping);
  }
}

}  // namespace leasehold::http
