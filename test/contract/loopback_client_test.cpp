// The loopback HTTP client of the gate and `leasehold probe` against hostile listeners on
// 127.0.0.1 port 0: a peer that sends faster than the client drains, and status lines that are
// not HTTP. Each read is bounded, whatever the peer does. And the one sidecar address rule.
#include "contract/loopback_client.h"

#include <doctest/doctest.h>
#include <poll.h>
#include <unistd.h>

#include <mutex>
#include <string>
#include <vector>

#include "fakes/fake_clock.h"
#include "fakes/hostile_peer.h"
#include "fakes/loopback_listener.h"

namespace leasehold::contract {
namespace {

using testing::HostilePeer;
constexpr size_t kFlood = 256 * 1024;  // bytes per send: faster than one 16 KiB read drains

Target At(const HostilePeer& peer) { return Target{"127.0.0.1", peer.port()}; }

TEST_CASE("HttpExchange: one OnReady reads at most 64 KiB of body from a flooding peer") {
  HostilePeer peer("HTTP/1.0 200 OK\r\n\r\n", kFlood);
  auto ex = HttpExchange::Start(At(peer), HttpExchange::Get("/leader/watch"));
  REQUIRE(ex.ok());
  size_t calls_with_body = 0;
  for (int i = 0; i < 2000 && calls_with_body < 20; ++i) {
    pollfd p{(*ex)->fd(), (*ex)->poll_events(), 0};
    REQUIRE(poll(&p, 1, 2000) == 1);
    REQUIRE((*ex)->OnReady().ok());
    const std::string body = (*ex)->TakeBody();
    // 64 KiB of body per call, plus what came in with the head (at most one 16 KiB read).
    CHECK(body.size() <= 64 * 1024 + 16 * 1024);
    if (!body.empty()) ++calls_with_body;
  }
  CHECK(calls_with_body == 20);
}

TEST_CASE("FetchOnce: max_body and the status line") {
  struct Case {
    const char* name;
    std::string head;
    bool flood;
    bool want_ok;
    int want_status;
  };
  const std::vector<Case> cases = {
      {"a flood: the first 300 bytes, truncated", "HTTP/1.1 200 OK\r\n\r\n", true, true, 200},
      {"a status that is not a number", "HTTP/1.1 2x0 OK\r\n\r\n", false, false, 0},
      {"a status out of range", "HTTP/1.1 999 Nope\r\n\r\n", false, false, 0},
      {"a status of two digits", "HTTP/1.1 20 OK\r\n\r\n", false, false, 0},
  };
  for (const Case& c : cases) {
    SUBCASE(c.name) {
      HostilePeer peer(c.head, c.flood ? kFlood : 0);
      RealClock clock;
      auto r =
          FetchOnce(At(peer), HttpExchange::Get("/readyz"), std::chrono::seconds(2), clock, 300);
      REQUIRE(r.ok() == c.want_ok);
      if (c.want_ok) {
        CHECK(r->status == c.want_status);
        CHECK(r->body.size() == 300);
        CHECK(r->truncated);
      } else {
        CHECK(r.status().code() == Code::kUnavailable);
      }
    }
  }
}

// A clock that is an hour later every time it is read after the first.
class LeapingClock final : public Clock {
 public:
  MonoTime MonotonicNow() const override {
    std::lock_guard<std::mutex> l(mu_);
    const MonoTime t = now_;
    now_ += std::chrono::hours(1);
    return t;
  }
  SysTime SystemNow() const override { return SysTime{}; }

 private:
  mutable std::mutex mu_;
  mutable MonoTime now_{std::chrono::hours(1)};
};

TEST_CASE("FetchOnce: the timeout is measured on the injected clock") {
  // A peer that accepts and never answers; on the real clock this would wait for half an hour.
  HostilePeer peer("", 0);
  LeapingClock clock;
  auto r = FetchOnce(At(peer), HttpExchange::Get("/leader"), std::chrono::minutes(30), clock);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == Code::kDeadlineExceeded);
}

TEST_CASE("SidecarTargets: every endpoint of the address, wildcards on loopback") {
  struct Case {
    const char* address;
    std::vector<Target> want;
  };
  const std::vector<Case> cases = {
      {"localhost:4040", {{"127.0.0.1", 4040}, {"::1", 4040}}},
      {"127.0.0.1:9000", {{"127.0.0.1", 9000}}},
      {"[::1]:9000", {{"::1", 9000}}},
      {":9000", {{"127.0.0.1", 9000}}},
      {"0.0.0.0:9000", {{"127.0.0.1", 9000}}},
      {"[::]:9000", {{"::1", 9000}}},
  };
  for (const Case& c : cases) {
    CAPTURE(std::string(c.address));
    auto t = SidecarTargets(c.address);
    REQUIRE(t.ok());
    CHECK(*t == c.want);
  }
  for (const char* bad : {"localhost:0", "example.com:4040", "4040", ""}) {
    CAPTURE(std::string(bad));
    CHECK(SidecarTargets(bad).status().code() == Code::kBadConfig);
  }
}

TEST_CASE("FetchFirst: the next endpoint only when the one before cannot be reached") {
  // A port nobody listens on: bound, never listened, so connecting is refused.
  const testing::LoopbackSocket closed = testing::ListenOnLoopback(0, /*listen_too=*/false);
  REQUIRE(closed.fd >= 0);
  HostilePeer peer("HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok", 0);
  HostilePeer second("HTTP/1.0 500 Nope\r\nContent-Length: 0\r\n\r\n", 0);
  RealClock clock;
  Target answered;
  std::string tried;
  auto r =
      FetchFirst({{"127.0.0.1", closed.port}, At(peer), At(second)}, HttpExchange::Get("/readyz"),
                 std::chrono::seconds(2), clock, kDefaultMaxBody, &answered, &tried);
  REQUIRE(r.ok());
  CHECK(r->status == 200);
  CHECK(r->body == "ok");
  CHECK(answered == At(peer));
  CHECK(tried.find("127.0.0.1:" + std::to_string(closed.port)) == 0);

  auto none = FetchFirst({{"127.0.0.1", closed.port}}, HttpExchange::Get("/readyz"),
                         std::chrono::seconds(2), clock);
  REQUIRE_FALSE(none.ok());
  CHECK(none.status().code() == Code::kUnavailable);
  close(closed.fd);
}

}  // namespace
}  // namespace leasehold::contract
