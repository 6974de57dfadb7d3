// Events and the leader label against a strict scripted API client and a FakeClock: the thread
// is only started by the shutdown cases; everything else drives Step() directly.
#include "cluster/announcer.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "fakes/fake_clock.h"
#include "fakes/scripted_api_client.h"

namespace leasehold::cluster {
namespace {

using namespace std::chrono_literals;
using ::leasehold::testing::AnyBody;
using ::leasehold::testing::Call;
using ::leasehold::testing::JsonEq;
using ::leasehold::testing::PATCH;
using ::leasehold::testing::POST;
using ::leasehold::testing::ScriptedApiClient;

constexpr const char* kId = "pod-a_0badcafe";
constexpr const char* kEvents = "/api/v1/namespaces/team/events";
constexpr const char* kPod = "/api/v1/namespaces/web/pods/pod-a";
// FakeClock's wall clock starts at 2026-01-02T03:00:00Z = 0x1886cab91172e000 ns.
constexpr const char* kNow = "2026-01-02T03:00:00Z";

election::Publication Pub(bool leader, election::LockType type = election::LockType::kLeases) {
  election::Publication p;
  p.snapshot.identity = kId;
  p.snapshot.lock = {type, "team", "my-lock"};
  p.snapshot.observed = true;
  p.snapshot.is_leader = leader;
  p.snapshot.record.holder_identity = leader ? kId : "pod-b_1";
  return p;
}

std::string EventJson(const std::string& name, const std::string& api_version,
                      const std::string& kind, const std::string& message,
                      const std::string& at = kNow) {
  return R"({"apiVersion":"v1","kind":"Event","metadata":{"name":")" + name +
         R"(","namespace":"team"},"involvedObject":{"apiVersion":")" + api_version +
         R"(","kind":")" + kind +
         R"(","name":"my-lock","namespace":"team"},"reason":"LeaderElection","message":")" +
         message + R"(","type":"Normal","source":{"component":"leasehold"},"firstTimestamp":")" +
         at + R"(","lastTimestamp":")" + at +
         R"(","count":1,"reportingComponent":"leasehold","reportingInstance":")" + kId + R"("})";
}

std::string LabelJson(const std::string& value) {
  return R"({"metadata":{"labels":{"leasehold.io/role":")" + value + R"("}}})";
}

// An Event (application/json); json "" = any body.
Call PostEvent(std::string json, Result<kube::Response> reply = kube::Response{201, "{}"}) {
  return POST(kEvents, json.empty() ? AnyBody() : JsonEq(std::move(json)), std::move(reply));
}

// The label as a JSON merge patch (application/merge-patch+json).
Call PatchLabel(const std::string& value, Result<kube::Response> reply = kube::Response{200, "{}"},
                std::function<void()> during = nullptr) {
  Call call = PATCH(kPod, JsonEq(LabelJson(value)), std::move(reply));
  call.during = std::move(during);
  return call;
}

KubeAnnouncerOptions EventsOnly() {
  KubeAnnouncerOptions o;
  o.identity = kId;
  return o;
}

KubeAnnouncerOptions WithLabel(bool events = false) {
  KubeAnnouncerOptions o = EventsOnly();
  o.events = events;
  o.label_key = "leasehold.io/role";
  o.pod_name = "pod-a";
  o.pod_namespace = "web";
  return o;
}

struct Fixture {
  explicit Fixture(KubeAnnouncerOptions o) : api(clock, 5s), announcer(api, clock, o) {}
  FakeClock clock;
  ScriptedApiClient api;
  KubeAnnouncer announcer;
};

TEST_CASE("events: became leader and stopped leading, on the lock object") {
  Fixture f(EventsOnly());
  // The first publication says "not leader": nothing happened yet, nothing to record.
  f.announcer.Publish(Pub(false));
  CHECK(f.announcer.Step() == MonoTime::max());

  f.announcer.Publish(Pub(true));
  f.api.Expect(PostEvent(EventJson("my-lock.1886cab91172e000", "coordination.k8s.io/v1", "Lease",
                                   std::string(kId) + " became leader")));
  CHECK(f.announcer.Step() == MonoTime::max());
  CHECK(f.api.pending() == 0);

  // A renew (still leading) is no event.
  f.announcer.Publish(Pub(true));
  CHECK(f.announcer.Step() == MonoTime::max());

  f.clock.Advance(90s);
  f.announcer.Publish(Pub(false));
  f.api.Expect(PostEvent(EventJson("my-lock.1886cace05dde401", "coordination.k8s.io/v1", "Lease",
                                   std::string(kId) + " stopped leading", "2026-01-02T03:01:30Z")));
  f.announcer.Step();
  CHECK(f.api.pending() == 0);
}

TEST_CASE("events: the first publication already leading is recorded") {
  Fixture f(EventsOnly());
  f.announcer.Publish(Pub(true));
  f.api.Expect(PostEvent(EventJson("my-lock.1886cab91172e000", "coordination.k8s.io/v1", "Lease",
                                   std::string(kId) + " became leader")));
  f.announcer.Step();
}

TEST_CASE("events: a multilock records on both of its objects, with distinct names") {
  Fixture f(EventsOnly());
  f.announcer.Publish(Pub(true, election::LockType::kConfigMapsLeases));
  const std::string message = std::string(kId) + " became leader";
  f.api.Expect(PostEvent(EventJson("my-lock.1886cab91172e000", "v1", "ConfigMap", message)));
  f.api.Expect(
      PostEvent(EventJson("my-lock.1886cab91172e001", "coordination.k8s.io/v1", "Lease", message)));
  f.announcer.Step();
}

TEST_CASE("events: a 403 stops events for good; other errors lose only that event") {
  struct Case {
    const char* name;
    Code code;
    bool more_events;
  };
  const std::vector<Case> cases = {
      {"forbidden", Code::kForbidden, false},
      {"unauthorized", Code::kUnauthorized, false},
      {"unavailable", Code::kUnavailable, true},
      {"invalid", Code::kInvalid, true},
  };
  for (const Case& c : cases) {
    SUBCASE(c.name) {
      Fixture f(EventsOnly());
      f.announcer.Publish(Pub(true));
      f.api.Expect(PostEvent("", Status(c.code, "scripted")));
      f.announcer.Step();
      f.announcer.Publish(Pub(false));
      if (c.more_events) f.api.Expect(PostEvent(""));
      f.announcer.Step();
      f.announcer.Publish(Pub(true));
      if (c.more_events) f.api.Expect(PostEvent(""));
      f.announcer.Step();
      CHECK(f.api.pending() == 0);
    }
  }
}

TEST_CASE("events: beyond the queue limit the oldest are dropped") {
  KubeAnnouncerOptions o = EventsOnly();
  o.queue_limit = 2;
  Fixture f(o);
  for (bool leader : {true, false, true, false}) f.announcer.Publish(Pub(leader));
  // Only the last two: "became leader" (the second one) and "stopped leading".
  f.api.Expect(PostEvent(EventJson("my-lock.1886cab91172e000", "coordination.k8s.io/v1", "Lease",
                                   std::string(kId) + " became leader")));
  f.api.Expect(PostEvent(EventJson("my-lock.1886cab91172e001", "coordination.k8s.io/v1", "Lease",
                                   std::string(kId) + " stopped leading")));
  f.announcer.Step();
}

TEST_CASE(
    "label: follower at once, leader on every change, re-asserted every 60s, never per "
    "renew") {
  Fixture f(WithLabel());
  f.announcer.Publish(Pub(false));
  f.api.Expect(PatchLabel("follower"));
  CHECK(f.announcer.Step() == f.clock.MonotonicNow() + 60s);

  f.clock.Advance(10s);
  f.announcer.Publish(Pub(true));
  f.api.Expect(PatchLabel("leader"));
  CHECK(f.announcer.Step() == f.clock.MonotonicNow() + 60s);

  // Renewals publish again and again: no request.
  for (int i = 0; i < 5; ++i) {
    f.clock.Advance(2s);
    f.announcer.Publish(Pub(true));
    CHECK(f.announcer.Step() == f.clock.MonotonicNow() - 2s * (i + 1) + 60s);
  }
  f.clock.Advance(50s - 1ns);
  f.announcer.Step();  // not due yet
  f.clock.Advance(1ns);
  f.api.Expect(PatchLabel("leader"));
  CHECK(f.announcer.Step() == f.clock.MonotonicNow() + 60s);
}

TEST_CASE("label: a failed write is retried after 5s, 10s, 20s, 40s, then every 60s") {
  Fixture f(WithLabel());
  f.announcer.Publish(Pub(false));
  for (Duration backoff : {5s, 10s, 20s, 40s, 60s, 60s}) {
    f.api.Expect(PatchLabel("follower", Status(Code::kForbidden, "pods is forbidden")));
    CAPTURE(backoff.count());
    CHECK(f.announcer.Step() == f.clock.MonotonicNow() + backoff);
    f.clock.Advance(backoff);
  }
  // A change of leadership is written at once, whatever the backoff.
  f.announcer.Publish(Pub(true));
  f.api.Expect(PatchLabel("leader"));
  CHECK(f.announcer.Step() == f.clock.MonotonicNow() + 60s);
}

TEST_CASE("events and label together: the event first, then the label") {
  Fixture f(WithLabel(/*events=*/true));
  f.announcer.Publish(Pub(false));
  f.api.Expect(PatchLabel("follower"));
  f.announcer.Step();
  f.announcer.Publish(Pub(true));
  f.api.Expect(PostEvent(EventJson("my-lock.1886cab91172e000", "coordination.k8s.io/v1", "Lease",
                                   std::string(kId) + " became leader")));
  f.api.Expect(PatchLabel("leader"));
  f.announcer.Step();
  CHECK(f.api.sent() == std::vector<std::string>{"PATCH " + std::string(kPod),
                                                 "POST " + std::string(kEvents),
                                                 "PATCH " + std::string(kPod)});
}

TEST_CASE("shutdown: the label goes back to follower within the budget") {
  struct Case {
    const char* name;
    Duration latency;  // of the final PATCH
    Result<kube::Response> reply;
  };
  const std::vector<Case> cases = {
      {"in time", 10ms, kube::Response{200, "{}"}},
      {"the API hangs: given up at the budget", 3s,
       Status(Code::kDeadlineExceeded, "scripted timeout")},
  };
  for (const Case& c : cases) {
    SUBCASE(c.name) {
      Fixture f(WithLabel());
      f.announcer.Publish(Pub(true));
      f.api.Expect(PatchLabel("leader"));
      f.announcer.Step();
      f.announcer.Start();
      const MonoTime stop_deadline = f.clock.MonotonicNow() + 2s;
      f.api.Expect(PatchLabel("follower", c.reply, [&] { f.clock.Advance(c.latency); }));
      f.announcer.Shutdown(2s);  // joins the thread
      CHECK(f.api.pending() == 0);
      REQUIRE(f.api.deadlines().size() == 2);
      CHECK(f.api.deadlines()[1] == stop_deadline);
      // Publications after shutdown are ignored.
      f.announcer.Publish(Pub(true));
    }
  }
}

TEST_CASE("deletion cost: the leader's pod carries it, a follower's none, in the label's patch") {
  constexpr const char* kCost = R"("controller.kubernetes.io/pod-deletion-cost")";
  struct Case {
    const char* name;
    bool label;
    std::string follower, leader;  // the merge patches, in this order
  };
  const std::string label = R"("labels":{"leasehold.io/role":")";
  const std::vector<Case> cases = {
      {"cost alone", false, R"({"metadata":{"annotations":{)" + std::string(kCost) + R"(:null}}})",
       R"({"metadata":{"annotations":{)" + std::string(kCost) + R"(:"10000"}}})"},
      {"with the label", true,
       R"({"metadata":{)" + label + R"(follower"},"annotations":{)" + kCost + R"(:null}}})",
       R"({"metadata":{)" + label + R"(leader"},"annotations":{)" + kCost + R"(:"10000"}}})"},
  };
  for (const Case& c : cases) {
    SUBCASE(c.name) {
      KubeAnnouncerOptions o = WithLabel();
      if (!c.label) o.label_key.clear();
      o.deletion_cost = 10000;
      Fixture f(o);
      f.announcer.Publish(Pub(false));
      f.api.Expect(PATCH(kPod, JsonEq(c.follower), kube::Response{200, "{}"}));
      CHECK(f.announcer.Step() == f.clock.MonotonicNow() + 60s);
      f.announcer.Publish(Pub(true));
      f.api.Expect(PATCH(kPod, JsonEq(c.leader), kube::Response{200, "{}"}));
      CHECK(f.announcer.Step() == f.clock.MonotonicNow() + 60s);
      // Renewals: nothing; the reassertion and the shutdown write the same patches again.
      f.clock.Advance(30s);
      f.announcer.Publish(Pub(true));
      CHECK(f.announcer.Step() == f.clock.MonotonicNow() + 30s);
      f.clock.Advance(30s);
      f.api.Expect(PATCH(kPod, JsonEq(c.leader), kube::Response{200, "{}"}));
      f.announcer.Step();
      f.announcer.Start();
      f.api.Expect(PATCH(kPod, JsonEq(c.follower), kube::Response{200, "{}"}));
      f.announcer.Shutdown(2s);
      CHECK(f.api.pending() == 0);
    }
  }
}

TEST_CASE("shutdown: nothing to do when the label already says follower") {
  Fixture f(WithLabel());
  f.announcer.Publish(Pub(false));
  f.api.Expect(PatchLabel("follower"));
  f.announcer.Step();
  f.announcer.Start();
  f.announcer.Shutdown(2s);
  CHECK(f.api.sent().size() == 1);
}

}  // namespace
}  // namespace leasehold::cluster
