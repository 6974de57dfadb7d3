// The local API's answers as bytes: /leader, its watch events, the status
// file's line, /readyz, compared byte for byte with test/golden/, which was captured from the code
// before it moved. A key renamed, reordered or re-spelled fails here, whatever both sides agree on.
#include "fakes/golden.h"

#include <doctest/doctest.h>

#include <memory>
#include <string>

#include "election/publisher.h"
#include "fakes/fake_clock.h"
#include "fakes/temp_dir.h"
#include "localapi/handler.h"
#include "localapi/routes.h"
#include "localapi/status_file.h"
#include "localapi/watch_hub.h"

namespace leasehold::localapi {
namespace {

using election::Phase;
using election::Snapshot;
using namespace std::chrono_literals;

// FakeClock starts at 2026-01-02T03:00:00.000Z.
SysTime At(const Clock& clock, Duration since) {
  return clock.SystemNow() + std::chrono::duration_cast<SysTime::duration>(since);
}

Snapshot Unobserved() {
  Snapshot s;
  s.identity = "pod-a_0badcafe";
  s.lock = {election::LockType::kLeases, "default", "my-lock"};
  s.last_error = Status(Code::kUnavailable, "connection refused");
  return s;
}

Snapshot HeldBy(const Clock& clock, const std::string& holder) {
  Snapshot s = Unobserved();
  s.last_error = Status::Ok();
  s.observed = true;
  s.phase = Phase::kCandidate;
  s.record.holder_identity = holder;
  s.record.lease_duration_seconds = 15;
  s.record.acquire_time = At(clock, -60s);
  s.record.renew_time = At(clock, -1s + 123456789ns);
  s.record.leader_transitions = 4;
  s.last_attempt_at = clock.MonotonicNow();
  s.last_progress_at = s.last_attempt_at;
  return s;
}

Snapshot Leading(const Clock& clock) {
  Snapshot s = HeldBy(clock, "pod-a_0badcafe");
  s.phase = Phase::kLeader;
  s.is_leader = true;
  s.valid_until = clock.MonotonicNow() + 9876ms;
  return s;
}

Snapshot Opaque(const Clock& clock) {
  Snapshot s = HeldBy(clock, "");
  s.record.acquire_time.reset();
  s.record.renew_time.reset();
  s.record.leader_transitions = 0;
  s.opaque = true;
  s.unreadable = "control-plane.alpha.kubernetes.io/leader: not JSON";
  s.term_unreliable_reason = "an unreadable record";
  return s;
}

Snapshot UnreliableTerm(const Clock& clock) {
  Snapshot s = HeldBy(clock, "pod-b_12345678");
  s.lock.type = election::LockType::kConfigMapsLeases;
  s.term_unreliable_reason = "a change of holder did not raise leaderTransitions (4 to 4)";
  return s;
}

HandlerOptions WithTimings(bool timings) {
  HandlerOptions o;
  if (timings) o.timings = Timings{15s, 10s, 2s};
  return o;
}

http::Answer Get(const std::string& path, const Snapshot& s, const Clock& clock,
                 const HandlerOptions& options) {
  HttpQuery q;
  q.method = "GET";
  q.path = path;
  q.loopback_peer = true;
  return Handle(q, FindRoute(q.path), s, clock, options);
}

struct Case {
  const char* name;
  Snapshot (*make)(const Clock&);
  int status;
};

Snapshot UnobservedAt(const Clock&) { return Unobserved(); }
Snapshot Follower(const Clock& clock) { return HeldBy(clock, "pod-b_12345678"); }

const Case kCases[] = {
    {"leader", Leading, 200},
    {"follower", Follower, 200},
    {"unobserved", UnobservedAt, 503},
    {"opaque", Opaque, 200},
    {"unreliable-term", UnreliableTerm, 200},
};

TEST_CASE("golden: GET /leader, with and without timings") {
  FakeClock clock;
  for (const Case& c : kCases) {
    for (bool timings : {false, true}) {
      CAPTURE(c.name);
      CAPTURE(timings);
      const http::Answer a = Get("/leader", c.make(clock), clock, WithTimings(timings));
      CHECK(a.status == c.status);
      CHECK(a.content_type == "application/json");
      CheckGolden(std::string("leader/") + c.name + (timings ? ".timings" : "") + ".json", a.body);
    }
  }
}

// The README's sample (`curl -s localhost:4040/leader`): a K8up leader, as the README shows it.
Snapshot K8upLeader(const Clock& clock) {
  Snapshot s;
  s.identity = "k8up-7d9f_1a2b3c4d";
  s.lock = {election::LockType::kLeases, "k8up", "k8up-leader"};
  s.observed = true;
  s.phase = Phase::kLeader;
  s.is_leader = true;
  s.record.holder_identity = s.identity;
  s.record.lease_duration_seconds = 15;
  s.record.acquire_time = At(clock, -218s + 123ms);
  s.record.renew_time = At(clock, -127ms);
  s.record.leader_transitions = 3;
  s.valid_until = clock.MonotonicNow() + 9873ms;
  return s;
}

TEST_CASE("golden: the README's GET /leader sample") {
  FakeClock clock;
  const http::Answer a = Get("/leader", K8upLeader(clock), clock, WithTimings(true));
  CheckGolden("leader/readme.json", a.body);
}

TEST_CASE("golden: GET /readyz") {
  FakeClock clock;
  for (const Case& c : kCases) {
    CAPTURE(c.name);
    const http::Answer a = Get("/readyz", c.make(clock), clock, WithTimings(false));
    CheckGolden(std::string("readyz/") + c.name + ".json", a.body);
  }
  Snapshot forbidden = Follower(clock);
  forbidden.last_error = Status(Code::kForbidden, "leases.coordination.k8s.io is forbidden");
  CheckGolden("readyz/forbidden.json", Get("/readyz", forbidden, clock, WithTimings(false)).body);
  // A proxy answering the lock's GET with 200 and an HTML page (no longer "the API server
  // rejects the lock record"). The message is the lease lock's for such a body.
  Snapshot malformed = Follower(clock);
  malformed.last_error =
      Status(Code::kMalformed, "Lease is not valid JSON: Invalid value. at offset 0");
  CheckGolden("readyz/malformed.json", Get("/readyz", malformed, clock, WithTimings(false)).body);
}

// The watch events and the status file carry what their sinks render from the election's
// publication: no timings. Through the real sinks: a watch client's first event (rendered when it
// attaches), a published event, and the file the publication was written to.
TEST_CASE("golden: the watch stream's event frames and the status file's content") {
  for (const Case& c : kCases) {
    CAPTURE(c.name);
    FakeClock clock;
    Snapshot s = c.make(clock);
    election::Publisher publisher([&s](election::Reading) { return s; }, clock);
    WatchHub hub(publisher, WatchHubOptions{});
    publisher.AddSink(&hub);
    testing::TempDir dir;
    const std::string path = dir.path() + "/status.json";
    auto file = StatusFile::Create(path, "{}", clock);
    REQUIRE(file.ok());
    publisher.AddSink(file->get());

    auto client = hub.Attach("golden");  // publishes the state first, then attaches
    REQUIRE(client.ok());
    CHECK(publisher.Last().sequence == 1);
    CheckGolden(std::string("status-file/") + c.name + ".json", ReadWholeFile(path));
    // A publication: the same state under the next term, which the event carries byte for byte
    // as the golden one but for the term.
    const std::string term = "\"term\":" + std::to_string(s.record.leader_transitions) + ",";
    const std::string next = "\"term\":" + std::to_string(s.record.leader_transitions + 1) + ",";
    s.record.leader_transitions += 1;
    publisher.Poll();
    const WatchHub::Frames frames = hub.Take(**client, 10);
    REQUIRE(frames.frames.size() == 2);
    CheckGolden(std::string("sse/") + c.name + ".txt", frames.frames[0]);
    std::string published = ReadGolden(std::string("sse/") + c.name + ".txt");
    REQUIRE(published.find(term) != std::string::npos);
    published.replace(published.find(term), term.size(), next);
    CHECK(frames.frames[1] == published);
  }
  CheckGolden("sse/ping.txt", WatchHub::kPing);
}

}  // namespace
}  // namespace leasehold::localapi
