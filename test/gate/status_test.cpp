// The gate's status file for gate-probe.
#include "gate/status.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

namespace leasehold::gate {
namespace {

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
