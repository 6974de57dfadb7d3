// The bounded listener alone (src/http: no election, no route), against hostile peers on
// 127.0.0.1 port 0, on a FakeClock: the test advances the clock and wakes the listener, and
// waits for the state it counts from, never sleeps.
#include "http/listener.h"

#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <string>

#include "fakes/fake_clock.h"
#include "fakes/raw_client.h"
#include "http/event_loop.h"
#include "http/response.h"

namespace leasehold::http {
namespace {

using namespace std::chrono_literals;
using localapi::RawClient;  // test/fakes/raw_client.h

// A stream whose frames the test pushes; its eventfd wakes the listener.
class TestStream final : public Stream {
 public:
  TestStream() : efd_(eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) {}
  ~TestStream() override { close(efd_); }
  void Push(std::string frame) {
    {
      std::lock_guard<std::mutex> l(mu_);
      frames_.push_back(std::move(frame));
    }
    const uint64_t one = 1;
    [[maybe_unused]] ssize_t n = write(efd_, &one, sizeof one);
  }
  Frames Take(size_t max) override {
    uint64_t v;
    [[maybe_unused]] ssize_t n = read(efd_, &v, sizeof v);
    std::lock_guard<std::mutex> l(mu_);
    Frames f;
    while (!frames_.empty() && f.frames.size() < max) {
      f.frames.push_back(frames_.front());
      frames_.erase(frames_.begin());
    }
    f.ended = ended_ && frames_.empty();
    return f;
  }
  int SignalFd() const override { return efd_; }
  // Ends the stream (the listener's on_stop): it closes once its frames are written.
  void End() {
    {
      std::lock_guard<std::mutex> l(mu_);
      ended_ = true;
    }
    const uint64_t one = 1;
    [[maybe_unused]] ssize_t n = write(efd_, &one, sizeof one);
  }
  Duration Heartbeat() const override { return 15s; }
  std::string KeepAlive() const override { return ": keep-alive\n\n"; }

 private:
  const int efd_;
  std::mutex mu_;
  std::vector<std::string> frames_;
  bool ended_ = false;
};

// GET /stream streams `stream`; everything else answers "hi", and says whether the peer was on
// loopback.
class TestRouter final : public Router {
 public:
  Routed Serve(const RequestHead& head, const Peer& from) const override {
    ++routed;
    Routed r;
    r.keep_alive = head.keep_alive;
    if (head.target == "/stream") {
      r.stream = stream;
      r.chunked = head.minor_version == 1;
      return r;
    }
    r.answer.content_type = "text/plain";
    r.answer.body = from.loopback ? "hi loopback" : "hi";
    return r;
  }
  std::shared_ptr<TestStream> stream = std::make_shared<TestStream>();
  mutable std::atomic<int> routed{0};
};

struct Fixture {
  explicit Fixture(ListenerOptions o = {}) {
    // Stop() ends the streams first, as the local API's hub does: its wait for queued output is
    // on the fake clock, which nobody advances then.
    o.on_stop = [this] { router->stream->End(); };
    auto l = Listener::Create("127.0.0.1:0", router, clock, std::move(o));
    REQUIRE(l.ok());
    listener = std::move(l).value();
    REQUIRE(listener->Start().ok());
    port = listener->port();
  }
  void Advance(Duration d) {
    clock.Advance(d);
    listener->Wake();
  }
  FakeClock clock;
  std::shared_ptr<TestRouter> router = std::make_shared<TestRouter>();
  std::unique_ptr<Listener> listener;
  int port = 0;
};

TEST_CASE("listener: answers through the Router; the peer address is the socket's") {
  Fixture f;
  RawClient cli(f.port);
  REQUIRE(cli.Send("GET / HTTP/1.1\r\nHost: x\r\nX-Forwarded-For: 10.0.0.1\r\n\r\n"));
  REQUIRE(cli.ReadUntil("hi loopback"));
  CHECK(cli.data().rfind("HTTP/1.1 200 OK\r\n", 0) == 0);
}

TEST_CASE("listener: an idle connection closes exactly head_timeout after its last answer") {
  ListenerOptions o;
  o.head_timeout = 2s;
  Fixture f(o);
  RawClient cli(f.port);
  REQUIRE(cli.Get("/"));
  REQUIRE(cli.ReadUntil("hi"));
  f.Advance(1999ms);
  REQUIRE(cli.Get("/"));  // still open: answered
  REQUIRE(cli.ReadUntil("hi", 2));
  f.Advance(2s);
  CHECK(cli.ReadToEof(5s));
  CHECK(cli.Count("HTTP/1.1 200") == 2);
}

TEST_CASE("listener: a request that never completes gets 408 once head_timeout passed") {
  ListenerOptions o;
  o.head_timeout = 2s;
  Fixture f(o);
  RawClient cli(f.port);
  REQUIRE(cli.Get("/"));  // so that the accept is behind us
  REQUIRE(cli.ReadUntil("hi"));
  REQUIRE(cli.Send("GET / HTTP/1.1\r\nX-Slow: "));
  for (int i = 0; i < 19; ++i) {
    REQUIRE(cli.Send("x"));
    f.Advance(100ms);
  }
  f.Advance(100ms);  // 2 s since the answer
  // Closed (with a 408 when the loop had read the partial head before the deadline struck, else
  // as an idle connection), and the incomplete request never reached the Router.
  CHECK(cli.ReadToEof(5s));
  CHECK(cli.Count("HTTP/1.1 200") == 1);
  CHECK(f.router->routed == 1);
}

TEST_CASE("listener: a header flood gets 431 and the close") {
  Fixture f;
  RawClient cli(f.port);
  std::string flood = "GET / HTTP/1.1\r\n";
  for (int i = 0; i < 100; ++i)
    flood += "X-H" + std::to_string(i) + ": " + std::string(300, 'v') + "\r\n";
  cli.Send(flood);
  CHECK(cli.ReadToEof(5s));
  CHECK(cli.data().rfind("HTTP/1.1 431 ", 0) == 0);
  CHECK(f.router->routed == 0);
}

TEST_CASE("listener: a stream's frames, and its keep-alive after each heartbeat of silence") {
  Fixture f;
  RawClient cli(f.port);
  REQUIRE(cli.Get("/stream"));
  REQUIRE(cli.ReadUntil("Transfer-Encoding: chunked\r\n"));
  f.router->stream->Push("frame one\n");
  REQUIRE(cli.ReadUntil("frame one\n"));
  f.Advance(15s);
  CHECK(cli.ReadUntil(": keep-alive\n\n"));
  CHECK(cli.Count(": keep-alive") == 1);
}

TEST_CASE("event loop: a descriptor epoll will not watch fails Open, never a deaf listener") {
  // A directory cannot be polled: epoll_ctl(ADD) answers EPERM, as it would for any listener
  // epoll refuses. Start-up must fail rather than run a loop that accepts nothing.
  const int fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  REQUIRE(fd >= 0);
  ListenerOptions o;
  FakeClock clock;
  std::shared_ptr<TestRouter> router = std::make_shared<TestRouter>();
  EventLoop loop(o, *router, clock);
  const Status st = loop.Open(fd);  // takes fd: the loop closes it
  CHECK(st.code() == Code::kUnavailable);
  CHECK(st.message().find("epoll_ctl") != std::string::npos);
}

}  // namespace
}  // namespace leasehold::http
