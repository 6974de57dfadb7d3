// What the gate reads from the sidecar, and its status file for gate-probe.
#include "gate/sidecar_json.h"

#include <doctest/doctest.h>

#include <string>
#include <utility>
#include <vector>

#include "gate/status.h"

namespace leasehold::gate {
namespace {

int64_t Ms(SysTime t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
}

TEST_CASE("ParseRfc3339Utc") {
  struct Case {
    const char* text;
    bool ok;
    int64_t ms;
  };
  const std::vector<Case> cases = {
      {"2026-01-02T03:00:09.876Z", true, 1767322809876},
      {"2026-01-02T03:00:09Z", true, 1767322809000},
      {"2026-01-02T03:00:09.8769999Z", true, 1767322809876},  // never rounded up
      {"1970-01-01T00:00:00.000Z", true, 0},
      {"2026-01-02T03:00:09.876+01:00", false, 0},
      {"2026-01-02 03:00:09Z", false, 0},
      {"2026-13-02T03:00:09Z", false, 0},
      {"2026-01-02T03:00:09.Z", false, 0},
      {"", false, 0},
      {"2026-01-02T03:00:09.876Zjunk", false, 0},
  };
  for (const Case& c : cases) {
    SUBCASE(c.text) {
      auto t = ParseRfc3339Utc(c.text);
      CHECK(t.ok() == c.ok);
      if (c.ok && t.ok()) CHECK(Ms(*t) == c.ms);
    }
  }
}

TEST_CASE("ParseLeaderJson") {
  SUBCASE("leader with validUntil and timings") {
    auto p = ParseLeaderJson(
        R"({"name":"a","isLeader":true,"term":4,"validForMs":9876,)"
        R"("validUntil":"2026-01-02T03:00:09.876Z","timings":{"leaseDurationMs":15000,)"
        R"("renewDeadlineMs":10000,"retryPeriodMs":2000}})");
    REQUIRE(p.ok());
    CHECK(p->view.is_leader);
    CHECK(p->view.term == 4);
    REQUIRE(p->view.valid_until);
    CHECK(Ms(*p->view.valid_until) == 1767322809876);
    REQUIRE(p->timings);
    CHECK(p->timings->renew_deadline == std::chrono::seconds(10));
    CHECK(p->timings->retry_period == std::chrono::seconds(2));
  }
  SUBCASE("follower: no validUntil, no timings (a watch event)") {
    auto p = ParseLeaderJson(R"({"isLeader":false,"term":3})");
    REQUIRE(p.ok());
    CHECK_FALSE(p->view.is_leader);
    CHECK_FALSE(p->view.valid_until);
    CHECK_FALSE(p->timings);
  }
  SUBCASE("termReliable: true, false, absent or not a bool (false: the safe reading)") {
    const std::vector<std::pair<const char*, bool>> cases = {
        {R"({"isLeader":true,"term":3,"termReliable":true})", true},
        {R"({"isLeader":true,"term":3,"termReliable":false,"termReason":"x"})", false},
        {R"({"isLeader":true,"term":3})", false},
        {R"({"isLeader":true,"term":3,"termReliable":"true"})", false},
    };
    for (const auto& [json, want] : cases) {
      CAPTURE(json);
      auto p = ParseLeaderJson(json);
      REQUIRE(p.ok());
      CHECK(p->view.term_reliable == want);
    }
  }
  SUBCASE("timings compare equal only when all three are") {
    using std::chrono::seconds;
    const SidecarTimings a{seconds(15), seconds(10), seconds(2)};
    CHECK(a == SidecarTimings{seconds(15), seconds(10), seconds(2)});
    CHECK(a != SidecarTimings{seconds(16), seconds(10), seconds(2)});
    CHECK(a != SidecarTimings{seconds(15), seconds(9), seconds(2)});
    CHECK(a != SidecarTimings{seconds(15), seconds(10), seconds(1)});
  }
  SUBCASE("a validUntil that does not parse is no validUntil") {
    auto p = ParseLeaderJson(R"({"isLeader":true,"term":3,"validUntil":"soon"})");
    REQUIRE(p.ok());
    CHECK_FALSE(p->view.valid_until);
  }
  SUBCASE("not JSON, or no isLeader: Invalid") {
    CHECK(ParseLeaderJson("false").status().code() == Code::kInvalid);
    CHECK(ParseLeaderJson("{").status().code() == Code::kInvalid);
    CHECK(ParseLeaderJson(R"({"isLeader":"true"})").status().code() == Code::kInvalid);
  }
}

TEST_CASE("SseParser") {
  struct Case {
    const char* name;
    std::vector<std::string> chunks;
    std::vector<std::string> want;  // "type|data" of every event, in order
  };
  const std::vector<Case> cases = {
      {"one event", {"event: leader\ndata: {\"a\":1}\n\n"}, {"leader|{\"a\":1}"}},
      {"split anywhere", {"ev", "ent: lea", "der\nda", "ta: x\n", "\n"}, {"leader|x"}},
      {"CR LF", {"event: leader\r\ndata: x\r\n\r\n"}, {"leader|x"}},
      {"comments (pings) are no events", {": ping\n\n: ping\n\n"}, {}},
      {"two events in one chunk",
       {"event: leader\ndata: 1\n\nevent: leader\ndata: 2\n\n"},
       {"leader|1", "leader|2"}},
      {"no event line: message", {"data: x\n\n"}, {"message|x"}},
      {"incomplete event waits", {"event: leader\ndata: x\n"}, {}},
      {"multi-line data joined by LF", {"data: a\ndata: b\n\n"}, {"message|a\nb"}},
  };
  for (const Case& c : cases) {
    SUBCASE(c.name) {
      SseParser p;
      std::vector<std::string> got;
      for (const std::string& chunk : c.chunks) {
        auto events = p.Feed(chunk);
        REQUIRE(events.ok());
        for (const auto& e : *events) got.push_back(e.type + "|" + e.data);
      }
      CHECK(got == c.want);
    }
  }
  SUBCASE("a line beyond 64 KiB is an error") {
    SseParser p;
    CHECK_FALSE(p.Feed(std::string(SseParser::kMaxLine + 1, 'x')).ok());
  }
}

TEST_CASE("JudgeStatus: liveness and readiness for gate-probe") {
  const int64_t now = 1000000;
  const auto file = [&](State state, int64_t since_ago, int64_t beat_ago, const char* sidecar) {
    GateStatus s;
    s.state = state;
    s.state_since_ms = now - since_ago;
    s.heartbeat_ms = now - beat_ago;
    s.sidecar = sidecar;
    s.stop_grace_ms = 3000;
    return StatusJson(s);
  };
  struct Case {
    const char* name;
    std::string json;
    bool live, ready;
  };
  const std::vector<Case> cases = {
      {"follower waiting, streaming", file(State::kWaiting, 60000, 500, "streaming"), true, true},
      {"leader running, polling", file(State::kRunning, 60000, 500, "polling"), true, true},
      {"sidecar unreachable: live, not ready", file(State::kWaiting, 100, 100, "unreachable"), true,
       false},
      {"still connecting: live, not ready", file(State::kWaiting, 100, 100, "connecting"), true,
       false},
      {"heartbeat 10.001 s old: the gate is frozen or gone",
       file(State::kRunning, 60000, 10001, "streaming"), false, false},
      {"stopping for stop-grace + 10 s: still live", file(State::kStopping, 13000, 0, "streaming"),
       true, true},
      {"stopping beyond stop-grace + 10 s: stuck", file(State::kStopping, 13001, 0, "streaming"),
       false, false},
      {"not a status file", "{\"x\":1}", false, false},
  };
  for (const Case& c : cases) {
    SUBCASE(c.name) {
      CHECK(JudgeStatus(c.json, now, false).ok() == c.live);
      CHECK(JudgeStatus(c.json, now, true).ok() == c.ready);
    }
  }
}

}  // namespace
}  // namespace leasehold::gate
