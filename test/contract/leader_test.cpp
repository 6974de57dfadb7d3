// The /leader contract: its parser and the SSE framing, and both against the golden files that
// the sidecar's encoder must reproduce (test/golden/, captured before the contract had a home).
#include "contract/leader.h"

#include <doctest/doctest.h>

#include <cstdlib>
#include <fstream>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "contract/sse.h"
#include "fakes/golden.h"

namespace leasehold::contract {
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

TEST_CASE("ParseLeader") {
  SUBCASE("leader with validUntil and timings") {
    auto p =
        ParseLeader(R"({"name":"a","isLeader":true,"term":4,"validForMs":9876,)"
                    R"("validUntil":"2026-01-02T03:00:09.876Z","timings":{"leaseDurationMs":15000,)"
                    R"("renewDeadlineMs":10000,"retryPeriodMs":2000}})");
    REQUIRE(p.ok());
    CHECK(p->is_leader);
    CHECK(p->term == 4);
    REQUIRE(p->valid_until);
    CHECK(Ms(*p->valid_until) == 1767322809876);
    REQUIRE(p->timings);
    CHECK(p->timings->renew_deadline == std::chrono::seconds(10));
    CHECK(p->timings->retry_period == std::chrono::seconds(2));
  }
  SUBCASE("follower: no validUntil, no timings (a watch event)") {
    auto p = ParseLeader(R"({"isLeader":false,"term":3})");
    REQUIRE(p.ok());
    CHECK_FALSE(p->is_leader);
    CHECK_FALSE(p->valid_until);
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
      auto p = ParseLeader(json);
      REQUIRE(p.ok());
      CHECK(p->term_reliable == want);
    }
  }
  SUBCASE("renewIntervalMs: read when present, written when known, the same after a round trip") {
    using std::chrono::milliseconds;
    using std::chrono::seconds;
    const std::string base = R"({"isLeader":false,"term":1,"timings":{"leaseDurationMs":15000,)"
                             R"("renewDeadlineMs":10000,"retryPeriodMs":2000)";
    struct Case {
      const char* name;
      std::string json;
      Duration interval;  // zero: none sent (an older sidecar)
    };
    const std::vector<Case> cases = {
        {"sent", base + R"(,"renewIntervalMs":5500}})", milliseconds(5500)},
        {"absent: an older sidecar", base + "}}", Duration::zero()},
        {"not a number: absent", base + R"(,"renewIntervalMs":"5.5s"}})", Duration::zero()},
    };
    for (const Case& c : cases) {
      CAPTURE(c.name);
      auto p = ParseLeader(c.json);
      REQUIRE(p.ok());
      REQUIRE(p->timings);
      CHECK(p->timings->retry_period == seconds(2));
      CHECK(p->timings->renew_interval == c.interval);
      auto again = ParseLeader(EncodeLeader(*p));
      REQUIRE(again.ok());
      CHECK(again->timings == p->timings);
      CHECK((EncodeLeader(*p).find("renewIntervalMs") != std::string::npos) ==
            (c.interval > Duration::zero()));
    }
  }
  SUBCASE("timings compare equal only when all three are") {
    using std::chrono::seconds;
    const Timings a{seconds(15), seconds(10), seconds(2)};
    CHECK(a == Timings{seconds(15), seconds(10), seconds(2)});
    CHECK(a != Timings{seconds(16), seconds(10), seconds(2)});
    CHECK(a != Timings{seconds(15), seconds(9), seconds(2)});
    CHECK(a != Timings{seconds(15), seconds(10), seconds(1)});
  }
  SUBCASE("a validUntil that does not parse is no validUntil") {
    auto p = ParseLeader(R"({"isLeader":true,"term":3,"validUntil":"soon"})");
    REQUIRE(p.ok());
    CHECK_FALSE(p->valid_until);
  }
  SUBCASE("not JSON, or no isLeader: Malformed") {
    CHECK(ParseLeader("false").status().code() == Code::kMalformed);
    CHECK(ParseLeader("{").status().code() == Code::kMalformed);
    CHECK(ParseLeader(R"({"isLeader":"true"})").status().code() == Code::kMalformed);
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

// The golden /leader bodies (newline-terminated, as HTTP answers them).
const char* const kGoldenLeader[] = {
    "leader",          "leader.timings",          "follower", "follower.timings",
    "unobserved",      "unobserved.timings",      "opaque",   "opaque.timings",
    "unreliable-term", "unreliable-term.timings", "readme",
};

std::string WithoutNewline(std::string s) {
  REQUIRE(!s.empty());
  CHECK(s.back() == '\n');
  s.pop_back();
  return s;
}

TEST_CASE("golden: every /leader body parses, and encodes back byte for byte") {
  for (const char* name : kGoldenLeader) {
    CAPTURE(std::string(name));
    const std::string json = WithoutNewline(ReadGolden(std::string("leader/") + name + ".json"));
    auto p = ParseLeader(json);
    REQUIRE(p.ok());
    CHECK(EncodeLeader(*p) == json);
  }
}

TEST_CASE("golden: the parser reads what each case says") {
  auto leader = ParseLeader(ReadGolden("leader/leader.timings.json"));
  REQUIRE(leader.ok());
  CHECK(leader->name == "pod-a_0badcafe");
  CHECK(leader->leader == std::optional<std::string>("pod-a_0badcafe"));
  CHECK(leader->identity == "pod-a_0badcafe");
  CHECK(leader->is_leader);
  CHECK(leader->term == 4);
  CHECK(leader->term_reliable);
  CHECK(leader->lock.type == "leases");
  CHECK(leader->lock.name_space == "default");
  CHECK(leader->lock.name == "my-lock");
  REQUIRE(leader->acquire_time);
  CHECK(Ms(*leader->acquire_time) == 1767322740000);
  CHECK(leader->lease_duration_seconds == 15);
  CHECK(leader->valid_for_ms == 9876);
  REQUIRE(leader->valid_until);
  CHECK(Ms(*leader->valid_until) == 1767322809876);
  REQUIRE(leader->timings);
  CHECK(*leader->timings ==
        Timings{std::chrono::seconds(15), std::chrono::seconds(10), std::chrono::seconds(2)});
  CHECK_FALSE(leader->reason);

  auto follower = ParseLeader(ReadGolden("leader/follower.json"));
  REQUIRE(follower.ok());
  CHECK_FALSE(follower->is_leader);
  CHECK(follower->name == "pod-b_12345678");
  CHECK_FALSE(follower->valid_until);
  CHECK_FALSE(follower->timings);

  auto unobserved = ParseLeader(ReadGolden("leader/unobserved.json"));
  REQUIRE(unobserved.ok());
  CHECK_FALSE(unobserved->is_leader);
  CHECK_FALSE(unobserved->acquire_time);
  REQUIRE(unobserved->reason);
  CHECK(unobserved->reason->rfind("the lock has not been read yet", 0) == 0);

  auto opaque = ParseLeader(ReadGolden("leader/opaque.json"));
  REQUIRE(opaque.ok());
  CHECK_FALSE(opaque->leader);  // null: held by someone unknown
  CHECK_FALSE(opaque->term_reliable);
  CHECK(opaque->term_reason == "an unreadable record");

  auto unreliable = ParseLeader(ReadGolden("leader/unreliable-term.json"));
  REQUIRE(unreliable.ok());
  CHECK_FALSE(unreliable->term_reliable);
  CHECK(unreliable->lock.type == "configmapsleases");
}

TEST_CASE("golden: watch frames are the /leader JSON as one `leader` event; pings are none") {
  for (const char* name : {"leader", "follower", "unobserved", "opaque", "unreliable-term"}) {
    CAPTURE(std::string(name));
    const std::string frame = ReadGolden(std::string("sse/") + name + ".txt");
    // The watch events carry no timings: the same JSON as the timing-less /leader body.
    const std::string json = WithoutNewline(ReadGolden(std::string("leader/") + name + ".json"));
    CHECK(EventFrame(json) == frame);
    SseParser parser;
    auto events = parser.Feed(frame);
    REQUIRE(events.ok());
    REQUIRE(events->size() == 1);
    CHECK((*events)[0].type == kLeaderEvent);
    CHECK((*events)[0].data == json);
    // The status file holds the same line, newline-terminated.
    CHECK(ReadGolden(std::string("status-file/") + name + ".json") == json + "\n");
  }
  CHECK(std::string(kPing) == ReadGolden("sse/ping.txt"));
  SseParser parser;
  auto none = parser.Feed(kPing);
  REQUIRE(none.ok());
  CHECK(none->empty());
}

TEST_CASE("EncodeLeader: pretty is the same document, indented by two") {
  auto p = ParseLeader(ReadGolden("leader/leader.timings.json"));
  REQUIRE(p.ok());
  const std::string pretty = EncodeLeader(*p, /*pretty=*/true);
  CHECK(pretty.rfind("{\n  \"name\": \"pod-a_0badcafe\",\n", 0) == 0);
  auto again = ParseLeader(pretty);
  REQUIRE(again.ok());
  CHECK(EncodeLeader(*again) == EncodeLeader(*p));
}

// The README's sample answer is the golden file test/golden/leader/readme.json, verbatim:
// LEASEHOLD_UPDATE_GOLDEN=1 writes it into the README.
TEST_CASE("golden: the README's GET /leader sample is the fixture") {
  const std::string readme_path = GoldenPath("../../README.md");
  std::string readme = ReadWholeFile(readme_path);
  // One fenced block between the markers (CONTRIBUTING.md): the command, then the answer.
  const size_t begin = readme.find("<!-- sample GET /leader JSON: begin");
  REQUIRE(begin != std::string::npos);
  const std::string command = "$ curl -s localhost:4040/leader\n";
  const size_t start = readme.find(command, begin);
  REQUIRE(start != std::string::npos);
  const size_t body = start + command.size();
  const size_t end = readme.find("\n```\n<!-- sample GET /leader JSON: end -->", body);
  REQUIRE(end != std::string::npos);
  const std::string fixture = ReadGolden("leader/readme.json");
  const char* update = std::getenv("LEASEHOLD_UPDATE_GOLDEN");
  if (update != nullptr && std::string(update) == "1") {
    readme.replace(body, end + 1 - body, fixture);
    std::ofstream(readme_path, std::ios::binary | std::ios::trunc) << readme;
    return;
  }
  CHECK(readme.substr(body, end + 1 - body) == fixture);
}

}  // namespace
}  // namespace leasehold::contract
