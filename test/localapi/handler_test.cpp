#include "localapi/handler.h"

#include <doctest/doctest.h>

#include <chrono>
#include <map>
#include <string>
#include <vector>

#include "fakes/fake_clock.h"
#include "localapi/readiness.h"
#include "localapi/routes.h"

namespace leasehold::localapi {
namespace {

using election::Phase;
using election::Snapshot;
using std::chrono::milliseconds;
using std::chrono::nanoseconds;
using std::chrono::seconds;

constexpr const char* kJson = "application/json";
constexpr const char* kText = "text/plain; charset=utf-8";
constexpr const char* kLock = R"("lock":{"type":"leases","namespace":"default","name":"my-lock"})";

// FakeClock starts at 2026-01-02T03:00:00.000Z.
SysTime At(Duration since_start) {
  return FakeClock().SystemNow() + std::chrono::duration_cast<SysTime::duration>(since_start);
}

Snapshot NotObserved() {
  Snapshot s;
  s.identity = "pod-a_0badcafe";
  s.lock = {election::LockType::kLeases, "default", "my-lock"};
  return s;
}

Snapshot HeldBy(const std::string& holder, int64_t term) {
  Snapshot s = NotObserved();
  s.observed = true;
  s.record.holder_identity = holder;
  s.record.lease_duration_seconds = 15;
  s.record.acquire_time = At(-seconds(60));
  s.record.renew_time = At(-seconds(1) + nanoseconds(123456789));
  s.record.leader_transitions = term;
  return s;
}

Snapshot Leader(const Clock& clock, Duration valid_for) {
  Snapshot s = HeldBy("pod-a_0badcafe", 4);
  s.phase = Phase::kLeader;
  s.is_leader = true;
  s.valid_until = clock.MonotonicNow() + valid_for;
  s.last_attempt_at = clock.MonotonicNow();
  s.last_progress_at = s.last_attempt_at;
  return s;
}

Snapshot WithError(Snapshot s, Code code, std::string message) {
  s.last_error = Status(code, std::move(message));
  return s;
}

// From a loopback peer unless `loopback` says otherwise.
http::Answer Call(const std::string& method, const std::string& path, const Snapshot& s,
                  const Clock& clock, HandlerOptions options = {}, bool loopback = true) {
  HttpQuery q;
  q.method = method;
  q.loopback_peer = loopback;
  const size_t qm = path.find('?');
  q.path = path.substr(0, qm);
  if (qm != std::string::npos) {
    const std::string query = path.substr(qm + 1);
    const size_t eq = query.find('=');
    q.params.emplace(query.substr(0, eq), eq == std::string::npos ? "" : query.substr(eq + 1));
  }
  return Handle(q, FindRoute(q.path), s, clock, options);
}

std::string Header(const http::Answer& a, const std::string& name) {
  for (const auto& [k, v] : a.headers) {
    if (k == name) return v;
  }
  return "<none>";
}

TEST_CASE("GET /leader") {
  FakeClock clock;
  struct Case {
    const char* name;
    Snapshot s;
    int status;
    std::string body;
  };
  const std::vector<Case> cases = {
      {"not observed: 503, same shape, with a reason", NotObserved(), 503,
       std::string(R"({"name":"","leader":"","identity":"pod-a_0badcafe","isLeader":false,)") +
           R"("term":0,"termReliable":true,)" + kLock + R"(,"acquireTime":null,"renewTime":null,)" +
           R"("leaseDurationSeconds":0,"reason":"the lock has not been read yet"})"},
      {"not observed after an error: the reason carries it",
       WithError(NotObserved(), Code::kForbidden, "leases is forbidden"), 503,
       std::string(R"({"name":"","leader":"","identity":"pod-a_0badcafe","isLeader":false,)") +
           R"("term":0,"termReliable":true,)" + kLock + R"(,"acquireTime":null,"renewTime":null,)" +
           R"("leaseDurationSeconds":0,"reason":"the lock has not been read yet )" +
           R"j((last error: Forbidden: leases is forbidden)"})j"},
      {"follower", HeldBy("pod-b_12345678", 3), 200,
       std::string(R"({"name":"pod-b_12345678","leader":"pod-b_12345678",)") +
           R"("identity":"pod-a_0badcafe","isLeader":false,"term":3,"termReliable":true,)" + kLock +
           R"(,"acquireTime":"2026-01-02T02:59:00.000Z","renewTime":"2026-01-02T02:59:59.123Z",)" +
           R"("leaseDurationSeconds":15})"},
      {"leader: validForMs rounded down, validUntil on the wall clock",
       Leader(clock, milliseconds(9876) + nanoseconds(999999)), 200,
       std::string(R"({"name":"pod-a_0badcafe","leader":"pod-a_0badcafe",)") +
           R"("identity":"pod-a_0badcafe","isLeader":true,"term":4,"termReliable":true,)" + kLock +
           R"(,"acquireTime":"2026-01-02T02:59:00.000Z","renewTime":"2026-01-02T02:59:59.123Z",)" +
           R"("leaseDurationSeconds":15,"validForMs":9876,)" +
           R"("validUntil":"2026-01-02T03:00:09.876Z"})"},
      {"stale leader: holds the record but no longer says yes: no validUntil",
       HeldBy("pod-a_0badcafe", 4), 200,
       std::string(R"({"name":"pod-a_0badcafe","leader":"pod-a_0badcafe",)") +
           R"("identity":"pod-a_0badcafe","isLeader":false,"term":4,"termReliable":true,)" + kLock +
           R"(,"acquireTime":"2026-01-02T02:59:00.000Z","renewTime":"2026-01-02T02:59:59.123Z",)" +
           R"("leaseDurationSeconds":15})"},
      {"released record: no leader",
       [] {
         Snapshot s = HeldBy("", 4);
         s.record.acquire_time.reset();
         s.record.renew_time.reset();
         return s;
       }(),
       200,
       std::string(R"({"name":"","leader":"","identity":"pod-a_0badcafe","isLeader":false,)") +
           R"("term":4,"termReliable":true,)" + kLock +
           R"(,"acquireTime":null,"renewTime":null,"leaseDurationSeconds":15})"},
      {"an unreadable record: leader null, the reason, and the term marked unreliable",
       [] {
         Snapshot s = HeldBy("", 4);
         s.record.acquire_time.reset();
         s.record.renew_time.reset();
         s.opaque = true;
         s.unreadable = "field leaseDurationSeconds is not a number of seconds";
         s.term_unreliable_reason = "an unreadable record was written to the lock";
         return s;
       }(),
       200,
       std::string(R"({"name":"","leader":null,"identity":"pod-a_0badcafe","isLeader":false,)") +
           R"("term":4,"termReliable":false,)" +
           R"("termReason":"an unreadable record was written to the lock",)" + kLock +
           R"(,"acquireTime":null,"renewTime":null,"leaseDurationSeconds":15,)" +
           R"("reason":"the lock holds a record this replica cannot read (field )" +
           R"(leaseDurationSeconds is not a number of seconds); it counts as held until it has )" +
           R"(not changed for the lease duration"})"},
  };
  for (const Case& c : cases) {
    SUBCASE(c.name) {
      const http::Answer a = Call("GET", "/leader", c.s, clock);
      CHECK(a.status == c.status);
      CHECK(a.content_type == kJson);
      CHECK(a.body == c.body + "\n");
      // "/" answers exactly as /leader (the classic image answered on every path), HEAD as GET.
      const http::Answer root = Call("GET", "/", c.s, clock);
      CHECK(root.status == a.status);
      CHECK(root.body == a.body);
      CHECK(Call("HEAD", "/leader", c.s, clock).body == a.body);
    }
  }
}

TEST_CASE("GET /leader: validForMs counts down with the clock") {
  FakeClock clock;
  const Snapshot s = Leader(clock, seconds(10));
  clock.Advance(milliseconds(2500));
  const http::Answer a = Call("GET", "/leader", s, clock);
  CHECK(a.body.find(R"("validForMs":7500,"validUntil":"2026-01-02T03:00:10.000Z")") !=
        std::string::npos);
  // At and past valid_until (the snapshot is older than the answer): the answer is judged now, so
  // "no", with no validForMs or validUntil (publisher.h, (b)); 1ns before, the last "yes".
  clock.Advance(milliseconds(7500) - nanoseconds(1));
  CHECK(Call("GET", "/leader", s, clock).body.find(R"("isLeader":true,)") != std::string::npos);
  CHECK(Call("GET", "/is-leader", s, clock).status == 200);
  for (const Duration later : {Duration(nanoseconds(1)), Duration(seconds(60))}) {
    clock.Advance(later);
    const std::string body = Call("GET", "/leader", s, clock).body;
    CHECK(body.find(R"("isLeader":false,)") != std::string::npos);
    CHECK(body.find("validForMs") == std::string::npos);
    CHECK(body.find("validUntil") == std::string::npos);
    CHECK(Call("GET", "/is-leader", s, clock).status == 503);
  }
}

TEST_CASE("GET /leader: timings for the gate, when configured") {
  FakeClock clock;
  HandlerOptions options;
  options.timings = Timings{seconds(15), seconds(10), milliseconds(2500)};
  const std::string timings =
      R"("timings":{"leaseDurationMs":15000,"renewDeadlineMs":10000,"retryPeriodMs":2500})";
  struct Case {
    const char* name;
    Snapshot s;
    std::string tail;
  };
  const std::vector<Case> cases = {
      {"leader: after validUntil", Leader(clock, seconds(10)),
       R"("validUntil":"2026-01-02T03:00:10.000Z",)" + timings + "}\n"},
      {"follower", HeldBy("pod-b_12345678", 3), R"("leaseDurationSeconds":15,)" + timings + "}\n"},
      // The gate reads them at start, when the sidecar may not have read the lock yet.
      {"not observed: before the reason", NotObserved(),
       timings + R"(,"reason":"the lock has not been read yet"})" + "\n"},
  };
  for (const Case& c : cases) {
    SUBCASE(c.name) {
      const std::string body = Call("GET", "/leader", c.s, clock, options).body;
      REQUIRE(body.size() >= c.tail.size());
      CHECK(body.substr(body.size() - c.tail.size()) == c.tail);
      // Not in LeaderAnswer (watch events, the status file), nor without the options.
      CHECK(LeaderAnswer(c.s, clock).body.find("timings") == std::string::npos);
      CHECK(Call("GET", "/leader", c.s, clock).body.find("timings") == std::string::npos);
    }
  }
}

TEST_CASE("?pretty indents, ?pretty=0 does not") {
  FakeClock clock;
  const Snapshot s = HeldBy("pod-b", 1);
  CHECK(Call("GET", "/leader?pretty", s, clock).body.rfind("{\n  \"name\": \"pod-b\",\n", 0) == 0);
  CHECK(Call("GET", "/leader?pretty=1", s, clock).body.rfind("{\n  \"name\"", 0) == 0);
  CHECK(Call("GET", "/leader?pretty=0", s, clock).body.rfind("{\"name\"", 0) == 0);
  CHECK(Call("GET", "/leader?pretty=false", s, clock).body.rfind("{\"name\"", 0) == 0);
}

TEST_CASE("GET /is-leader") {
  FakeClock clock;
  struct Case {
    const char* name;
    Snapshot s;
    int status;
    const char* body;
  };
  const std::vector<Case> cases = {
      {"not observed", NotObserved(), 503, "false"},
      {"follower", HeldBy("pod-b", 3), 503, "false"},
      {"leader", Leader(clock, seconds(10)), 200, "true"},
      {"stale leader", HeldBy("pod-a_0badcafe", 4), 503, "false"},
  };
  for (const Case& c : cases) {
    SUBCASE(c.name) {
      const http::Answer a = Call("GET", "/is-leader", c.s, clock);
      CHECK(a.status == c.status);
      CHECK(a.content_type == kText);
      CHECK(a.body == c.body);
    }
  }
}

TEST_CASE("POST /release") {
  FakeClock clock;
  struct Case {
    const char* name;
    Snapshot s;
    const char* body;
  };
  const std::vector<Case> cases = {
      {"leader", Leader(clock, seconds(10)),
       R"({"released":true,"wasLeader":true,"identity":"pod-a_0badcafe","term":4})"},
      {"stale leader: still holds the record, so it is released", HeldBy("pod-a_0badcafe", 4),
       R"({"released":true,"wasLeader":false,"identity":"pod-a_0badcafe","term":4})"},
      {"follower", HeldBy("pod-b", 3),
       R"({"released":false,"wasLeader":false,"identity":"pod-a_0badcafe","term":3})"},
      {"not observed: accepted anyway", NotObserved(),
       R"({"released":false,"wasLeader":false,"identity":"pod-a_0badcafe","term":0})"},
  };
  for (const Case& c : cases) {
    SUBCASE(c.name) {
      int calls = 0;
      HandlerOptions options;
      options.release = [&calls] { ++calls; };
      const http::Answer a = Call("POST", "/release", c.s, clock, options);
      CHECK(a.status == 202);
      CHECK(a.content_type == kJson);
      CHECK(a.body == std::string(c.body) + "\n");
      CHECK(calls == 1);
    }
  }
}

TEST_CASE("POST /release from a peer that is not loopback: 403, and nothing is released") {
  FakeClock clock;
  int calls = 0;
  HandlerOptions options;
  options.release = [&calls] { ++calls; };
  const http::Answer a =
      Call("POST", "/release", Leader(clock, seconds(10)), clock, options, /*loopback=*/false);
  CHECK(a.status == 403);
  CHECK(a.body == "{\"error\":\"POST /release is only accepted from a loopback address\"}\n");
  CHECK(calls == 0);
  // Reading needs no loopback peer.
  CHECK(Call("GET", "/leader", Leader(clock, seconds(10)), clock, options, false).status == 200);
}

TEST_CASE("POST /release in observe mode: 409, and nothing is released") {
  FakeClock clock;
  const std::string refusal =
      "{\"error\":\"this agent observes the lock (--agent-mode observe) and never writes it: "
      "nothing to release; the operator that holds it releases it\"}\n";
  struct Case {
    const char* name;
    Snapshot s;
    bool loopback;
    int status;
  };
  const std::vector<Case> cases = {
      {"this pod holds the lock", Leader(clock, seconds(10)), true, 409},
      {"another pod holds it", HeldBy("pod-b", 3), true, 409},
      {"not read yet", NotObserved(), true, 409},
      {"not loopback: the 403 comes first", Leader(clock, seconds(10)), false, 403},
  };
  for (const Case& c : cases) {
    SUBCASE(c.name) {
      int calls = 0;
      HandlerOptions options;
      options.observe_only = true;
      options.release = [&calls] { ++calls; };  // never called, even if set
      const http::Answer a = Call("POST", "/release", c.s, clock, options, c.loopback);
      CHECK(a.status == c.status);
      CHECK(a.content_type == kJson);
      if (c.status == 409) CHECK(a.body == refusal);
      CHECK(calls == 0);
    }
  }
}

TEST_CASE("POST /release without a callback still answers") {
  FakeClock clock;
  CHECK(Call("POST", "/release", NotObserved(), clock).status == 202);
}

TEST_CASE("GET /readyz") {
  FakeClock clock;
  struct Case {
    const char* name;
    Snapshot s;
    int status;
    std::string body;
  };
  const std::string refused =
      "the API server refuses this agent (its ServiceAccount needs get, create, update and watch "
      "on the lock; the Role in deploy/rbac grants them): ";
  const std::vector<Case> cases = {
      {"not observed yet", NotObserved(), 503,
       R"({"ready":false,"reason":"the lock has not been read yet","identity":"pod-a_0badcafe",)"
       R"("phase":"candidate","observed":false,"isLeader":false,"apiOutage":false,)"
       R"("lastError":null,"lastErrorCode":null})"},
      {"not observed, API down", WithError(NotObserved(), Code::kUnavailable, "connect refused"),
       503,
       R"({"ready":false,"reason":"the lock has not been read yet (last error: Unavailable: )"
       R"j(connect refused)","identity":"pod-a_0badcafe","phase":"candidate","observed":false,)j"
       R"("isLeader":false,"apiOutage":true,"lastError":"connect refused",)"
       R"("lastErrorCode":"Unavailable"})"},
      {"follower, healthy", HeldBy("pod-b", 3), 200,
       R"({"ready":true,"identity":"pod-a_0badcafe","phase":"candidate","observed":true,)"
       R"("isLeader":false,"apiOutage":false,"lastError":null,"lastErrorCode":null})"},
      {"leader, healthy", Leader(clock, seconds(5)), 200,
       R"({"ready":true,"identity":"pod-a_0badcafe","phase":"leader","observed":true,)"
       R"("isLeader":true,"apiOutage":false,"lastError":null,"lastErrorCode":null})"},
      {"Unauthorized", WithError(HeldBy("pod-b", 3), Code::kUnauthorized, "token expired"), 503,
       R"({"ready":false,"reason":"the API server does not accept this agent's credentials: )"
       R"(Unauthorized: token expired","identity":"pod-a_0badcafe","phase":"candidate",)"
       R"("observed":true,"isLeader":false,"apiOutage":false,"lastError":"token expired",)"
       R"("lastErrorCode":"Unauthorized"})"},
      {"Forbidden (no update permission)",
       WithError(HeldBy("pod-b", 3), Code::kForbidden, "cannot update"), 503,
       R"({"ready":false,"reason":")" + refused +
           R"(Forbidden: cannot update","identity":"pod-a_0badcafe","phase":"candidate",)"
           R"("observed":true,"isLeader":false,"apiOutage":false,"lastError":"cannot update",)"
           R"("lastErrorCode":"Forbidden"})"},
      {"Invalid write", WithError(HeldBy("pod-b", 3), Code::kInvalid, "bad holder"), 503,
       R"({"ready":false,"reason":"the API server rejects the lock record: Invalid: bad holder",)"
       R"("identity":"pod-a_0badcafe","phase":"candidate","observed":true,"isLeader":false,)"
       R"("apiOutage":false,"lastError":"bad holder","lastErrorCode":"Invalid"})"},
      {"BadRequest write", WithError(HeldBy("pod-b", 3), Code::kBadRequest, "bad json"), 503,
       R"({"ready":false,"reason":"the API server rejects the lock record: BadRequest: bad json",)"
       R"("identity":"pod-a_0badcafe","phase":"candidate","observed":true,"isLeader":false,)"
       R"("apiOutage":false,"lastError":"bad json","lastErrorCode":"BadRequest"})"},
      // The three meanings kInvalid used to share besides the 422: each its own code
      // and reason, all still not ready.
      {"Malformed: a proxy answering 200 with HTML",
       WithError(HeldBy("pod-b", 3), Code::kMalformed, "Lease is not valid JSON"), 503,
       R"({"ready":false,"reason":"the answer to the lock request cannot be read (not the API )"
       R"(server's JSON: a proxy in the way?): Malformed: Lease is not valid JSON",)"
       R"("identity":"pod-a_0badcafe","phase":"candidate","observed":true,"isLeader":false,)"
       R"("apiOutage":false,"lastError":"Lease is not valid JSON","lastErrorCode":"Malformed"})"},
      {"BadConfig: our own configuration",
       WithError(HeldBy("pod-b", 3), Code::kBadConfig, "token file /t is empty"), 503,
       R"({"ready":false,"reason":"this agent's configuration is unusable: BadConfig: token )"
       R"(file /t is empty","identity":"pod-a_0badcafe","phase":"candidate","observed":true,)"
       R"("isLeader":false,"apiOutage":false,"lastError":"token file /t is empty",)"
       R"("lastErrorCode":"BadConfig"})"},
      {"FailedPrecondition: a bug of ours",
       WithError(HeldBy("pod-b", 3), Code::kFailedPrecondition, "nothing cached"), 503,
       R"({"ready":false,"reason":"internal error: a precondition was broken (a bug: please )"
       R"(report it): FailedPrecondition: nothing cached","identity":"pod-a_0badcafe",)"
       R"("phase":"candidate","observed":true,"isLeader":false,"apiOutage":false,)"
       R"("lastError":"nothing cached","lastErrorCode":"FailedPrecondition"})"},
      {"outage: Unavailable keeps it ready",
       WithError(HeldBy("pod-b", 3), Code::kUnavailable, "503 from apiserver"), 200,
       R"({"ready":true,"identity":"pod-a_0badcafe","phase":"candidate","observed":true,)"
       R"("isLeader":false,"apiOutage":true,"lastError":"503 from apiserver",)"
       R"("lastErrorCode":"Unavailable"})"},
      {"outage: DeadlineExceeded keeps a leader ready",
       WithError(Leader(clock, seconds(3)), Code::kDeadlineExceeded, "timeout"), 200,
       R"({"ready":true,"identity":"pod-a_0badcafe","phase":"leader","observed":true,)"
       R"("isLeader":true,"apiOutage":true,"lastError":"timeout",)"
       R"("lastErrorCode":"DeadlineExceeded"})"},
      {"outage: TooManyRequests", WithError(HeldBy("pod-b", 3), Code::kTooManyRequests, "slow"),
       200,
       R"({"ready":true,"identity":"pod-a_0badcafe","phase":"candidate","observed":true,)"
       R"("isLeader":false,"apiOutage":true,"lastError":"slow","lastErrorCode":"TooManyRequests"})"},
      {"Conflict: a lost race, ready, reported but not an outage",
       WithError(HeldBy("pod-b", 3), Code::kConflict, "object was modified"), 200,
       R"({"ready":true,"identity":"pod-a_0badcafe","phase":"candidate","observed":true,)"
       R"("isLeader":false,"apiOutage":false,"lastError":"object was modified",)"
       R"("lastErrorCode":"Conflict"})"},
  };
  for (const Case& c : cases) {
    SUBCASE(c.name) {
      const http::Answer a = Call("GET", "/readyz", c.s, clock);
      CHECK(a.status == c.status);
      CHECK(a.content_type == kJson);
      CHECK(a.body == c.body + "\n");
    }
  }
}

// Every code: /readyz and leasehold_ready agree (ReadyFor), a not-ready answer names a reason of
// its own for the code, and no two refusing codes share a reason but Invalid/BadRequest (both
// "the API server rejects the lock record").
TEST_CASE("GET /readyz: every code has one reason") {
  FakeClock clock;
  std::map<std::string, std::vector<std::string>> codes_by_reason;
  for (int i = 0; i <= static_cast<int>(Code::kDeadlineExceeded); ++i) {
    const Code code = static_cast<Code>(i);
    CAPTURE(CodeName(code));
    const Snapshot s =
        code == Code::kOk ? HeldBy("pod-b", 3) : WithError(HeldBy("pod-b", 3), code, "m");
    const http::Answer a = Call("GET", "/readyz", s, clock);
    const bool ready = ReadyFor(true, code);
    CHECK(a.status == (ready ? 200 : 503));
    const std::string needle = R"("reason":")";
    const size_t at = a.body.find(needle);
    if (ready) {
      CHECK(at == std::string::npos);
      continue;
    }
    REQUIRE(at != std::string::npos);
    const std::string tail = std::string(": ") + CodeName(code) + ": m";
    const size_t end = a.body.find(tail, at);
    REQUIRE(end != std::string::npos);
    const std::string reason = a.body.substr(at + needle.size(), end - at - needle.size());
    CHECK(reason != "not ready");
    codes_by_reason[reason].push_back(CodeName(code));
  }
  for (const auto& [reason, codes] : codes_by_reason) {
    CAPTURE(reason);
    if (codes.size() > 1) {
      CHECK(codes == std::vector<std::string>{"Invalid", "BadRequest"});
    }
  }
  CHECK(codes_by_reason.size() == 6);  // 401, 403, 400/422, Malformed, BadConfig, precondition
}

TEST_CASE("GET /healthz") {
  struct Case {
    const char* name;
    Phase phase;
    // Last progress of the loop (an attempt or a judged watch event), relative to the start;
    // negative = none yet.
    Duration last_progress;
    Duration now;  // since the start
    int status;
    const char* body;
    int record_lease_seconds = 0;  // the holder's leaseDurationSeconds; 0: none recorded
  };
  const Duration none = -seconds(1);
  // --lease-duration 15s: the limit is 15s + 20s = 35s.
  const std::vector<Case> cases = {
      {"just started", Phase::kCandidate, none, Duration::zero(), 200, "ok"},
      {"no attempt yet, at the limit", Phase::kCandidate, none, seconds(35), 200, "ok"},
      {"no attempt since start, past the limit", Phase::kCandidate, none,
       seconds(35) + milliseconds(1), 503,
       "wedged: the election loop made no progress since start, 35.0s (limit 35.0s)"},
      {"recent progress", Phase::kLeader, seconds(100), seconds(110), 200, "ok"},
      {"last progress exactly at the limit", Phase::kCandidate, seconds(100), seconds(135), 200,
       "ok"},
      {"leader wedged", Phase::kLeader, seconds(100), seconds(136), 503,
       "wedged: the election loop made no progress for 36.0s (limit 35.0s)"},
      {"a longer lease in the record stretches the limit", Phase::kCandidate, seconds(100),
       seconds(139), 200, "ok", 24},
      {"... to that lease + 20s", Phase::kCandidate, seconds(100), seconds(145), 503,
       "wedged: the election loop made no progress for 45.0s (limit 44.0s)", 24},
      {"a shorter one does not shorten it", Phase::kCandidate, seconds(100), seconds(135), 200,
       "ok", 5},
      {"held off is deliberately idle", Phase::kHeldOff, seconds(1), seconds(600), 200, "ok"},
      {"stopping is not judged", Phase::kStopping, seconds(1), seconds(600), 200, "ok"},
      {"done is not judged", Phase::kDone, none, seconds(600), 200, "ok"},
  };
  for (const Case& c : cases) {
    SUBCASE(c.name) {
      FakeClock clock;
      HandlerOptions options;
      options.started_at = clock.MonotonicNow();
      options.timings = Timings{};  // a lease of 15s
      Snapshot s = HeldBy("pod-b", 1);
      s.phase = c.phase;
      s.record.lease_duration_seconds = c.record_lease_seconds;
      if (c.last_progress >= Duration::zero()) {
        s.last_progress_at = options.started_at + c.last_progress;
      }
      clock.Advance(c.now);
      const http::Answer a = Call("GET", "/healthz", s, clock, options);
      CHECK(a.status == c.status);
      CHECK(a.content_type == kText);
      CHECK(a.body == c.body);
    }
  }
}

TEST_CASE("LeaderAnswer is the /leader answer") {
  FakeClock clock;
  for (const Snapshot& s : {NotObserved(), HeldBy("pod-b", 3), Leader(clock, seconds(10))}) {
    const http::Answer a = LeaderAnswer(s, clock);
    const http::Answer b = Call("GET", "/leader", s, clock);
    CHECK(a.status == b.status);
    CHECK(a.body == b.body);
    CHECK(a.content_type == kJson);
    CHECK(LeaderAnswer(s, clock, /*pretty=*/true).body ==
          Call("GET", "/leader?pretty", s, clock).body);
  }
}

TEST_CASE("GET /metrics") {
  FakeClock clock;
  HandlerOptions options;
  options.metrics = [] { return std::string("leasehold_is_leader 1\n"); };
  http::Answer a = Call("GET", "/metrics", Leader(clock, seconds(10)), clock, options);
  CHECK(a.status == 200);
  CHECK(a.content_type == "text/plain; version=0.0.4; charset=utf-8");
  CHECK(a.body == "leasehold_is_leader 1\n");
  // The router takes no snapshot for it (a scrape never takes the elector's lock).
  CHECK_FALSE(FindRoute("/metrics")->reads_snapshot);
  for (const char* path : {"/", "/leader", "/is-leader", "/healthz", "/readyz", "/release"}) {
    CAPTURE(path);
    CHECK(FindRoute(path)->reads_snapshot);
  }
  a = Call("POST", "/metrics", NotObserved(), clock, options);
  CHECK(a.status == 405);
  CHECK(Header(a, "Allow") == "GET, HEAD");
  // Without a source there is no such endpoint.
  CHECK(Call("GET", "/metrics", NotObserved(), clock).status == 404);
}

TEST_CASE("/leader/watch reaching the handler: the listener has no watch hub") {
  FakeClock clock;
  http::Answer a = Call("GET", "/leader/watch", NotObserved(), clock);
  CHECK(a.status == 503);
  CHECK(a.body == R"j({"error":"the watch stream is off (--max-watchers=0)"})j"
                  "\n");
  a = Call("PUT", "/leader/watch", NotObserved(), clock);
  CHECK(a.status == 405);
  CHECK(Header(a, "Allow") == "GET, HEAD");
}

TEST_CASE("the probe listener: /healthz, /readyz, /is-leader and /metrics only") {
  FakeClock clock;
  const std::string endpoints = " (endpoints: /is-leader, /healthz, /readyz, /metrics)";
  struct Case {
    const char* method;
    const char* path;
    int status;
  };
  const std::vector<Case> cases = {
      {"GET", "/healthz", 200},    {"GET", "/readyz", 200},
      {"GET", "/is-leader", 200},  {"HEAD", "/is-leader", 200},
      {"POST", "/is-leader", 405}, {"GET", "/leader", 404},
      {"GET", "/", 404},           {"POST", "/release", 404},
      {"GET", "/metrics", 200},    {"GET", "/leader/watch", 404},
      {"POST", "/metrics", 405},   {"HEAD", "/metrics", 200},
      {"GET", "/nope", 404},
  };
  for (const Case& c : cases) {
    CAPTURE(c.method);
    CAPTURE(c.path);
    int releases = 0;
    HandlerOptions options;
    options.probe_only = true;
    options.release = [&releases] { ++releases; };
    options.metrics = [] { return std::string("m 1\n"); };
    const http::Answer a = Call(c.method, c.path, Leader(clock, seconds(10)), clock, options);
    CHECK(a.status == c.status);
    if (c.status == 404) {
      CHECK(a.body == R"({"error":"no such endpoint on the probe listener: )" +
                          std::string(c.path) + endpoints + "\"}\n");
    }
    CHECK(releases == 0);
  }
}

TEST_CASE("unknown paths and wrong methods") {
  FakeClock clock;
  const std::string endpoints =
      " (endpoints: /leader, /is-leader, /leader/watch, /release, /healthz, /readyz, /metrics)";
  struct Case {
    const char* name;
    const char* method;
    std::string path;
    int status;
    std::string body;
    const char* allow;
  };
  const std::vector<Case> cases = {
      {"unknown path", "GET", "/nope", 404,
       R"({"error":"no such endpoint: /nope)" + endpoints + "\"}", "<none>"},
      {"trailing slash is another path", "GET", "/leader/", 404,
       R"({"error":"no such endpoint: /leader/)" + endpoints + "\"}", "<none>"},
      {"unknown path, any method", "POST", "/nope", 404,
       R"({"error":"no such endpoint: /nope)" + endpoints + "\"}", "<none>"},
      {"odd bytes are not echoed", "GET", "/a\nb\xff", 404,
       R"({"error":"no such endpoint: /a?b?)" + endpoints + "\"}", "<none>"},
      {"POST /leader", "POST", "/leader", 405,
       R"j({"error":"POST is not allowed on /leader (allowed: GET, HEAD)"})j", "GET, HEAD"},
      {"PUT /", "PUT", "/", 405, R"j({"error":"PUT is not allowed on / (allowed: GET, HEAD)"})j",
       "GET, HEAD"},
      {"DELETE /is-leader", "DELETE", "/is-leader", 405,
       R"j({"error":"DELETE is not allowed on /is-leader (allowed: GET, HEAD)"})j", "GET, HEAD"},
      {"POST /healthz", "POST", "/healthz", 405,
       R"j({"error":"POST is not allowed on /healthz (allowed: GET, HEAD)"})j", "GET, HEAD"},
      {"POST /readyz", "POST", "/readyz", 405,
       R"j({"error":"POST is not allowed on /readyz (allowed: GET, HEAD)"})j", "GET, HEAD"},
      {"GET /release", "GET", "/release", 405,
       R"j({"error":"GET is not allowed on /release (allowed: POST)"})j", "POST"},
  };
  for (const Case& c : cases) {
    SUBCASE(c.name) {
      int calls = 0;
      HandlerOptions options;
      options.release = [&calls] { ++calls; };
      const http::Answer a = Call(c.method, c.path, HeldBy("pod-b", 1), clock, options);
      CHECK(a.status == c.status);
      CHECK(a.content_type == kJson);
      CHECK(a.body == c.body + "\n");
      CHECK(Header(a, "Allow") == c.allow);
      CHECK(calls == 0);
    }
  }
}

}  // namespace
}  // namespace leasehold::localapi
