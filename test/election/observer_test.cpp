// Observe mode's "yes" (observer.cpp): only Gets, never a write; the bound from the send time S
// of the last Get that read an older version; watch events only shorten it; which holders are
// this pod.
#include "election/observer.h"

#include <doctest/doctest.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "fakes/fake_clock.h"
#include "fakes/fake_lock.h"

namespace leasehold::election {
namespace {

using namespace std::chrono_literals;
using testing::FakeLock;

constexpr const char* kMe = "web-0_5f1c";     // controller-runtime's <hostname>_<uuid>
constexpr const char* kOther = "web-1_9a7e";  // another pod's manager

// A record as its holder renews it: renewTime `renew_ms` after a whole second, so records whose
// renew_ms fall in one second look the same to a Go elector (their raw bytes here differ).
LockObservation Rec(const std::string& holder, int renew_ms, int lease_seconds = 7) {
  LockObservation o;
  o.record.holder_identity = holder;
  o.record.lease_duration_seconds = lease_seconds;
  o.record.acquire_time = SysTime(std::chrono::seconds(1767000000));
  o.record.renew_time =
      SysTime(std::chrono::seconds(1767000000) + std::chrono::milliseconds(renew_ms));
  o.record.leader_transitions = holder == kMe ? 1 : 2;
  o.raw = holder + "/" + std::to_string(renew_ms);
  return o;
}

// One step of a case. Times are milliseconds since the case began, on the fake clock.
struct Act {
  enum Kind { kGet, kGetError, kWatch, kWait, kYesUntil, kNo } kind;
  LockObservation obs = {};
  Duration latency{};
  Code code = Code::kOk;
  int ms = 0;
};
Act Get(LockObservation o, Duration latency = {}) { return {Act::kGet, std::move(o), latency}; }
Act GetError(Code c) { return {Act::kGetError, {}, {}, c}; }
Act Watch(LockObservation o) { return {Act::kWatch, std::move(o)}; }
Act Wait(int ms) { return {Act::kWait, {}, {}, Code::kOk, ms}; }
Act YesUntil(int ms) { return {Act::kYesUntil, {}, {}, Code::kOk, ms}; }
Act No() { return {Act::kNo}; }

LockObservation Opaque() {
  LockObservation o;
  o.opaque = true;
  o.raw = "opaque:77";
  o.unreadable = "holderIdentity: not a string";
  return o;
}

ObserverConfig Config() {
  ObserverConfig c;
  c.match = {MatchRule::kPod, "web-0"};
  c.identity = "web-0";
  c.lease_duration = 7s;
  c.renew_deadline = 4s;  // the span: min(4s, 7s - kObserveMargin) = 4s
  c.retry_period = 1s;
  return c;
}

TEST_CASE("Observer: the yes window runs from the send of the last Get of an older version") {
  struct Case {
    const char* name;
    std::vector<Act> acts;
  };
  const std::vector<Case> cases = {
      {"the first Get names this pod: no lower bound, no", {Get(Rec(kMe, 0)), No()}},
      {"a changed version: yes until the earlier Get's send + renew-deadline",
       {Get(Rec(kMe, 0)), Wait(1000), Get(Rec(kMe, 1000)), YesUntil(4000)}},
      {"S is the earlier Get's send, not its answer",
       {Get(Rec(kMe, 0), 600ms), Wait(400), Get(Rec(kMe, 1000)), YesUntil(4000)}},
      {"an unchanged version does not extend, and the yes runs out",
       {Get(Rec(kMe, 0)), Wait(1000), Get(Rec(kMe, 1000)), Wait(1000), Get(Rec(kMe, 1000)),
        YesUntil(4000), Wait(1999), YesUntil(4000), Wait(1), No()}},
      {"the next renewal extends from the Get before it",
       {Get(Rec(kMe, 0)), Wait(1000), Get(Rec(kMe, 1000)), Wait(1000), Get(Rec(kMe, 1000)),
        Wait(1000), Get(Rec(kMe, 3000)), YesUntil(6000)}},
      {"two renewals within one second look unchanged, as to a Go elector",
       {Get(Rec(kMe, 100)), Wait(1000), Get(Rec(kMe, 800)), No()}},
      {"a change of holder to this pod counts as a change",
       {Get(Rec(kOther, 0)), Wait(1000), Get(Rec(kMe, 1000)), YesUntil(4000)}},
      {"another holder: no",
       {Get(Rec(kMe, 0)), Wait(1000), Get(Rec(kMe, 1000)), Wait(500), Get(Rec(kOther, 1500)),
        No()}},
      {"an unreadable record: no",
       {Get(Rec(kMe, 0)), Wait(1000), Get(Rec(kMe, 1000)), Wait(500), Get(Opaque()), No()}},
      {"a failed Get says nothing: S stays the last answered Get's",
       {Get(Rec(kMe, 0)), Wait(1000), GetError(Code::kDeadlineExceeded), Wait(1000),
        Get(Rec(kMe, 2000)), YesUntil(4000)}},
      {"an absent lock is a version: created later, it was written after that Get",
       {GetError(Code::kNotFound), Wait(1000), Get(Rec(kMe, 1000)), YesUntil(4000)}},
      {"the record's shorter lease duration shortens the yes",
       {Get(Rec(kMe, 0, 5)), Wait(1000), Get(Rec(kMe, 1000, 5)), YesUntil(3000)}},
      {"the record's longer lease duration does not lengthen it",
       {Get(Rec(kMe, 0, 60)), Wait(1000), Get(Rec(kMe, 1000, 60)), YesUntil(4000)}},
      {"a lease duration within the margin: never yes",
       {Get(Rec(kMe, 0, 2)), Wait(1000), Get(Rec(kMe, 1000, 2)), No()}},
      {"a watch event naming another holder says no at once",
       {Get(Rec(kMe, 0)), Wait(1000), Get(Rec(kMe, 1000)), YesUntil(4000), Watch(Rec(kOther, 1200)),
        No()}},
      {"a Get sent after that event ends the veto",
       {Get(Rec(kMe, 0)), Wait(1000), Get(Rec(kMe, 1000)), Watch(Rec(kOther, 1200)), Wait(100),
        Get(Rec(kMe, 2000)), YesUntil(5000)}},
      {"a Get sent at the event's instant does not end the veto",
       {Get(Rec(kMe, 0)), Wait(1000), Get(Rec(kMe, 1000)), Watch(Rec(kOther, 1200)),
        Get(Rec(kMe, 2000)), No()}},
      {"a watch event naming this pod starts no yes",
       {Get(Rec(kOther, 0)), Wait(500), Watch(Rec(kMe, 500)), No()}},
      {"a watch event naming this pod does not extend one",
       {Get(Rec(kMe, 0)), Wait(1000), Get(Rec(kMe, 1000)), Wait(2000), Watch(Rec(kMe, 3000)),
        YesUntil(4000)}},
      {"a released lock (empty holder) seen by the watch: no",
       {Get(Rec(kMe, 0)), Wait(1000), Get(Rec(kMe, 1000)), Watch(Rec("", 1500)), No()}},
  };
  for (const Case& c : cases) {
    SUBCASE(c.name) {
      FakeClock clock;
      FakeLock lock(clock);
      for (const Act& a : c.acts) {
        if (a.kind == Act::kGet) lock.ExpectGet(a.obs, a.latency);
        if (a.kind == Act::kGetError) lock.ExpectGetError(Status(a.code, CodeName(a.code)));
      }
      Observer observer(Config(), lock, clock);
      const MonoTime t0 = clock.MonotonicNow();
      for (const Act& a : c.acts) {
        switch (a.kind) {
          case Act::kGet:
          case Act::kGetError:
            observer.Step();
            break;
          case Act::kWatch:
            observer.Observe(a.obs);
            break;
          case Act::kWait:
            clock.Advance(std::chrono::milliseconds(a.ms));
            break;
          case Act::kYesUntil: {
            const Snapshot s = observer.Take();
            CAPTURE(std::chrono::duration_cast<std::chrono::milliseconds>(clock.MonotonicNow() - t0)
                        .count());
            REQUIRE(s.is_leader);
            CHECK(s.phase == Phase::kLeader);
            CHECK(
                std::chrono::duration_cast<std::chrono::milliseconds>(s.valid_until - t0).count() ==
                a.ms);
            CHECK(observer.gauges().leader_until_ns.load() != 0);
            break;
          }
          case Act::kNo: {
            const Snapshot s = observer.Take();
            CHECK_FALSE(s.is_leader);
            CHECK_FALSE(s.LeaderAt(clock.MonotonicNow()));
            break;
          }
        }
      }
      // Reads only: the strict fake fails any Create or Update, and every Get was expected.
      CHECK(lock.done());
      CHECK(lock.calls().find("Update") == std::string::npos);
      CHECK(lock.calls().find("Create") == std::string::npos);
    }
  }
}

TEST_CASE("Observer: a veto that arrives while a Get is in flight outlasts that Get") {
  FakeClock clock;
  FakeLock lock(clock);
  std::optional<Observer> observer;
  lock.ExpectGet(Rec(kMe, 0)).ExpectGet(Rec(kMe, 1000));
  // Sent after the first veto, answered (with the old record) after a second one.
  lock.ExpectGet(Rec(kMe, 2000), 300ms, [&] { observer->Observe(Rec(kOther, 2200)); });
  observer.emplace(Config(), lock, clock);
  observer->Step();
  clock.Advance(1s);
  observer->Step();
  REQUIRE(observer->Take().is_leader);
  observer->Observe(Rec(kOther, 1200));
  clock.Advance(100ms);
  observer->Step();
  CHECK_FALSE(observer->Take().is_leader);
  CHECK(lock.done());
}

TEST_CASE("Observer: what it reports besides the yes") {
  FakeClock clock;
  FakeLock lock(clock);
  lock.ExpectGet(Rec(kMe, 0)).ExpectGet(Rec(kMe, 1000));
  Observer observer(Config(), lock, clock);
  observer.Step();
  clock.Advance(1s);
  const MonoTime next = observer.Step();
  CHECK(next == clock.MonotonicNow() + 1s);  // a Get every retry-period
  Snapshot s = observer.Take();
  CHECK(s.identity == "web-0");
  CHECK(s.observed);
  CHECK(s.record.holder_identity == kMe);
  CHECK(s.record.leader_transitions == 1);  // the term: leaseTransitions as the holder wrote it
  CHECK(s.term_reliable());
  CHECK(observer.gauges().holder_is_me.load());
  CHECK(observer.gauges().held.load());
  CHECK(observer.gauges().holder_hash.load() == HolderHash(kMe));
  CHECK(observer.gauges().promise_overtaken_total.load() == 0);  // no promise made, ever

  SUBCASE("a watch event shows a new holder at once") {
    observer.Observe(Rec(kOther, 1500));
    s = observer.Take();
    CHECK(s.record.holder_identity == kOther);
    CHECK_FALSE(observer.gauges().holder_is_me.load());
  }
  SUBCASE("stopped: no") {
    observer.Stop();
    s = observer.Take();
    CHECK_FALSE(s.is_leader);
    CHECK(s.phase == Phase::kDone);
  }
  SUBCASE("POST /release writes nothing") {
    observer.AcknowledgeRelease();
    CHECK(observer.Take().is_leader);
  }
}

TEST_CASE("Observer: a holder change that keeps the count makes the term unreliable") {
  FakeClock clock;
  FakeLock lock(clock);
  LockObservation b = Rec(kOther, 1000);
  b.record.leader_transitions = 1;  // as kMe's: the count was not raised
  lock.ExpectGet(Rec(kMe, 0)).ExpectGet(b);
  Observer observer(Config(), lock, clock);
  observer.Step();
  CHECK(observer.Take().term_reliable());
  observer.Step();
  const Snapshot s = observer.Take();
  CHECK_FALSE(s.term_reliable());
  CHECK(s.term_unreliable_reason.find("without raising the transition count") != std::string::npos);
}

TEST_CASE("HolderMatch: which holders are this pod") {
  struct Case {
    MatchRule rule;
    const char* name;
    const char* holder;
    bool want;
  };
  const std::vector<Case> cases = {
      {MatchRule::kPod, "web-0", "web-0", true},
      {MatchRule::kPod, "web-0", "web-0_5f1c-33", true},
      {MatchRule::kPod, "web-0", "web-0_", true},  // starts with "web-0_", as the rule says
      {MatchRule::kPod, "web-0", "web-01_5f1c", false},
      {MatchRule::kPod, "web-0", "web-0x", false},
      {MatchRule::kPod, "web-0", "web", false},
      {MatchRule::kPod, "web-0", "", false},
      {MatchRule::kPod, "web-0", "xweb-0_1", false},
      {MatchRule::kExact, "id_7", "id_7", true},
      {MatchRule::kExact, "id_7", "id_7_x", false},
      {MatchRule::kExact, "id_7", "id", false},
      {MatchRule::kExact, "", "", false},
  };
  for (const Case& c : cases) {
    const std::string name = c.name, holder = c.holder;
    CAPTURE(name);
    CAPTURE(holder);
    CHECK(HolderMatch{c.rule, c.name}.Matches(c.holder) == c.want);
  }
}

TEST_CASE("CheckHolderMatch: a rule that could match two pods is refused") {
  CHECK(CheckHolderMatch({MatchRule::kPod, "web-0"}).ok());
  CHECK(CheckHolderMatch({MatchRule::kExact, "a_b"}).ok());
  CHECK(CheckHolderMatch({MatchRule::kPod, ""}).code() == Code::kBadConfig);
  CHECK(CheckHolderMatch({MatchRule::kExact, ""}).code() == Code::kBadConfig);
  // "a" and "a_b" would both match the holder "a_b_c".
  CHECK(CheckHolderMatch({MatchRule::kPod, "a_b"}).code() == Code::kBadConfig);
}

}  // namespace
}  // namespace leasehold::election
