// The listener against hostile peers, over real sockets on 127.0.0.1, port 0: oversized and
// malformed heads, slow and idle connections, pipelining, bodies, Range, the connection cap.
// Every loop here is bounded in count and time. The same attacks on the real binary, with the
// shipped limits and RSS measured, are e2e/scenarios/adversarial.py.
#include <arpa/inet.h>
#include <doctest/doctest.h>
#include <netinet/in.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "base/listen_address.h"
#include "election/publisher.h"
#include "fakes/fake_clock.h"
#include "fakes/raw_client.h"
#include "http/request.h"
#include "localapi/metrics.h"
#include "localapi/router.h"
#include "localapi/watch_hub.h"

namespace leasehold::localapi {
namespace {

// The listener (src/http) and its request parser.
using namespace leasehold::http;

using namespace std::chrono_literals;
using Steady = std::chrono::steady_clock;

// Sanitizers slow the attackers' threads in this process as much as the listener, so the
// attack is smaller there; e2e/scenarios/adversarial.py holds 2,000 against the real binary.
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
constexpr double kProbeBudgetMs = 200;
constexpr int kHeldEach = 150;
#else
constexpr double kProbeBudgetMs = 50;
constexpr int kHeldEach = 1000;
#endif

double MsSince(Steady::time_point t) {
  return std::chrono::duration<double, std::milli>(Steady::now() - t).count();
}

// The listener's deadlines are on `clock` (a FakeClock: tests advance it and Wake() the server,
// never sleep), unless `real_time` (the load test, which measures real latencies).
struct Fixture {
  explicit Fixture(http::ListenerOptions so = {}, bool real_time = false) {
    snapshot.identity = "pod-a";
    snapshot.lock = {election::LockType::kLeases, "default", "my-lock"};
    snapshot.observed = true;
    snapshot.record.holder_identity = "pod-b";
    HandlerOptions ho;
    const Clock& server_clock = real_time ? static_cast<const Clock&>(real_clock) : clock;
    ho.started_at = server_clock.MonotonicNow();
    ho.release = [this] { ++releases; };
    ho.metrics = [] { return std::string("leasehold_is_leader 0\n"); };
    auto s = Listen(
        "127.0.0.1:0", [this](election::Reading) { return snapshot; }, server_clock, ho,
        /*watch=*/nullptr, so);
    REQUIRE(s.ok());
    server = std::move(s).value();
    REQUIRE(server->Start().ok());
    port = server->port();
  }
  // Advances the fake clock and has the listener look at it.
  void Advance(Duration d) {
    clock.Advance(d);
    server->Wake();
  }
  FakeClock clock;
  RealClock real_clock;
  election::Snapshot snapshot;
  std::atomic<int> releases{0};
  std::unique_ptr<http::Listener> server;
  int port = 0;
};

std::string Headers(int n, size_t value_bytes) {
  std::string out;
  for (int i = 0; i < n; ++i)
    out += "X-H" + std::to_string(i) + ": " + std::string(value_bytes, 'v') + "\r\n";
  return out;
}

TEST_CASE("ParseRequestHead: limits and grammar") {
  const HeadLimits limits;
  struct Case {
    const char* name;
    std::string bytes;
    HeadParse::State state;
    int status;  // kError
  };
  const std::string get = "GET /leader HTTP/1.1\r\n";
  const std::vector<Case> cases = {
      {"a plain GET", get + "Host: x\r\n\r\n", HeadParse::State::kComplete, 0},
      {"bare LF line ends", "GET / HTTP/1.0\nHost: x\n\n", HeadParse::State::kComplete, 0},
      {"not yet complete", get + "Host: x\r\n", HeadParse::State::kIncomplete, 0},
      {"64 header fields", get + Headers(64, 10) + "\r\n", HeadParse::State::kComplete, 0},
      {"65 header fields", get + Headers(65, 10) + "\r\n", HeadParse::State::kError, 431},
      {"65 header fields, the head not ended yet", get + Headers(65, 10), HeadParse::State::kError,
       431},
      {"a head of exactly 16 KiB",
       get + "X: " + std::string(16384 - get.size() - 7, 'v') + "\r\n\r\n",
       HeadParse::State::kComplete, 0},
      {"a head of 16 KiB + 1", get + "X: " + std::string(16384 - get.size() - 6, 'v') + "\r\n\r\n",
       HeadParse::State::kError, 431},
      {"16 KiB without a line end", std::string(16384, 'G'), HeadParse::State::kError, 431},
      {"a body within the limit", "POST /release HTTP/1.1\r\nContent-Length: 1024\r\n\r\n",
       HeadParse::State::kComplete, 0},
      {"a body over the limit", "POST /release HTTP/1.1\r\nContent-Length: 1025\r\n\r\n",
       HeadParse::State::kError, 413},
      {"conflicting lengths", get + "Content-Length: 1\r\nContent-Length: 2\r\n\r\n",
       HeadParse::State::kError, 400},
      {"a signed length", get + "Content-Length: +1\r\n\r\n", HeadParse::State::kError, 400},
      {"a chunked body", get + "Transfer-Encoding: chunked\r\n\r\n", HeadParse::State::kError, 501},
      {"folded header", get + "X: a\r\n b\r\n\r\n", HeadParse::State::kError, 400},
      {"NUL in a value", get + std::string("X: a\0b\r\n\r\n", 10), HeadParse::State::kError, 400},
      {"CR in a value", get + "X: a\rb\r\n\r\n", HeadParse::State::kError, 400},
      {"space before the colon", get + "X : a\r\n\r\n", HeadParse::State::kError, 400},
      {"HTTP/2.0", "GET / HTTP/2.0\r\n\r\n", HeadParse::State::kError, 505},
      {"no version", "GET /\r\n\r\n", HeadParse::State::kError, 400},
      {"absolute form", "GET http://x/ HTTP/1.1\r\n\r\n", HeadParse::State::kError, 400},
      {"a space in the target", "GET /a b HTTP/1.1\r\n\r\n", HeadParse::State::kError, 400},
      {"a leading empty line", "\r\nGET / HTTP/1.1\r\n\r\n", HeadParse::State::kError, 400},
      {"garbage", std::string("\x16\x03\x01\x02\x00\x01\n\n", 8), HeadParse::State::kError, 400},
  };
  for (const Case& c : cases) {
    SUBCASE(c.name) {
      const HeadParse p = ParseRequestHead(c.bytes, limits);
      CHECK(p.state == c.state);
      CHECK(p.status == c.status);
      if (p.state == HeadParse::State::kComplete) CHECK(p.head.head_bytes == c.bytes.size());
    }
  }
}

TEST_CASE("ParseRequestHead: keep-alive by version and Connection") {
  struct Case {
    const char* head;
    bool keep_alive;
  };
  const std::vector<Case> cases = {
      {"GET / HTTP/1.1\r\n\r\n", true},
      {"GET / HTTP/1.1\r\nConnection: close\r\n\r\n", false},
      {"GET / HTTP/1.1\r\nconnection: Upgrade, CLOSE\r\n\r\n", false},
      {"GET / HTTP/1.0\r\n\r\n", false},
      {"GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n", true},
  };
  for (const Case& c : cases) {
    CAPTURE(c.head);
    const HeadParse p = ParseRequestHead(c.head, {});
    REQUIRE(p.state == HeadParse::State::kComplete);
    CHECK(p.head.keep_alive == c.keep_alive);
  }
}

TEST_CASE("DecodeTarget: path and query are percent-decoded; '+' is a space in the query only") {
  const DecodedTarget t = DecodeTarget("/a%2Fb+c?pretty=1&x=a+b%21&flag&bad=%zz#frag");
  CHECK(t.path == "/a/b+c");
  CHECK(t.params.size() == 4);
  CHECK(t.params.find("pretty")->second == "1");
  CHECK(t.params.find("x")->second == "a b!");
  CHECK(t.params.find("flag")->second.empty());
  CHECK(t.params.find("bad")->second == "%zz");
  CHECK(DecodeTarget("/x%0a%00").path == std::string("/x\n\0", 4));
}

sockaddr_storage V4(const char* ip) {
  sockaddr_storage a{};
  a.ss_family = AF_INET;
  inet_pton(AF_INET, ip, &reinterpret_cast<sockaddr_in&>(a).sin_addr);
  return a;
}
sockaddr_storage V6(const char* ip) {
  sockaddr_storage a{};
  a.ss_family = AF_INET6;
  inet_pton(AF_INET6, ip, &reinterpret_cast<sockaddr_in6&>(a).sin6_addr);
  return a;
}

TEST_CASE("IsLoopbackAddress: only 127.0.0.0/8, ::1 and ::ffff:127.0.0.0/104") {
  struct Case {
    const char* name;
    sockaddr_storage a;
    bool loopback;
  };
  const std::vector<Case> cases = {
      {"127.0.0.1", V4("127.0.0.1"), true},
      {"127.255.0.9", V4("127.255.0.9"), true},
      {"::1", V6("::1"), true},
      {"::ffff:127.0.0.1", V6("::ffff:127.0.0.1"), true},
      {"10.0.0.1", V4("10.0.0.1"), false},
      {"128.0.0.1", V4("128.0.0.1"), false},
      {"0.0.0.0", V4("0.0.0.0"), false},
      {"::", V6("::"), false},
      {"::ffff:10.0.0.1", V6("::ffff:10.0.0.1"), false},
      {"::127.0.0.1 (compatible, not mapped)", V6("::127.0.0.1"), false},
      {"fe80::1", V6("fe80::1"), false},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    CHECK(IsLoopbackAddress(c.a) == c.loopback);
  }
  CHECK(IsLoopbackHost("127.0.0.1"));
  CHECK(IsLoopbackHost("::1"));
  CHECK_FALSE(IsLoopbackHost("0.0.0.0"));
  CHECK_FALSE(IsLoopbackHost("::"));
}

TEST_CASE("a bad request head gets one error answer, then the connection closes") {
  struct Case {
    const char* name;
    std::string bytes;
    const char* status_line;
  };
  const std::string get = "GET /healthz HTTP/1.1\r\n";
  const std::vector<Case> cases = {
      {"65 header fields", get + Headers(65, 10) + "\r\n", "HTTP/1.1 431 "},
      {"a 17 KiB header", get + "X: " + std::string(17 * 1024, 'v') + "\r\n\r\n", "HTTP/1.1 431 "},
      {"a chunked body", "POST /release HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
       "HTTP/1.1 501 "},
      {"a 2 KiB body", "POST /release HTTP/1.1\r\nContent-Length: 2048\r\n\r\n", "HTTP/1.1 413 "},
      {"HTTP/2 preface", "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", "HTTP/1.1 400 "},
      {"TLS on the plain port", std::string("\x16\x03\x01\x00\xa5\x01\x00\x00\xa1\x03\x03\n", 12),
       "HTTP/1.1 400 "},
  };
  Fixture f;
  for (const Case& c : cases) {
    SUBCASE(c.name) {
      RawClient cli(f.port);
      REQUIRE(cli.Send(c.bytes));
      CHECK(cli.ReadToEof());
      CHECK(cli.data().rfind(c.status_line, 0) == 0);
      CHECK(cli.data().find("Connection: close\r\n") != std::string::npos);
      CHECK(cli.Count("HTTP/1.1 ") == 1);
    }
  }
  CHECK(f.releases == 0);
}

TEST_CASE("a header flood is cut off at 16 KiB: 431 and close, whatever the peer goes on sending") {
  Fixture f;
  RawClient cli(f.port);
  REQUIRE(cli.Send("GET /healthz HTTP/1.1\r\n"));
  // 10,000 headers of 8,000 bytes (80 MB) at most: the server stops reading long before.
  std::atomic<size_t> sent{0};
  std::thread flood([&] {
    const std::string header = "X-Flood: " + std::string(8000, 'f') + "\r\n";
    for (int i = 0; i < 10000 && cli.Send(header); ++i) sent += header.size();
  });
  CHECK(cli.ReadToEof(10s));
  flood.join();
  CHECK(cli.data().rfind("HTTP/1.1 431 ", 0) == 0);
  MESSAGE("the flood got " << sent.load() << " bytes into the socket before the close");
  // 16 KiB read, 64 KiB dropped after the answer, the rest is what the kernel's buffers hold.
  CHECK(sent < 16u * 1024 * 1024);
}

TEST_CASE("the request must arrive within head_timeout of the accept or of the last answer") {
  // On the fake clock: no sleep, and the bound is exact.
  http::ListenerOptions so;
  so.head_timeout = 400ms;
  Fixture f(so);

  SUBCASE("slowly: 408, then close") {
    RawClient cli(f.port);
    REQUIRE(cli.Send("GET /healthz HTTP/1.1\r\n"));
    // A byte every 100 ms of fake time: each recv() is quick, the request never completes.
    // Nothing tells when the listener accepted it, so look for the close after each byte (a
    // bounded read, not a sleep): it comes within head_timeout of the accept.
    bool closed = false;
    for (int i = 0; i < 200 && !closed && cli.Send("X"); ++i) {
      f.Advance(100ms);
      closed = cli.ReadToEof(20ms);
    }
    if (!closed) closed = cli.ReadToEof(5s);
    CHECK(closed);
    CHECK(cli.data().rfind("HTTP/1.1 408 ", 0) == 0);
  }
  SUBCASE("nothing at all: closed without an answer") {
    RawClient cli(f.port);
    // Nothing tells when the listener accepted it: every head_timeout of fake time, look for
    // the close (a bounded read, not a sleep); at most the next round after the accept.
    bool closed = false;
    for (int i = 0; i < 50 && !closed; ++i) {
      f.Advance(400ms);
      closed = cli.ReadToEof(100ms);
    }
    CHECK(closed);
    CHECK(cli.data().empty());
  }
  SUBCASE("idle after an answer: closed, counted from the end of that answer") {
    RawClient cli(f.port);
    f.Advance(300ms);  // most of the first wait
    REQUIRE(cli.Get("/healthz"));
    REQUIRE(cli.ReadUntil("ok"));
    f.Advance(399ms);  // 699 ms since the accept, 399 since the answer: still open
    REQUIRE(cli.Get("/healthz"));
    REQUIRE(cli.ReadUntil("ok", 2));
    f.Advance(400ms);
    CHECK(cli.ReadToEof(5s));
    CHECK(cli.Count("HTTP/1.1 ") == 2);
  }
}

TEST_CASE("pipelined requests are all answered, in order") {
  Fixture f;
  RawClient cli(f.port);
  std::string batch;
  for (int i = 0; i < 100; ++i) {
    batch +=
        std::string("GET ") + (i % 2 ? "/is-leader" : "/healthz") + " HTTP/1.1\r\nHost: x\r\n\r\n";
  }
  REQUIRE(cli.Send(batch));
  REQUIRE(cli.ReadUntil("HTTP/1.1 ", 100));
  REQUIRE(cli.ReadUntil("false", 50));
  size_t at = 0;
  for (int i = 0; i < 100; ++i) {
    const std::string want = i % 2 ? "HTTP/1.1 503 " : "HTTP/1.1 200 ";
    const size_t next = cli.data().find("HTTP/1.1 ", at);
    REQUIRE(next != std::string::npos);
    CHECK(cli.data().compare(next, want.size(), want) == 0);
    at = next + 1;
  }
}

TEST_CASE("a request body is read and thrown away, never parsed as a request") {
  Fixture f;
  RawClient cli(f.port);
  const std::string smuggled = "GET /nope HTTP/1.1\r\nHost: x\r\n\r\n";
  REQUIRE(cli.Send(
      "POST /release HTTP/1.1\r\nHost: x\r\nContent-Length: " + std::to_string(smuggled.size()) +
      "\r\n\r\n" + smuggled + "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"));
  REQUIRE(cli.ReadUntil("ok"));
  CHECK(cli.data().rfind("HTTP/1.1 202 ", 0) == 0);
  CHECK(cli.Count("HTTP/1.1 ") == 2);
  CHECK(cli.Count(" 404 ") == 0);
  CHECK(f.releases == 1);
}

TEST_CASE("Range is ignored: the whole body, never 206 or 416") {
  Fixture f;
  for (const char* range : {"bytes=0-3", "bytes=0-,0-,0-,0-,0-,0-", "bytes=99999-"}) {
    CAPTURE(range);
    RawClient cli(f.port);
    REQUIRE(
        cli.Send(std::string("GET /metrics HTTP/1.1\r\nHost: x\r\nRange: ") + range + "\r\n\r\n"));
    REQUIRE(cli.ReadUntil("leasehold_is_leader 0\n"));
    CHECK(cli.data().rfind("HTTP/1.1 200 ", 0) == 0);
    CHECK(cli.data().find("Content-Length: 22\r\n") != std::string::npos);
    CHECK(cli.Count("leasehold_is_leader") == 1);
  }
}

TEST_CASE("a REMOTE_ADDR header is only a header: the peer address comes from the socket") {
  Fixture f;
  RawClient cli(f.port);
  // From loopback, with a header claiming otherwise: still the socket's word that counts.
  REQUIRE(cli.Send("POST /release HTTP/1.1\r\nHost: x\r\nREMOTE_ADDR: 10.1.2.3\r\n\r\n"));
  REQUIRE(cli.ReadUntil("}\n"));
  CHECK(cli.data().rfind("HTTP/1.1 202 ", 0) == 0);
  CHECK(f.releases == 1);
}

TEST_CASE("at most max_requests_per_connection answers; the last says Connection: close") {
  http::ListenerOptions so;
  so.max_requests_per_connection = 3;
  Fixture f(so);
  RawClient cli(f.port);
  std::string batch;
  for (int i = 0; i < 5; ++i) batch += "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n";
  REQUIRE(cli.Send(batch));
  CHECK(cli.ReadToEof());
  CHECK(cli.Count("HTTP/1.1 200 ") == 3);
  CHECK(cli.Count("Connection: close\r\n") == 1);
}

TEST_CASE("a full listener sheds the connection that waited longest, never the newcomer") {
  http::ListenerOptions so;
  so.max_connections = 4;
  Fixture f(so);
  std::vector<std::unique_ptr<RawClient>> old;
  for (int i = 0; i < 4; ++i) {
    old.push_back(std::make_unique<RawClient>(f.port));
    // Answered, so the listener has accepted it; it then waits, idle, for its next request.
    REQUIRE(old.back()->Get("/healthz"));
    REQUIRE(old.back()->ReadUntil("ok"));
    f.clock.Advance(1ms);  // each has waited 1 ms (fake) less than the one before
  }
  RawClient fresh(f.port);
  REQUIRE(fresh.Get("/healthz"));
  CHECK(fresh.ReadUntil("ok"));
  CHECK(old[0]->ReadToEof(2s));  // the oldest was shed
  for (int i = 1; i < 4; ++i) {
    REQUIRE(old[static_cast<size_t>(i)]->Get("/healthz"));
    CHECK(old[static_cast<size_t>(i)]->ReadUntil("ok", 2));
  }
}

TEST_CASE(
    "probes and scrapes on a fresh connection answer fast while 2,000 slow or idle connections "
    "are held") {
  http::ListenerOptions so;
  // Below the attack, so that every new connection sheds one, as in production (256, 2,000).
  so.max_connections = kHeldEach / 4;
  Fixture f(so, /*real_time=*/true);
  constexpr int kIdle = kHeldEach, kSlow = kHeldEach;
  std::atomic<bool> stop{false};
  std::atomic<long> reconnects{0};
  // Idle: connect and send nothing. Slow: a byte every 100 ms, never a whole head. Both connect
  // again when shed, as an attacker would, for as long as the probes run.
  auto hold = [&](int n, bool slow) {
    std::vector<std::unique_ptr<RawClient>> conns;
    for (int i = 0; i < n; ++i) conns.push_back(std::make_unique<RawClient>(f.port));
    while (!stop) {
      for (auto& c : conns) {
        if (stop) break;
        if (slow && !c->Send("X")) {
          c = std::make_unique<RawClient>(f.port);
          c->Send("GET /healthz HTTP/1.1\r\n");
          ++reconnects;
        }
      }
      if (!slow) {
        for (auto& c : conns) {
          if (c->PeerClosed()) {
            c = std::make_unique<RawClient>(f.port);
            ++reconnects;
          }
        }
      }
      std::this_thread::sleep_for(100ms);
    }
  };
  std::thread idle([&] { hold(kIdle, false); });
  std::thread slow([&] { hold(kSlow, true); });
  std::this_thread::sleep_for(500ms);  // both sets connected and cycling

  std::vector<double> ms;
  int failed = 0;
  const auto until = Steady::now() + 20s;
  for (int i = 0; i < 200 && Steady::now() < until; ++i) {
    const auto t = Steady::now();
    RawClient probe(f.port);
    // A kubelet probe, and every third time a Prometheus scrape.
    const char* path = i % 3 == 2 ? "/metrics" : i % 2 ? "/is-leader" : "/healthz";
    const char* answer = i % 3 == 2 ? "leasehold_is_leader 0" : i % 2 ? "false" : "ok";
    const bool ok = probe.Get(path) && probe.ReadUntil(answer, 1, 2s);
    ms.push_back(MsSince(t));
    if (!ok) ++failed;
  }
  stop = true;
  idle.join();
  slow.join();
  std::sort(ms.begin(), ms.end());
  const double p50 = ms[ms.size() / 2], p99 = ms[ms.size() * 99 / 100], max = ms.back();
  MESSAGE((kIdle + kSlow) << " held connections (" << reconnects.load()
                          << " reconnects after a shed): probes p50 " << p50 << " ms, p99 " << p99
                          << " ms, max " << max << " ms");
  CHECK(ms.size() == 200);
  CHECK(failed == 0);
  CHECK(p99 <= kProbeBudgetMs);
}

TEST_CASE("connections their peers closed are not counted against the limit: no live one is shed") {
  // Four clients scrape one after another, each closing its connection and opening the next at
  // once. The listener must take the hang-ups before it counts connections against the limit,
  // or an accept burst counts connections already closed (not yet seen closed) and sheds a live
  // one. A small limit makes the race frequent: with the old accept loop 27 of 50 runs of 400
  // scrapes against a limit of 16 shed a live client; with this many scrapes against 8, the
  // mutant accept-burst-past-limit fails 19 runs of 20. Guarded code: 0 of 100, loaded or not.
  constexpr int kScrapesEach = 1500;
  http::ListenerOptions so;
  so.max_connections = 8;
  Fixture f(so);
  std::atomic<int> answered{0}, failed{0};
  std::vector<std::thread> clients;
  for (int i = 0; i < 4; ++i) {
    clients.emplace_back([&] {
      for (int n = 0; n < kScrapesEach && failed == 0; ++n) {
        RawClient c(f.port);
        if (c.Get("/metrics") && c.ReadUntil("leasehold_is_leader", 1, 2s)) {
          ++answered;
        } else {
          ++failed;
        }
      }
    });
  }
  for (std::thread& th : clients) th.join();
  CHECK(failed == 0);
  CHECK(answered == 4 * kScrapesEach);
}

TEST_CASE("a /metrics flood on the probe listener never waits for the elector's lock") {
  // The elector's lock stands in here as a mutex the snapshot source takes, and a renew holds
  // it for the whole flood. A scrape that needed it would hang; since none does, a renew can
  // never wait for a scrape either (Metrics::Render loads atomics only).
  std::mutex elector_mu;
  std::atomic<int> snapshots{0};
  FakeClock clock;
  election::Gauges gauges;
  Metrics metrics(clock);
  MetricsLabels labels;
  labels.lock_namespace = "default";
  labels.lock_name = "my-lock";
  metrics.SetLabels(labels);
  HandlerOptions ho;
  ho.started_at = clock.MonotonicNow();
  ho.probe_only = true;
  ho.metrics = [&] { return metrics.Render(gauges); };
  http::ListenerOptions so;
  so.max_connections = 128;  // the probe listener's bound (app.cpp, kProbeConnections)
  auto server = Listen(
      "127.0.0.1:0",
      [&](election::Reading) {
        std::lock_guard<std::mutex> l(elector_mu);
        ++snapshots;
        return election::Snapshot{};
      },
      clock, ho, /*watch=*/nullptr, so);
  REQUIRE(server.ok());
  REQUIRE((*server)->Start().ok());
  const int port = (*server)->port();

  std::unique_lock<std::mutex> renew(elector_mu);
  std::atomic<int> answered{0}, failed{0};
  const auto t = Steady::now();
  std::vector<std::thread> flood;
  for (int i = 0; i < 4; ++i) {
    flood.emplace_back([&] {
      for (int n = 0; n < 100 && failed == 0; ++n) {
        RawClient c(port);
        if (c.Get("/metrics") && c.ReadUntil("leasehold_build_info", 1, 2s)) {
          ++answered;
        } else {
          ++failed;  // stop at the first: a scrape that waits would wait 2 s each
        }
      }
    });
  }
  for (std::thread& th : flood) th.join();
  const double ms = MsSince(t);
  renew.unlock();
  MESSAGE(answered.load() << " scrapes in " << ms << " ms while the elector's lock was held");
  CHECK(failed == 0);
  CHECK(answered == 400);
  CHECK(snapshots == 0);
  // The source is wired: a probe takes its snapshot once the lock is free.
  RawClient probe(port);
  REQUIRE(probe.Get("/healthz"));
  CHECK(probe.ReadUntil("ok", 1, 2s));
  CHECK(snapshots == 1);
}

TEST_CASE("an HTTP/1.0 client gets a watch stream it can read: no chunks, ended by the close") {
  FakeClock clock;
  election::Snapshot s;
  s.identity = "pod-a";
  s.observed = true;
  election::Publisher publisher([&](election::Reading) { return s; }, clock);
  WatchHub hub(publisher, {});
  publisher.AddSink(&hub);
  auto server = Listen(
      "127.0.0.1:0", [&](election::Reading) { return s; }, clock, HandlerOptions{}, &hub);
  REQUIRE(server.ok());
  REQUIRE((*server)->Start().ok());
  RawClient cli((*server)->port());
  REQUIRE(cli.Send("GET /leader/watch HTTP/1.0\r\n\r\n"));
  REQUIRE(cli.ReadUntil("}\n\n"));
  CHECK(cli.data().find("Transfer-Encoding") == std::string::npos);
  CHECK(cli.data().find("Connection: close\r\n") != std::string::npos);
  CHECK(cli.data().find("\r\n\r\nevent: leader\ndata: {") != std::string::npos);
  (*server)->Stop();
  CHECK(cli.ReadToEof());
}

}  // namespace
}  // namespace leasehold::localapi
