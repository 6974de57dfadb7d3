// The gate's loopback HTTP client (also `leasehold probe`'s) against hostile listeners on
// 127.0.0.1 port 0: a peer that sends faster than the client drains, and status lines that are
// not HTTP. Each read is bounded, whatever the peer does.
#include "gate/http_client.h"

#include <doctest/doctest.h>
#include <poll.h>

#include <string>
#include <vector>

#include "fakes/hostile_peer.h"

namespace leasehold::gate {
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
      auto r = FetchOnce(At(peer), HttpExchange::Get("/readyz"), std::chrono::seconds(2), 300);
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

}  // namespace
}  // namespace leasehold::gate
