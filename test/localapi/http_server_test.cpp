// The listener over real sockets on 127.0.0.1 (and ::1 when the host has IPv6), port 0.
#include <doctest/doctest.h>
#include <httplib.h>

#include <atomic>
#include <mutex>
#include <string>
#include <vector>

#include "fakes/fake_clock.h"
#include "localapi/router.h"

namespace leasehold::localapi {
namespace {

// The listener (src/http) and its request parser.
using namespace leasehold::http;

using election::Snapshot;

// A snapshot the test can change while the server threads read it.
class SnapshotBox {
 public:
  SnapshotBox() {
    s_.identity = "pod-a";
    s_.lock = {election::LockType::kLeases, "default", "my-lock"};
  }
  Snapshot Get() const {
    std::lock_guard<std::mutex> l(mu_);
    return s_;
  }
  void Lead(const Clock& clock) {
    std::lock_guard<std::mutex> l(mu_);
    s_.observed = true;
    s_.record.holder_identity = "pod-a";
    s_.record.leader_transitions = 2;
    s_.is_leader = true;
    s_.valid_until = clock.MonotonicNow() + std::chrono::seconds(10);
  }

 private:
  mutable std::mutex mu_;
  Snapshot s_;
};

struct Fixture {
  FakeClock clock;
  SnapshotBox box;
  std::atomic<int> releases{0};
  std::atomic<int> promised{0};
  std::atomic<int> peeked{0};

  Result<std::unique_ptr<http::Listener>> Make(const std::string& address) {
    HandlerOptions options;
    options.started_at = clock.MonotonicNow();
    options.release = [this] { ++releases; };
    return Listen(
        address,
        [this](election::Reading reading) {
          (reading == election::Reading::kPromise ? promised : peeked)++;
          return box.Get();
        },
        clock, options, /*watch=*/nullptr);
  }
};

TEST_CASE("listener serves Handle() over HTTP on 127.0.0.1, port 0") {
  Fixture f;
  auto server = f.Make("127.0.0.1:0");
  REQUIRE(server.ok());
  CHECK((*server)->port() == 0);
  REQUIRE((*server)->Start().ok());
  const int port = (*server)->port();
  REQUIRE(port > 0);
  CHECK((*server)->listening() == std::vector<std::string>{"127.0.0.1:" + std::to_string(port)});

  httplib::Client cli("127.0.0.1", port);
  cli.set_connection_timeout(std::chrono::seconds(5));
  cli.set_read_timeout(std::chrono::seconds(5));

  // Not observed yet.
  auto r = cli.Get("/leader");
  REQUIRE(r);
  CHECK(r->status == 503);
  CHECK(r->get_header_value("Content-Type") == "application/json");
  CHECK(r->get_header_value("Cache-Control") == "no-store");
  HttpQuery q{"GET", "/leader", {}};
  CHECK(r->body == Handle(q, FindRoute(q.path), f.box.Get(), f.clock, {}).body);

  r = cli.Get("/is-leader");
  REQUIRE(r);
  CHECK(r->status == 503);
  CHECK(r->body == "false");

  // The answer follows the snapshot, per request, on the same keep-alive connection.
  f.box.Lead(f.clock);
  r = cli.Get("/is-leader");
  REQUIRE(r);
  CHECK(r->status == 200);
  CHECK(r->body == "true");
  CHECK(r->get_header_value("Content-Type") == "text/plain; charset=utf-8");

  r = cli.Get("/leader?pretty=1");
  REQUIRE(r);
  CHECK(r->status == 200);
  CHECK(r->body.find("\"validForMs\": 10000,") != std::string::npos);

  r = cli.Head("/leader");
  REQUIRE(r);
  CHECK(r->status == 200);
  CHECK(r->body.empty());

  r = cli.Post("/release", "", "text/plain");
  REQUIRE(r);
  CHECK(r->status == 202);
  CHECK(r->body == "{\"released\":true,\"wasLeader\":true,\"identity\":\"pod-a\",\"term\":2}\n");
  CHECK(f.releases == 1);

  r = cli.Get("/nope");
  REQUIRE(r);
  CHECK(r->status == 404);

  // Only answers that can say "you lead" record a promise; probes only peek.
  const int promised = f.promised, peeked = f.peeked;
  REQUIRE(cli.Get("/readyz"));
  REQUIRE(cli.Get("/healthz"));
  CHECK(f.peeked == peeked + 2);
  REQUIRE(cli.Get("/is-leader"));
  REQUIRE(cli.Get("/"));
  CHECK(f.promised == promised + 2);
  CHECK(f.peeked == peeked + 2);

  r = cli.Post("/leader", "", "text/plain");
  REQUIRE(r);
  CHECK(r->status == 405);
  CHECK(r->get_header_value("Allow") == "GET, HEAD");

  r = cli.Delete("/release");
  REQUIRE(r);
  CHECK(r->status == 405);
  CHECK(r->get_header_value("Allow") == "POST");
  CHECK(f.releases == 1);

  r = cli.Get("/healthz");
  REQUIRE(r);
  CHECK(r->status == 200);
  CHECK(r->body == "ok");

  (*server)->Stop();
  (*server)->Stop();  // idempotent
  CHECK((*server)->listening().empty());
  httplib::Client after("127.0.0.1", port);
  after.set_connection_timeout(std::chrono::seconds(5));
  CHECK_FALSE(after.Get("/leader"));
}

TEST_CASE("localhost listens on 127.0.0.1 and, when the host has IPv6, on ::1 with one port") {
  Fixture f;
  auto server = f.Make("localhost:0");
  REQUIRE(server.ok());
  REQUIRE((*server)->Start().ok());
  const int port = (*server)->port();
  const std::vector<std::string> listening = (*server)->listening();
  REQUIRE(!listening.empty());
  CHECK(listening[0] == "127.0.0.1:" + std::to_string(port));

  httplib::Client v4("127.0.0.1", port);
  v4.set_connection_timeout(std::chrono::seconds(5));
  auto r = v4.Get("/healthz");
  REQUIRE(r);
  CHECK(r->body == "ok");

  if (listening.size() == 2) {
    CHECK(listening[1] == "[::1]:" + std::to_string(port));
    httplib::Client v6("::1", port);
    v6.set_connection_timeout(std::chrono::seconds(5));
    r = v6.Get("/healthz");
    REQUIRE(r);
    CHECK(r->body == "ok");
  } else {
    MESSAGE("no IPv6 loopback here; served IPv4 only");
  }
}

TEST_CASE("a taken port fails Start() with Unavailable naming the address") {
  Fixture f;
  auto first = f.Make("127.0.0.1:0");
  REQUIRE(first.ok());
  REQUIRE((*first)->Start().ok());
  const std::string taken = "127.0.0.1:" + std::to_string((*first)->port());

  auto second = f.Make(taken);
  REQUIRE(second.ok());
  const Status st = (*second)->Start();
  CHECK(st.code() == Code::kUnavailable);
  CHECK(st.message().rfind("cannot listen on " + taken + ": ", 0) == 0);
  CHECK((*second)->port() == 0);
  CHECK((*second)->listening().empty());
  // The first server is unharmed.
  httplib::Client cli("127.0.0.1", (*first)->port());
  cli.set_connection_timeout(std::chrono::seconds(5));
  CHECK(cli.Get("/healthz"));
}

TEST_CASE("Create validates before binding") {
  Fixture f;
  struct Case {
    const char* name;
    const char* address;
  };
  const std::vector<Case> cases = {
      {"host name", "example.com:80"},
      {"no port", "localhost"},
      {"port out of range", ":70000"},
  };
  for (const Case& c : cases) {
    SUBCASE(c.name) {
      auto server = f.Make(c.address);
      REQUIRE_FALSE(server.ok());
      CHECK(server.code() == Code::kBadConfig);
      CHECK(server.status().message().find("is not a listen address") != std::string::npos);
    }
  }
}

TEST_CASE("Start() only once, and never after Stop()") {
  Fixture f;
  auto server = f.Make("127.0.0.1:0");
  REQUIRE(server.ok());
  REQUIRE((*server)->Start().ok());
  CHECK((*server)->Start().code() == Code::kFailedPrecondition);
  auto stopped = f.Make("127.0.0.1:0");
  REQUIRE(stopped.ok());
  (*stopped)->Stop();
  CHECK((*stopped)->Start().code() == Code::kFailedPrecondition);
  CHECK((*stopped)->listening().empty());
}

TEST_CASE("destroying a running or never started server is clean") {
  Fixture f;
  {
    auto server = f.Make("127.0.0.1:0");
    REQUIRE(server.ok());
    REQUIRE((*server)->Start().ok());
  }
  {
    auto server = f.Make("127.0.0.1:0");
    REQUIRE(server.ok());
  }
}

}  // namespace
}  // namespace leasehold::localapi
