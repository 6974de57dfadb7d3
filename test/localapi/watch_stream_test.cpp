// The listener's streaming and probe sides over real sockets on 127.0.0.1, port 0: GET
// /leader/watch (fan-out, limit, stalled and vanished clients), /metrics, the probe listener,
// and the latency of /healthz and /is-leader with the pool full of streams and keep-alives.
#include <arpa/inet.h>
#include <dirent.h>
#include <doctest/doctest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "election/publisher.h"
#include "fakes/fake_clock.h"
#include "fakes/raw_client.h"
#include "localapi/router.h"
#include "localapi/watch_hub.h"

namespace leasehold::localapi {
namespace {

// The listener (src/http) and its request parser.
using namespace leasehold::http;

using namespace std::chrono_literals;
using election::Snapshot;
using Steady = std::chrono::steady_clock;

// Sanitizers slow every request down several times; latency bounds are then looser.
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
constexpr double kLatencyBudgetMs = 50;
#else
constexpr double kLatencyBudgetMs = 10;
#endif

// Waits for something another thread does (a stream being cleaned up), polling every
// millisecond for at most `limit` of real time.
bool WaitUntil(const std::function<bool()>& done, Duration limit = 5s) {
  const auto until = Steady::now() + limit;
  while (!done()) {
    if (Steady::now() > until) return false;
    std::this_thread::sleep_for(1ms);
  }
  return true;
}

// A snapshot the test changes while the server and publisher threads read it.
class Box {
 public:
  explicit Box(const Clock& clock) : clock_(clock) {
    s_.identity = "pod-a";
    s_.lock = {election::LockType::kLeases, "default", "my-lock"};
    s_.observed = true;
    s_.record.holder_identity = "pod-b";
    s_.record.leader_transitions = 1;
  }
  Snapshot Get(election::Reading reading) {
    std::lock_guard<std::mutex> l(mu_);
    (reading == election::Reading::kPromise ? promised_ : peeked_)++;
    return s_;
  }
  // A new term held by `holder`; leading when it is "pod-a".
  void Hold(const std::string& holder) {
    std::lock_guard<std::mutex> l(mu_);
    s_.record.holder_identity = holder;
    ++s_.record.leader_transitions;
    s_.is_leader = holder == "pod-a";
    s_.phase = s_.is_leader ? election::Phase::kLeader : election::Phase::kCandidate;
    s_.valid_until = clock_.MonotonicNow() + 10s;
  }
  void SetIdentity(const std::string& id) {
    std::lock_guard<std::mutex> l(mu_);
    s_.identity = id;
  }
  int promised() const {
    std::lock_guard<std::mutex> l(mu_);
    return promised_;
  }
  int peeked() const {
    std::lock_guard<std::mutex> l(mu_);
    return peeked_;
  }

 private:
  const Clock& clock_;
  mutable std::mutex mu_;
  Snapshot s_;
  int promised_ = 0;
  int peeked_ = 0;
};

struct Fixture {
  explicit Fixture(WatchHubOptions hub_options = {}, http::ListenerOptions server_options = {})
      : box(clock),
        publisher([this](election::Reading r) { return box.Get(r); }, clock),
        hub(publisher, hub_options) {
    publisher.AddSink(&hub);
    HandlerOptions ho;
    ho.started_at = clock.MonotonicNow();
    ho.metrics = [] { return std::string("leasehold_is_leader 0\n"); };
    auto s = Listen(
        "127.0.0.1:0", [this](election::Reading r) { return box.Get(r); }, clock, ho, &hub,
        server_options);
    REQUIRE(s.ok());
    server = std::move(s).value();
    REQUIRE(server->Start().ok());
    port = server->port();
  }
  // Changes the holder and publishes it, as the publisher's thread would.
  void Hold(const std::string& holder) {
    box.Hold(holder);
    publisher.Poll();
  }

  FakeClock clock;
  Box box;
  election::Publisher publisher;
  WatchHub hub;
  std::unique_ptr<http::Listener> server;
  int port = 0;
};

TEST_CASE("GET /leader/watch: SSE headers, the current state, then every change") {
  WatchHubOptions o;
  o.heartbeat = 100ms;
  Fixture f(o);
  RawClient c(f.port);
  REQUIRE(c.Get("/leader/watch"));
  REQUIRE(c.ReadUntil("\"name\":\"pod-b\""));
  CHECK(c.data().rfind("HTTP/1.1 200 OK\r\n", 0) == 0);
  CHECK(c.data().find("Content-Type: text/event-stream\r\n") != std::string::npos);
  CHECK(c.data().find("Cache-Control: no-store\r\n") != std::string::npos);
  CHECK(c.data().find("Transfer-Encoding: chunked\r\n") != std::string::npos);
  CHECK(c.data().find("event: leader\ndata: {\"name\":\"pod-b\",\"leader\":\"pod-b\","
                      "\"identity\":\"pod-a\",\"isLeader\":false,\"term\":1,") !=
        std::string::npos);
  CHECK(f.box.promised() == 1);

  f.Hold("pod-a");
  REQUIRE(c.ReadUntil("\"isLeader\":true,\"term\":2"));
  CHECK(c.data().find("\"validForMs\":10000,\"validUntil\":\"2026-01-02T03:00:10.000Z\"") !=
        std::string::npos);
  f.Hold("pod-c");
  REQUIRE(c.ReadUntil("\"name\":\"pod-c\""));
  // The heartbeat is on the injected clock: a silence of 100 ms on it, and the listener is told.
  f.clock.Advance(100ms);
  f.server->Wake();
  CHECK(c.ReadUntil(": ping\n\n"));
  CHECK(c.Count("event: leader") == 3);
}

TEST_CASE("GET /leader/watch: one client more than --max-watchers gets 503") {
  WatchHubOptions o;
  o.max_watchers = 2;
  Fixture f(o);
  RawClient a(f.port), b(f.port), c(f.port);
  REQUIRE(a.Get("/leader/watch"));
  REQUIRE(b.Get("/leader/watch"));
  REQUIRE(a.ReadUntil("event: leader"));
  REQUIRE(b.ReadUntil("event: leader"));
  REQUIRE(c.Get("/leader/watch"));
  REQUIRE(c.ReadUntil("}\n"));
  CHECK(c.data().rfind("HTTP/1.1 503 Service Unavailable\r\n", 0) == 0);
  CHECK(c.data().find("Retry-After: 1\r\n") != std::string::npos);
  CHECK(c.data().find("{\"error\":\"too many watchers (--max-watchers=2)\"}") != std::string::npos);
  // A client that hangs up is noticed while idle, and its place is free again.
  a.Close();
  REQUIRE(WaitUntil([&] { return f.hub.watchers() == 1; }));
  RawClient d(f.port);
  REQUIRE(d.Get("/leader/watch"));
  CHECK(d.ReadUntil("event: leader"));
}

TEST_CASE(
    "GET /leader/watch: a client that never reads neither blocks the publisher nor the "
    "other clients, and is cut off") {
  WatchHubOptions o;
  o.queue_limit = 8;
  http::ListenerOptions so;
  // A publication that waited for the stalled client's socket would take this long.
  so.write_timeout = 1s;
  Fixture f(o, so);
  // Big events, so that the stalled client's buffers fill after a few of them.
  f.box.SetIdentity(std::string(32000, 'i'));
  RawClient stalled(f.port, /*rcvbuf=*/4096);
  REQUIRE(stalled.Get("/leader/watch"));
  RawClient reader(f.port);
  REQUIRE(reader.Get("/leader/watch"));
  REQUIRE(reader.ReadUntil("event: leader"));
  REQUIRE(WaitUntil([&] { return f.hub.watchers() == 2; }));

  Duration slowest{};
  int published = 0;
  for (; published < 400 && f.hub.watchers() == 2; ++published) {
    const auto t = Steady::now();
    f.Hold(published % 2 ? "pod-b" : "pod-c");
    slowest = std::max<Duration>(slowest, Steady::now() - t);
    REQUIRE(reader.ReadUntil("event: leader", published + 2));
  }
  MESSAGE("stalled client cut off after "
          << published << " events; slowest publication "
          << std::chrono::duration<double, std::milli>(slowest).count() << " ms");
  CHECK(slowest < 500ms);
  REQUIRE(WaitUntil([&] { return f.hub.watchers() == 1; }));
  // The reader carries on.
  f.Hold("pod-a");
  CHECK(reader.ReadUntil("\"isLeader\":true"));
}

TEST_CASE("Stop ends every stream after its last event, promptly") {
  Fixture f;
  std::vector<std::unique_ptr<RawClient>> clients;
  for (int i = 0; i < 10; ++i) {
    clients.push_back(std::make_unique<RawClient>(f.port));
    REQUIRE(clients.back()->Get("/leader/watch"));
    REQUIRE(clients.back()->ReadUntil("event: leader"));
  }
  f.Hold("pod-a");
  // The publisher delivers asynchronously: let every stream have the event before stopping.
  for (auto& c : clients) REQUIRE(c->ReadUntil("\"isLeader\":true"));
  const auto t = Steady::now();
  f.server->Stop();
  const auto took = Steady::now() - t;
  MESSAGE("Stop() with 10 streams took " << std::chrono::duration<double, std::milli>(took).count()
                                         << " ms");
  CHECK(took < 1s);
  for (auto& c : clients) {
    CHECK(c->ReadToEof());
    CHECK(c->Count("\"isLeader\":true") == 1);
  }
  CHECK(f.hub.watchers() == 0);
}

TEST_CASE("HEAD /leader/watch and other methods") {
  Fixture f;
  httplib::Client cli("127.0.0.1", f.port);
  cli.set_read_timeout(5s);
  auto r = cli.Head("/leader/watch");
  REQUIRE(r);
  CHECK(r->status == 200);
  CHECK(r->get_header_value("Content-Type") == "text/event-stream");
  CHECK(f.hub.watchers() == 0);
  r = cli.Post("/leader/watch", "", "text/plain");
  REQUIRE(r);
  CHECK(r->status == 405);
  CHECK(r->get_header_value("Allow") == "GET, HEAD");
}

TEST_CASE("GET /metrics is served without a snapshot") {
  Fixture f;
  httplib::Client cli("127.0.0.1", f.port);
  cli.set_read_timeout(5s);
  const int promised = f.box.promised();
  const int peeked = f.box.peeked();
  auto r = cli.Get("/metrics");
  REQUIRE(r);
  CHECK(r->status == 200);
  CHECK(r->get_header_value("Content-Type") == "text/plain; version=0.0.4; charset=utf-8");
  CHECK(r->body == "leasehold_is_leader 0\n");
  CHECK(f.box.promised() == promised);
  CHECK(f.box.peeked() == peeked);
}

TEST_CASE(
    "the probe listener serves /healthz, /readyz, /is-leader and /metrics only, and never "
    "promises") {
  FakeClock clock;
  Box box(clock);
  box.Hold("pod-a");
  HandlerOptions ho;
  ho.started_at = clock.MonotonicNow();
  ho.probe_only = true;
  int releases = 0;
  ho.release = [&] { ++releases; };
  ho.metrics = [] { return std::string("m 1\n"); };
  auto server = Listen(
      "127.0.0.1:0", [&](election::Reading r) { return box.Get(r); }, clock, ho, /*watch=*/nullptr);
  REQUIRE(server.ok());
  REQUIRE((*server)->Start().ok());
  httplib::Client cli("127.0.0.1", (*server)->port());
  cli.set_read_timeout(5s);
  struct Case {
    const char* method;
    const char* path;
    int status;
  };
  const std::vector<Case> cases = {
      {"GET", "/healthz", 200},    {"GET", "/readyz", 200},  {"GET", "/is-leader", 200},
      {"HEAD", "/is-leader", 200}, {"GET", "/leader", 404},  {"GET", "/", 404},
      {"POST", "/release", 404},   {"GET", "/metrics", 200}, {"GET", "/leader/watch", 404},
      {"POST", "/healthz", 405},   {"GET", "/nope", 404},
  };
  for (const Case& c : cases) {
    CAPTURE(c.method);
    CAPTURE(c.path);
    httplib::Result r = std::string(c.method) == "GET"    ? cli.Get(c.path)
                        : std::string(c.method) == "HEAD" ? cli.Head(c.path)
                                                          : cli.Post(c.path, "", "text/plain");
    REQUIRE(r);
    CHECK(r->status == c.status);
    if (c.status == 404) {
      CHECK(r->body.find("no such endpoint on the probe listener") != std::string::npos);
      CHECK(r->body.find("(endpoints: /is-leader, /healthz, /readyz, /metrics)") !=
            std::string::npos);
    }
  }
  CHECK(releases == 0);
  CHECK(box.promised() == 0);
  CHECK(box.peeked() > 0);
}

// The threads of this process, by id. A test compares sets, not counts: a thread of an earlier
// test may still be exiting when this one starts (CI saw the count drop by one mid-test).
std::set<std::string> Threads() {
  std::set<std::string> ids;
  DIR* d = opendir("/proc/self/task");
  REQUIRE(d != nullptr);
  while (const dirent* e = readdir(d)) {
    if (e->d_name[0] != '.') ids.insert(e->d_name);
  }
  closedir(d);
  return ids;
}

std::set<std::string> StartedSince(const std::set<std::string>& before) {
  std::set<std::string> started;
  for (const std::string& id : Threads()) {
    if (before.count(id) == 0) started.insert(id);
  }
  return started;
}

TEST_CASE("one thread per listening socket, however many streams and connections are open") {
  const std::set<std::string> before = Threads();
  Fixture f;
  const std::set<std::string> loop = StartedSince(before);
  CHECK(loop.size() == 1);  // the event loop
  std::vector<std::unique_ptr<RawClient>> streams;
  for (int i = 0; i < 20; ++i) {
    streams.push_back(std::make_unique<RawClient>(f.port));
    REQUIRE(streams.back()->Get("/leader/watch"));
    REQUIRE(streams.back()->ReadUntil("event: leader"));
  }
  std::vector<std::unique_ptr<RawClient>> idle;
  for (int i = 0; i < 50; ++i) idle.push_back(std::make_unique<RawClient>(f.port));
  RawClient probe(f.port);
  REQUIRE(probe.Get("/healthz"));
  CHECK(probe.ReadUntil("ok"));
  CHECK(StartedSince(before) == loop);
}

// The probes stay fast while every stream and keep-alive connection is open. Each keep-alive
// client asks every 200ms, well within the 2s keep-alive timeout, so it stays connected.
TEST_CASE(
    "/healthz and /is-leader answer within 10 ms with 50 streams and 64 keep-alive "
    "clients connected") {
  constexpr int kWatchers = 50, kKeepAlive = 64;
  WatchHubOptions o;
  o.max_watchers = kWatchers;
  Fixture f(o);
  f.Hold("pod-a");

  std::vector<std::unique_ptr<RawClient>> streams;
  for (int i = 0; i < kWatchers; ++i) {
    streams.push_back(std::make_unique<RawClient>(f.port));
    REQUIRE(streams.back()->Get("/leader/watch"));
  }
  for (auto& s : streams) REQUIRE(s->ReadUntil("event: leader"));
  CHECK(f.hub.watchers() == kWatchers);

  std::atomic<bool> stop{false};
  std::atomic<int> keep_alive_ok{0}, keep_alive_failed{0};
  std::vector<std::thread> keep_alive;
  for (int i = 0; i < kKeepAlive; ++i) {
    keep_alive.emplace_back([&] {
      httplib::Client cli("127.0.0.1", f.port);
      cli.set_keep_alive(true);
      cli.set_read_timeout(5s);
      while (!stop) {
        auto r = cli.Get("/is-leader");
        (r && r->status == 200 ? keep_alive_ok : keep_alive_failed)++;
        for (int t = 0; t < 20 && !stop; ++t) std::this_thread::sleep_for(10ms);
      }
    });
  }
  REQUIRE(WaitUntil([&] { return keep_alive_ok >= 2 * kKeepAlive; }, 10s));

  std::vector<double> ms;
  for (int i = 0; i < 200; ++i) {
    const char* path = i % 2 ? "/healthz" : "/is-leader";
    const auto t = Steady::now();
    httplib::Client cli("127.0.0.1", f.port);  // a new connection each time, as a probe
    cli.set_read_timeout(5s);
    auto r = cli.Get(path);
    ms.push_back(std::chrono::duration<double, std::milli>(Steady::now() - t).count());
    REQUIRE(r);
    CHECK(r->status == 200);
    // Renewals keep flowing to the streams meanwhile.
    if (i % 20 == 0) f.Hold("pod-a");
  }
  stop = true;
  for (auto& t : keep_alive) t.join();
  std::sort(ms.begin(), ms.end());
  const double p50 = ms[ms.size() / 2], p99 = ms[ms.size() * 99 / 100], max = ms.back();
  MESSAGE("50 streams + 64 keep-alive clients: /healthz and /is-leader p50 "
          << p50 << " ms, p99 " << p99 << " ms, max " << max << " ms");
  CHECK(keep_alive_failed == 0);
  CHECK(p99 < kLatencyBudgetMs);
  // Queued behind a busy pool, a request would wait for a keep-alive to time out (2s).
  CHECK(max < 500.0);
  for (auto& s : streams) CHECK(s->ReadUntil("event: leader", 2));
}

}  // namespace
}  // namespace leasehold::localapi
