// The elector, as client-go's leaderelection_test.go does it: named cases, a fake clock, and a
// strict fake lock that asserts the exact sequence of API calls.
#include "election/elector.h"

#include <doctest/doctest.h>

#include <chrono>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include "fakes/fake_clock.h"
#include "fakes/fake_lock.h"
#include "fakes/golden.h"
#include "fakes/log_capture.h"

namespace leasehold::election {
namespace {

using namespace std::chrono_literals;
using testing::FakeLock;
using testing::Op;

constexpr const char* kMe = "me_0001";
constexpr const char* kThem = "them_0002";

LockObservation Obs(const std::string& holder, int64_t transitions, const std::string& version,
                    int lease_seconds = 15) {
  LockObservation o;
  o.record.holder_identity = holder;
  o.record.lease_duration_seconds = lease_seconds;
  o.record.acquire_time = SysTime(std::chrono::seconds(1767000000));
  o.record.renew_time = SysTime(std::chrono::seconds(1767000000));
  o.record.leader_transitions = transitions;
  o.raw = holder + "/" + std::to_string(transitions) + "/" + version;
  return o;
}

Status Err(Code c) { return Status(c, CodeName(c)); }

// An unreadable record (LockObservation::opaque) at object version `version`.
LockObservation Opaque(const std::string& version, int lease_seconds, int64_t transitions) {
  LockObservation o;
  o.opaque = true;
  o.unreadable = "field leaseDurationSeconds is not a number of seconds";
  o.record.lease_duration_seconds = lease_seconds;
  o.record.leader_transitions = transitions;
  o.record.transitions_recorded = false;
  o.raw = "opaque:" + version;
  return o;
}

// `o` with a coordinated election's strategy and preferred holder.
LockObservation Coordinated(LockObservation o, const std::string& preferred,
                            const std::string& strategy = "example.com/test") {
  o.record.strategy = strategy;
  o.record.preferred_holder = preferred;
  o.raw += "/" + strategy + "/" + preferred;
  return o;
}

ElectionConfig WithRule(ElectionConfig config, PreferredHolderRule rule) {
  config.set_preferred_holder_rule(rule);
  return config;
}

// The default timings with renew-interval = retry-period, client-go's rhythm, which most cases
// below pin; the renew-interval cases use kAutoInterval.
constexpr Timings kClientGoRhythm{15s, 10s, 2s, 2s};
// The default timings as the binary runs them: renew-interval auto, 5.5s.
constexpr Timings kAutoInterval{15s, 10s, 2s};

struct Fixture {
  explicit Fixture(ReleaseMode mode = ReleaseMode::kSafe, Timings t = kClientGoRhythm,
                   double rand = 0.5, PreferredHolderRule rule = PreferredHolderRule::kKeep)
      : lock(clock),
        config(WithRule(*ElectionConfig::Create(kMe, t, mode, 30s), rule)),
        elector(config, lock, clock, [rand] { return rand; }) {}

  // Runs one Step and checks when it asks to be called again, relative to now-after-the-step.
  MonoTime Step() { return elector.Step(); }
  Duration StepAndWait() {
    MonoTime next = elector.Step();
    return next - clock.MonotonicNow();
  }
  // Acquires a free lock (404 → Create) so a case can start as leader.
  void BecomeLeader() {
    lock.ExpectGetError(Err(Code::kNotFound)).ExpectWrite(Op::kCreate, Status::Ok(), nullptr);
    elector.Step();
    REQUIRE(elector.Take().is_leader);
  }

  // As leader: a fast-path renew called with `deadline` and answered OK after `latency`; the
  // step must then ask for `next`, and the yes last renew-deadline from the send.
  void RenewOk(MonoTime deadline, Duration latency, Duration next) {
    const MonoTime sent = clock.MonotonicNow();
    lock.ExpectWrite(
        Op::kUpdate, Status::Ok(),
        [deadline](const LeaderElectionRecord&, MonoTime d) { CHECK(d == deadline); }, latency);
    CHECK(StepAndWait() == next);
    Snapshot s = elector.Take();
    CHECK(s.is_leader);
    CHECK(s.valid_until == sent + config.renew_deadline());
  }

  // As leader, a fast-path renew that is applied but answered 30 s late, with `rival`'s record
  // arriving by watch while it is in flight (a pause; a takeover meanwhile).
  void LateRenewAfterRivalEvent(const LockObservation& rival) {
    BecomeLeader();
    lock.ExpectWrite(
        Op::kUpdate, Status::Ok(),
        [this, rival](const LeaderElectionRecord&, MonoTime) { elector.Observe(rival); }, 30s);
    elector.Step();
  }

  FakeClock clock;
  FakeLock lock;
  ElectionConfig config;
  Elector elector;
};

// A fixture with --preferred-holder yield.
struct Yielding : Fixture {
  Yielding() : Fixture(ReleaseMode::kSafe, kClientGoRhythm, 0.5, PreferredHolderRule::kYield) {}
};

// A write's check that it carries `strategy` and `preferred` and names `holder` with `term`.
std::function<void(const LeaderElectionRecord&, MonoTime)> Writes(const std::string& holder,
                                                                  int64_t term,
                                                                  const std::string& strategy,
                                                                  const std::string& preferred) {
  return [=](const LeaderElectionRecord& r, MonoTime) {
    CHECK(r.holder_identity == holder);
    CHECK(r.leader_transitions == term);
    CHECK(r.strategy == strategy);
    CHECK(r.preferred_holder == preferred);
  };
}

struct Case {
  const char* name;
  std::function<void()> run;
};

const std::vector<Case>& Cases() {
  static const std::vector<Case> cases = {
      {"acquire a free lock: 404 then create with transitions 0",
       [] {
         Fixture f;
         const SysTime wall = f.clock.SystemNow();
         const MonoTime start = f.clock.MonotonicNow();
         f.lock.ExpectGetError(Err(Code::kNotFound))
             .ExpectWrite(Op::kCreate, Status::Ok(), [&](const LeaderElectionRecord& r, MonoTime) {
               CHECK(r.holder_identity == kMe);
               CHECK(r.leader_transitions == 0);
               CHECK(r.lease_duration_seconds == 15);
               CHECK(r.acquire_time == wall);
               CHECK(r.renew_time == wall);
             });
         CHECK(f.StepAndWait() == 2s);
         Snapshot s = f.elector.Take();
         CHECK(s.is_leader);
         CHECK(s.phase == Phase::kLeader);
         CHECK(s.valid_until == start + 10s);
         CHECK(s.record.leader_transitions == 0);
         CHECK(s.acquired_total == 1);
         CHECK(f.lock.calls() == "Get Create");
       }},
      {"an empty holder (released lease) is taken at once with term + 1",
       [] {
         Fixture f;
         f.lock.ExpectGet(Obs("", 4, "a"))
             .ExpectWrite(Op::kUpdate, Status::Ok(), [](const LeaderElectionRecord& r, MonoTime) {
               CHECK(r.holder_identity == kMe);
               CHECK(r.leader_transitions == 5);
             });
         f.Step();
         CHECK(f.elector.Take().is_leader);
         CHECK(f.elector.Take().record.leader_transitions == 5);
       }},
      {"wait on a held lock, then take it once it has not changed for lease-duration",
       [] {
         Fixture f;
         f.lock.ExpectGet(Obs(kThem, 3, "a"));
         // Jitter: retry-period × (1 + 0.5 × 1.2) = 3.2s.
         CHECK(f.StepAndWait() == 3200ms);
         Snapshot s = f.elector.Take();
         CHECK_FALSE(s.is_leader);
         CHECK(s.record.holder_identity == kThem);
         CHECK(s.observed);
         // Still within 15s of the observation: no write.
         f.clock.Advance(11800ms);
         f.lock.ExpectGet(Obs(kThem, 3, "a"));
         f.Step();
         CHECK_FALSE(f.elector.Take().is_leader);
         // 15s after the observation the same raw record counts as expired.
         f.clock.Advance(3200ms);
         const SysTime wall = f.clock.SystemNow();
         f.lock.ExpectGet(Obs(kThem, 3, "a"))
             .ExpectWrite(Op::kUpdate, Status::Ok(), [&](const LeaderElectionRecord& r, MonoTime) {
               CHECK(r.holder_identity == kMe);
               CHECK(r.leader_transitions == 4);
               CHECK(r.acquire_time == wall);
             });
         f.Step();
         CHECK(f.elector.Take().is_leader);
         CHECK(f.lock.calls() == "Get Get Get Update");
       }},
      {"a holder that keeps renewing is never taken over",
       [] {
         Fixture f;
         for (int i = 0; i < 10; ++i) {
           f.lock.ExpectGet(Obs(kThem, 3, "v" + std::to_string(i)));
           f.Step();
           CHECK_FALSE(f.elector.Take().is_leader);
           f.clock.Advance(10s);
         }
       }},
      {"expiry uses the record's leaseDurationSeconds, not ours",
       [] {
         Fixture f;
         f.lock.ExpectGet(Obs(kThem, 1, "a", /*lease_seconds=*/30));
         f.Step();
         f.clock.Advance(20s);
         f.lock.ExpectGet(Obs(kThem, 1, "a", 30));
         f.Step();
         CHECK_FALSE(f.elector.Take().is_leader);
         f.clock.Advance(10s);
         f.lock.ExpectGet(Obs(kThem, 1, "a", 30)).ExpectWrite(Op::kUpdate, Status::Ok(), nullptr);
         f.Step();
         CHECK(f.elector.Take().is_leader);
       }},
      {"renew fast path: one PUT, no GET, keeps acquireTime and term",
       [] {
         Fixture f;
         f.BecomeLeader();
         const auto acquired = f.elector.Take().record.acquire_time;
         f.clock.Advance(2s);
         const MonoTime sent = f.clock.MonotonicNow();
         f.lock.ExpectWrite(
             Op::kUpdate, Status::Ok(),
             [&](const LeaderElectionRecord& r, MonoTime deadline) {
               CHECK(r.holder_identity == kMe);
               CHECK(r.acquire_time == acquired);
               CHECK(r.renew_time == f.clock.SystemNow());
               CHECK(r.leader_transitions == 0);
               // A renew may not outlive the claim it extends: sent-at-acquire + 10s.
               CHECK(deadline == sent - 2s + 10s);
             },
             /*latency=*/100ms);
         CHECK(f.StepAndWait() == 2s);
         Snapshot s = f.elector.Take();
         CHECK(s.is_leader);
         CHECK(s.valid_until == sent + 10s);
         CHECK(s.slowpath_total == 0);
         CHECK(f.lock.calls() == "Get Create Update");
       }},
      {"fast path 409 falls back to GET then PUT (slow path)",
       [] {
         Fixture f;
         f.BecomeLeader();
         f.clock.Advance(2s);
         f.lock.ExpectWrite(Op::kUpdate, Err(Code::kConflict), nullptr)
             .ExpectGet(Obs(kMe, 0, "b"))
             .ExpectWrite(Op::kUpdate, Status::Ok(), [](const LeaderElectionRecord& r, MonoTime) {
               CHECK(r.holder_identity == kMe);
               CHECK(r.leader_transitions == 0);
             });
         f.Step();
         Snapshot s = f.elector.Take();
         CHECK(s.is_leader);
         CHECK(s.slowpath_total == 1);
         CHECK(f.lock.calls() == "Get Create Update Get Update");
       }},
      {"fast path 409 and the GET shows a new holder: step down at once",
       [] {
         Fixture f;
         f.BecomeLeader();
         f.clock.Advance(2s);
         f.lock.ExpectWrite(Op::kUpdate, Err(Code::kConflict), nullptr)
             .ExpectGet(Obs(kThem, 1, "c"));
         f.Step();
         Snapshot s = f.elector.Take();
         CHECK_FALSE(s.is_leader);
         CHECK(s.phase == Phase::kCandidate);
         CHECK(s.record.holder_identity == kThem);
       }},
      {"a 409 on the takeover PUT ends the attempt without a retry",
       [] {
         Fixture f;
         f.lock.ExpectGet(Obs("", 2, "a")).ExpectWrite(Op::kUpdate, Err(Code::kConflict), nullptr);
         CHECK(f.StepAndWait() == 3200ms);  // a lost race is not an error: no backoff
         CHECK_FALSE(f.elector.Take().is_leader);
         CHECK(f.elector.Take().last_error.code() == Code::kConflict);
       }},
      {"step down at renew-deadline when every renew fails",
       [] {
         Fixture f;
         const MonoTime sent = f.clock.MonotonicNow();
         f.BecomeLeader();
         // Fast path fails, slow path GET fails: every 2s until the claim (sent + 10s) ends.
         for (int i = 0; i < 4; ++i) {
           f.clock.Advance(2s);
           f.lock.ExpectWrite(Op::kUpdate, Err(Code::kUnavailable), nullptr)
               .ExpectGetError(Err(Code::kUnavailable));
           MonoTime next = f.Step();
           CHECK(f.elector.Take().is_leader);
           CHECK(next <= sent + 10s);
         }
         f.clock.Advance(2s);  // now == sent + 10s
         CHECK_FALSE(f.elector.Take().is_leader);
         // The next step notices and steps down before it tries again as a candidate.
         f.lock.ExpectWrite(Op::kUpdate, Err(Code::kUnavailable), nullptr)
             .ExpectGetError(Err(Code::kUnavailable));
         f.Step();
         Snapshot s = f.elector.Take();
         CHECK_FALSE(s.is_leader);
         CHECK(s.phase == Phase::kCandidate);
         CHECK(s.last_error.code() == Code::kUnavailable);
       }},
      {"hung renew: the answer turns to no at renew-deadline while the call is still out",
       [] {
         Fixture f;
         const MonoTime sent = f.clock.MonotonicNow();
         f.BecomeLeader();
         f.clock.Advance(2s);
         // The PUT succeeds, but only after 9s in flight: its claim runs from when it was sent.
         const MonoTime renew_sent = f.clock.MonotonicNow();
         f.lock.ExpectWrite(Op::kUpdate, Status::Ok(), nullptr, /*latency=*/9s);
         f.Step();
         CHECK(f.clock.MonotonicNow() == sent + 11s);
         Snapshot s = f.elector.Take();
         CHECK(s.is_leader);
         CHECK(s.valid_until == renew_sent + 10s);
       }},
      {"renew-interval: renews at the interval while they succeed, each claim from its send",
       [] {
         Fixture f(ReleaseMode::kSafe, kAutoInterval);
         CHECK(f.config.renew_interval() == 5500ms);
         f.lock.ExpectGetError(Err(Code::kNotFound))
             .ExpectWrite(Op::kCreate, Status::Ok(), nullptr);
         CHECK(f.StepAndWait() == 5500ms);
         MonoTime prev = f.clock.MonotonicNow();
         for (int i = 0; i < 3; ++i) {
           f.clock.Advance(5500ms);
           const MonoTime sent = f.clock.MonotonicNow();
           // Cut at the claim's end less retry-period and kRenewAttemptRoom: a retry fits.
           f.RenewOk(prev + 7s, 20ms, 5500ms);
           prev = sent;
         }
         CHECK(f.lock.calls() == "Get Create Update Update Update");
       }},
      {"renew-interval: after a failed renew, a retry every retry-period until one succeeds",
       [] {
         Fixture f(ReleaseMode::kSafe, kAutoInterval);
         const MonoTime start = f.clock.MonotonicNow();
         f.BecomeLeader();  // claim until start + 10s
         const auto deadline_is = [](MonoTime want) {
           return [want](const LeaderElectionRecord&, MonoTime d) { CHECK(d == want); };
         };
         struct Attempt {
           Duration wait;      // before it, since the last one ended
           MonoTime deadline;  // the attempt's, passed to each call
           bool ok;
           Duration next;  // the pause it asks for
         };
         const Attempt attempts[] = {
             // At the interval; fast-path PUT and the slow path's Get fail: cut at start + 7s.
             {5500ms, start + 7s, false, 2s},
             // start + 7.5s: no room for a cut before a retry, so the rest of the claim.
             {2s, start + 10s, false, 2s},
             // start + 9.5s: the last chance succeeds; the interval again.
             {2s, start + 10s, true, 5500ms},
         };
         for (const Attempt& a : attempts) {
           f.clock.Advance(a.wait);
           if (a.ok) {
             f.lock.ExpectWrite(Op::kUpdate, Status::Ok(), deadline_is(a.deadline));
           } else {
             f.lock.ExpectWrite(Op::kUpdate, Err(Code::kUnavailable), deadline_is(a.deadline))
                 .ExpectGetError(Err(Code::kUnavailable));
           }
           CHECK(f.StepAndWait() == a.next);
           CHECK(f.elector.Take().is_leader);
         }
         CHECK(f.elector.Take().valid_until == start + 9500ms + 10s);
         CHECK(f.lock.calls() == "Get Create Update Get Update Get Update");
       }},
      {"renew-interval: when no retry succeeds, the yes ends with the claim",
       [] {
         Fixture f(ReleaseMode::kSafe, kAutoInterval);
         const MonoTime start = f.clock.MonotonicNow();
         f.BecomeLeader();
         f.clock.Advance(5500ms);
         for (const Duration next : std::vector<Duration>{2s, 2s, 500ms}) {
           f.lock.ExpectWrite(Op::kUpdate, Err(Code::kUnavailable), nullptr)
               .ExpectGetError(Err(Code::kUnavailable));
           CHECK(f.StepAndWait() == next);
           f.clock.Advance(next);
         }
         CHECK(f.clock.MonotonicNow() == start + 10s);
         CHECK_FALSE(f.elector.Take().is_leader);
       }},
      {"renew-interval: a hung renew is cut so that one retry fits before the claim ends",
       [] {
         Fixture f(ReleaseMode::kSafe, kAutoInterval);
         const MonoTime start = f.clock.MonotonicNow();
         f.BecomeLeader();
         f.clock.Advance(5500ms);
         // The PUT hangs until just before the cut (start + 7s); the slow path's Get meets it.
         f.lock
             .ExpectWrite(
                 Op::kUpdate, Err(Code::kDeadlineExceeded),
                 [start](const LeaderElectionRecord&, MonoTime d) { CHECK(d == start + 7s); },
                 1400ms)
             .ExpectGetError(Err(Code::kDeadlineExceeded), 100ms);
         CHECK(f.StepAndWait() == 2s);
         CHECK(f.clock.MonotonicNow() == start + 7s);
         CHECK(f.elector.Take().is_leader);
         f.clock.Advance(2s);
         f.RenewOk(start + 10s, 200ms, 5500ms);  // the retry, with the rest of the claim
       }},
      {"renew-interval equal to retry-period: a renew may run to the claim's end, as before",
       [] {
         Fixture f;
         const MonoTime start = f.clock.MonotonicNow();
         f.BecomeLeader();
         f.clock.Advance(2s);
         f.RenewOk(start + 10s, 0s, 2s);
       }},
      {"a write that succeeds only after renew-deadline gives no yes",
       [] {
         Fixture f;
         f.clock.Advance(1s);
         f.lock.ExpectGetError(Err(Code::kNotFound))
             .ExpectWrite(Op::kCreate, Status::Ok(), nullptr, /*latency=*/10s);
         f.Step();
         CHECK_FALSE(f.elector.Take().is_leader);
       }},
      {"stale answer after a pause: a SIGSTOPped leader says no when it resumes",
       [] {
         Fixture f;
         f.BecomeLeader();
         f.clock.Advance(16s);  // paused past lease-duration, no Step ran
         Snapshot s = f.elector.Take();
         CHECK_FALSE(s.is_leader);
         CHECK(s.phase == Phase::kLeader);  // the loop has not run yet, the answer is still no
         // On resume it steps down and re-reads: a rival took over meanwhile.
         f.lock.ExpectGet(Obs(kThem, 1, "x"));
         f.Step();
         CHECK_FALSE(f.elector.Take().is_leader);
         CHECK(f.elector.Take().phase == Phase::kCandidate);
       }},
      {"API errors back off, capped at lease-duration; Retry-After is honoured",
       [] {
         Fixture f;
         const Duration expect[] = {3200ms, 6400ms, 12800ms, 15s, 15s};
         for (Duration d : expect) {
           f.lock.ExpectGetError(Err(Code::kUnavailable));
           CHECK(f.StepAndWait() == d);
         }
         f.lock.ExpectGetError(Status(Code::kTooManyRequests, "slow down").set_retry_after(20s));
         CHECK(f.StepAndWait() == 20s);
         f.lock.ExpectGet(Obs(kThem, 1, "a"));
         CHECK(f.StepAndWait() == 3200ms);
       }},
      {"jitter spans retry-period to 2.2 x retry-period",
       [] {
         for (double r : {0.0, 0.999}) {
           Fixture f(ReleaseMode::kSafe, kClientGoRhythm, r);
           f.lock.ExpectGet(Obs(kThem, 1, "a"));
           const Duration d = f.StepAndWait();
           CHECK(d >= 2s);
           CHECK(d < 4400ms);
           CHECK(d == std::chrono::duration_cast<Duration>(2s * (1 + r * 1.2)));
         }
       }},
      {"immediate release on stop: GET, still holder, PUT released record",
       [] {
         Fixture f(ReleaseMode::kImmediate);
         f.BecomeLeader();
         f.elector.Stop();
         CHECK_FALSE(f.elector.Take().is_leader);
         f.lock.ExpectGet(Obs(kMe, 7, "z"))
             .ExpectWrite(Op::kUpdate, Status::Ok(), [](const LeaderElectionRecord& r, MonoTime) {
               CHECK(r.holder_identity.empty());
               CHECK(r.lease_duration_seconds == 1);
               CHECK(r.leader_transitions == 7);
             });
         f.Step();
         CHECK(f.elector.Take().phase == Phase::kDone);
       }},
      {"release only while still holder: another holder is left alone",
       [] {
         Fixture f(ReleaseMode::kImmediate);
         f.BecomeLeader();
         f.elector.Stop();
         f.lock.ExpectGet(Obs(kThem, 1, "z"));
         f.Step();
         CHECK(f.elector.Take().phase == Phase::kDone);
         CHECK(f.lock.calls() == "Get Create Get");
       }},
      {"release retries on conflict",
       [] {
         Fixture f(ReleaseMode::kImmediate);
         f.BecomeLeader();
         f.elector.Stop();
         f.lock.ExpectGet(Obs(kMe, 0, "a"))
             .ExpectWrite(Op::kUpdate, Err(Code::kConflict), nullptr)
             .ExpectGet(Obs(kMe, 0, "b"))
             .ExpectWrite(Op::kUpdate, Status::Ok(), nullptr);
         f.Step();
         CHECK(f.elector.Take().phase == Phase::kDone);
       }},
      {"a candidate that stops makes no API call",
       [] {
         Fixture f(ReleaseMode::kImmediate);
         f.lock.ExpectGet(Obs(kThem, 1, "a"));
         f.Step();
         f.elector.Stop();
         f.Step();
         CHECK(f.elector.Take().phase == Phase::kDone);
       }},
      {"off mode never releases",
       [] {
         Fixture f(ReleaseMode::kOff);
         f.BecomeLeader();
         f.elector.Stop();
         f.Step();
         CHECK(f.elector.Take().phase == Phase::kDone);
         CHECK(f.lock.calls() == "Get Create");
       }},
      {"safe mode waits for the last promise it gave before releasing",
       [] {
         Fixture f(ReleaseMode::kSafe);
         f.BecomeLeader();  // its Take() handed out a yes valid until start + 10s
         const MonoTime promised = f.elector.Take().valid_until;
         f.clock.Advance(3s);
         f.elector.Stop();
         CHECK_FALSE(f.elector.Take().is_leader);
         CHECK(f.Step() == promised);  // no API call until then
         CHECK(f.lock.calls() == "Get Create");
         f.clock.Advance(promised - f.clock.MonotonicNow());
         f.lock.ExpectGet(Obs(kMe, 0, "a")).ExpectWrite(Op::kUpdate, Status::Ok(), nullptr);
         f.Step();
         CHECK(f.elector.Take().phase == Phase::kDone);
       }},
      {"safe mode releases at once when the main container acknowledges",
       [] {
         Fixture f(ReleaseMode::kSafe);
         f.BecomeLeader();
         f.elector.Stop();
         f.elector.AcknowledgeRelease();
         f.lock.ExpectGet(Obs(kMe, 0, "a")).ExpectWrite(Op::kUpdate, Status::Ok(), nullptr);
         f.Step();
         CHECK(f.elector.Take().phase == Phase::kDone);
       }},
      {"safe mode with no yes ever given releases at once",
       [] {
         Fixture f(ReleaseMode::kSafe);
         f.lock.ExpectGetError(Err(Code::kNotFound))
             .ExpectWrite(Op::kCreate, Status::Ok(), nullptr);
         f.Step();  // leader, but nobody asked
         f.elector.Stop();
         f.lock.ExpectGet(Obs(kMe, 0, "a")).ExpectWrite(Op::kUpdate, Status::Ok(), nullptr);
         f.Step();
         CHECK(f.elector.Take().phase == Phase::kDone);
       }},
      {"safe mode: a Peek (probe, metrics) is no promise",
       [] {
         Fixture f(ReleaseMode::kSafe);
         f.lock.ExpectGetError(Err(Code::kNotFound))
             .ExpectWrite(Op::kCreate, Status::Ok(), nullptr);
         f.Step();
         CHECK(f.elector.Peek().is_leader);
         f.elector.Stop();
         f.lock.ExpectGet(Obs(kMe, 0, "a")).ExpectWrite(Op::kUpdate, Status::Ok(), nullptr);
         f.Step();
         CHECK(f.elector.Peek().phase == Phase::kDone);
       }},
      {"POST /release before SIGTERM: release, hold off, then contend again",
       [] {
         Fixture f(ReleaseMode::kSafe);
         f.BecomeLeader();
         f.elector.AcknowledgeRelease();
         CHECK_FALSE(f.elector.Take().is_leader);
         f.lock.ExpectGet(Obs(kMe, 0, "a")).ExpectWrite(Op::kUpdate, Status::Ok(), nullptr);
         CHECK(f.StepAndWait() == 30s);
         CHECK(f.elector.Take().phase == Phase::kHeldOff);
         f.clock.Advance(10s);
         CHECK(f.StepAndWait() == 20s);  // still held off, no API call
         f.clock.Advance(20s);
         f.Step();  // hold-off over
         CHECK(f.elector.Take().phase == Phase::kCandidate);
         f.lock.ExpectGet(Obs("", 0, "r")).ExpectWrite(Op::kUpdate, Status::Ok(), nullptr);
         f.Step();
         CHECK(f.elector.Take().is_leader);
         CHECK(f.elector.Take().record.leader_transitions == 1);
       }},
      {"SIGTERM during the hold-off exits without another call",
       [] {
         Fixture f(ReleaseMode::kSafe);
         f.BecomeLeader();
         f.elector.AcknowledgeRelease();
         f.lock.ExpectGet(Obs(kMe, 0, "a")).ExpectWrite(Op::kUpdate, Status::Ok(), nullptr);
         f.Step();
         f.elector.Stop();
         f.Step();
         CHECK(f.elector.Take().phase == Phase::kDone);
       }},
      {"a restart with the same identity renews and keeps the term",
       [] {
         Fixture f;
         f.lock.ExpectGet(Obs(kMe, 6, "a"))
             .ExpectWrite(Op::kUpdate, Status::Ok(), [](const LeaderElectionRecord& r, MonoTime) {
               CHECK(r.leader_transitions == 6);
               CHECK(r.acquire_time == SysTime(std::chrono::seconds(1767000000)));
             });
         f.Step();
         CHECK(f.elector.Take().is_leader);
       }},
      {"the unknown holder of a split multilock is waited out like any other",
       [] {
         Fixture f;
         f.lock.ExpectGet(Obs(kUnknownLeader, 2, "a"));
         f.Step();
         CHECK_FALSE(f.elector.Take().is_leader);
       }},
      {"with a watch, a follower sleeps until the exact expiry instead of polling",
       [] {
         Fixture f;
         f.elector.SetWatchActive(true);
         f.lock.ExpectGet(Obs(kThem, 1, "a"));
         CHECK(f.StepAndWait() == 15s);
         // An event with a changed record (a renew) restarts the timer, as a Get would.
         f.clock.Advance(10s);
         f.elector.Observe(Obs(kThem, 1, "b"));
         f.clock.Advance(5s);
         f.lock.ExpectGet(Obs(kThem, 1, "b"));
         CHECK(f.StepAndWait() == 10s);
         CHECK_FALSE(f.elector.Take().is_leader);
         // An unchanged record does not.
         f.clock.Advance(4s);
         f.elector.Observe(Obs(kThem, 1, "b"));
         f.clock.Advance(6s);
         f.lock.ExpectGet(Obs(kThem, 1, "b")).ExpectWrite(Op::kUpdate, Status::Ok(), nullptr);
         f.Step();
         CHECK(f.elector.Take().is_leader);
       }},
      {"a watch that breaks resumes polling with jitter",
       [] {
         Fixture f;
         f.elector.SetWatchActive(true);
         f.elector.SetWatchActive(false);
         f.lock.ExpectGet(Obs(kThem, 1, "a"));
         CHECK(f.StepAndWait() == 3200ms);
       }},
      // Each case below pins one guard of the invariant on its own: with that guard removed it
      // fails, whatever the other guards do (scripts/mutant_patches.py: the name in brackets).
      {"[observed-time-at-start] a slow GET's record counts as observed when the read returns",
       [] {
         // The rival may have written during the 9s the GET was out (its write was sent before
         // our read returned). Counting from when the attempt started would end its lease 9s
         // early, while its "yes" (sent + renew-deadline) still holds: two leaders.
         Fixture f;
         f.lock.ExpectGet(Obs(kThem, 3, "a"), /*latency=*/9s);
         f.Step();
         const MonoTime returned = f.clock.MonotonicNow();
         CHECK_FALSE(f.elector.Take().is_leader);
         // 15s after the attempt started, 6s after the read returned: the same record is valid.
         f.clock.Advance(6500ms);
         f.lock.ExpectGet(Obs(kThem, 3, "a"));
         f.Step();
         CHECK_FALSE(f.elector.Take().is_leader);
         CHECK(f.lock.calls() == "Get Get");
         // Just before 15s after the read returned: still valid.
         f.clock.Advance(returned + 15s - 1ms - f.clock.MonotonicNow());
         f.lock.ExpectGet(Obs(kThem, 3, "a"));
         f.Step();
         CHECK_FALSE(f.elector.Take().is_leader);
         // 15s after the read returned: expired, taken over.
         f.clock.Advance(1ms);
         f.lock.ExpectGet(Obs(kThem, 3, "a")).ExpectWrite(Op::kUpdate, Status::Ok(), nullptr);
         f.Step();
         CHECK(f.elector.Take().is_leader);
         CHECK(f.lock.calls() == "Get Get Get Get Update");
       }},
      {"[claim-from-answer-slow] a slow-path renew's claim runs from when its PUT was sent",
       [] {
         Fixture f;
         f.BecomeLeader();
         f.clock.Advance(2s);
         f.lock.ExpectWrite(Op::kUpdate, Err(Code::kConflict), nullptr)
             .ExpectGet(Obs(kMe, 0, "b"), /*latency=*/1s);
         const MonoTime put_sent = f.clock.MonotonicNow() + 1s;
         f.lock.ExpectWrite(Op::kUpdate, Status::Ok(), nullptr, /*latency=*/3s);
         f.Step();
         Snapshot s = f.elector.Take();
         REQUIRE(s.is_leader);
         CHECK(s.valid_until == put_sent + 10s);
         CHECK(s.slowpath_total == 1);
       }},
      {"[create-conflict-is-success] a create that lost the race (AlreadyExists) gives no yes",
       [] {
         Fixture f;
         f.lock.ExpectGetError(Err(Code::kNotFound))
             .ExpectWrite(Op::kCreate, Err(Code::kAlreadyExists), nullptr);
         CHECK(f.StepAndWait() == 3200ms);  // a lost race is not an error: no backoff
         Snapshot s = f.elector.Take();
         CHECK_FALSE(s.is_leader);
         CHECK(s.phase == Phase::kCandidate);
         CHECK(s.acquired_total == 0);
         CHECK(s.last_error.code() == Code::kAlreadyExists);
       }},
      {"[isleader-ignores-holder] a leader that observes a foreign holder says no at once",
       [] {
         // Through the watch, before any renew has run: the loop has not been stepped, so only
         // the holder check in the answer itself can turn it to no.
         Fixture f;
         f.BecomeLeader();
         f.clock.Advance(500ms);
         REQUIRE(f.elector.Take().is_leader);
         f.elector.Observe(Obs(kThem, 1, "x"));
         Snapshot s = f.elector.Take();
         CHECK_FALSE(s.is_leader);
         CHECK(s.record.holder_identity == kThem);
         CHECK(f.lock.calls() == "Get Create");
       }},
      {"[isleader-ignores-holder] a blanked lease read by the slow path: no yes while re-taking",
       [] {
         // No watch: a foreign writer (client-go's release() of a lease it no longer holds)
         // blanked the lock, and this leader's slow-path GET sees it. Any rival may take a free
         // lock at once, so while the takeover PUT is out the answer must be no.
         Fixture f;
         f.BecomeLeader();
         f.clock.Advance(2s);
         bool asked = false;
         f.lock.ExpectWrite(Op::kUpdate, Err(Code::kUnavailable), nullptr)
             .ExpectGet(Obs("", 3, "blank"))
             .ExpectWrite(Op::kUpdate, Status::Ok(), [&](const LeaderElectionRecord& r, MonoTime) {
               asked = true;
               CHECK(r.leader_transitions == 4);
               CHECK_FALSE(f.elector.Take().is_leader);
             });
         f.Step();
         CHECK(asked);
         Snapshot s = f.elector.Take();
         CHECK(s.is_leader);
         CHECK(s.record.leader_transitions == 4);
       }},
      {"[observe-no-renew] a watching leader re-reads the lock at once on a foreign write",
       [] {
         // The exact calls: the event names another holder, so the next attempt skips the fast
         // path and GETs at once, at the same (fake) instant, not at the next retry-period. Run()
         // needs real time only to wait, and the fake clock never moves here, so without the
         // immediate attempt the loop would sleep on and the step-down below never come.
         Fixture f(ReleaseMode::kOff);
         const MonoTime t0 = f.clock.MonotonicNow();
         f.lock.ExpectGetError(Err(Code::kNotFound))
             .ExpectWrite(Op::kCreate, Status::Ok(), nullptr)
             .ExpectGet(Obs(kThem, 1, "x"));
         std::thread loop([&] { f.elector.Run(); });
         auto wait_until = [&](const std::function<bool()>& pred) {
           const auto end = std::chrono::steady_clock::now() + 10s;
           while (!pred() && std::chrono::steady_clock::now() < end) {
             std::this_thread::sleep_for(1ms);
           }
           return pred();
         };
         const bool led = wait_until([&] { return f.elector.Peek().is_leader; });
         if (led) f.elector.Observe(Obs(kThem, 1, "x"));
         const bool stepped_down =
             led && wait_until([&] { return f.elector.Peek().phase == Phase::kCandidate; });
         f.elector.Stop();
         loop.join();
         REQUIRE(led);
         CHECK(stepped_down);
         CHECK(f.lock.calls() == "Get Create Get");
         Snapshot s = f.elector.Take();
         CHECK(s.record.holder_identity == kThem);
         REQUIRE(s.last_attempt_at.has_value());
         CHECK(*s.last_attempt_at == t0);
       }},
      {"[opaque-is-held] an unreadable record is held: no takeover until it has not changed for "
       "the longer lease duration, then a conditional write that bumps the term",
       [] {
         Fixture f(ReleaseMode::kOff);
         // Readable duration 20s, longer than ours (15s): 20s counts.
         LockObservation opaque = Opaque("rv1", 20, 4);
         f.lock.ExpectGet(opaque);
         f.Step();
         Snapshot s = f.elector.Take();
         CHECK_FALSE(s.is_leader);
         CHECK(s.opaque);
         CHECK(s.record.holder_identity.empty());
         // Any write to the object (a new resourceVersion) restarts the timer.
         f.clock.Advance(19s);
         f.lock.ExpectGet(Opaque("rv2", 20, 4));
         f.Step();
         f.clock.Advance(19s);
         f.lock.ExpectGet(Opaque("rv2", 20, 4));
         f.Step();  // 19s unchanged < 20s: still held
         CHECK_FALSE(f.elector.Take().is_leader);
         f.clock.Advance(1s);
         f.lock.ExpectGet(Opaque("rv2", 20, 4))
             .ExpectWrite(Op::kUpdate, Status::Ok(), [](const LeaderElectionRecord& r, MonoTime) {
               CHECK(r.holder_identity == kMe);
               CHECK(r.leader_transitions == 5);  // past the count it could read
               CHECK(r.acquire_time.has_value());
             });
         f.Step();
         s = f.elector.Take();
         CHECK(s.is_leader);
         CHECK_FALSE(s.opaque);
         CHECK_FALSE(s.term_reliable());  // an unreadable record was seen
         CHECK(f.lock.calls() == "Get Get Get Get Update");
       }},
      {"[opaque-uses-own-duration] an opaque holder with a shorter or no readable duration is "
       "judged by ours",
       [] {
         Fixture f(ReleaseMode::kOff);
         f.lock.ExpectGet(Opaque("rv1", 3, 0));
         f.Step();
         f.clock.Advance(14s);
         f.lock.ExpectGet(Opaque("rv1", 3, 0));
         f.Step();
         CHECK_FALSE(f.elector.Take().is_leader);  // 14s < our 15s, although the record says 3
         f.clock.Advance(1s);
         f.lock.ExpectGet(Opaque("rv1", 3, 0)).ExpectWrite(Op::kUpdate, Status::Ok(), nullptr);
         f.Step();
         CHECK(f.elector.Take().is_leader);
       }},
      {"[opaque-due] a watching candidate schedules its next attempt at the opaque record's "
       "expiry, not at once",
       [] {
         Fixture f(ReleaseMode::kOff);
         f.elector.SetWatchActive(true);
         f.lock.ExpectGet(Opaque("rv1", 0, 0));
         const Duration wait = f.StepAndWait();
         CHECK(wait >= 14s);
       }},
      {"[opaque-stops-leader] a leader whose record turns unreadable by watch says no at once and "
       "re-reads at once",
       [] {
         Fixture f(ReleaseMode::kOff);
         f.BecomeLeader();
         f.elector.Observe(Opaque("rv9", 15, 0));
         CHECK_FALSE(f.elector.Take().is_leader);
         // The re-check: the Get still shows the opaque record, which is held: no write.
         f.lock.ExpectGet(Opaque("rv9", 15, 0));
         f.Step();
         CHECK_FALSE(f.elector.Take().is_leader);
         CHECK(f.lock.calls() == "Get Create Get");
       }},
      {"[term-past-max-seen] a takeover writes a count above any seen, even if the holder reset "
       "it",
       [] {
         Fixture f(ReleaseMode::kOff);
         f.lock.ExpectGet(Obs(kThem, 9, "rv1"));
         f.Step();
         CHECK(f.elector.Take().term_reliable());
         // A foreign writer resets the count; it expires later.
         f.clock.Advance(1s);
         f.lock.ExpectGet(Obs("py_1", 0, "rv2"));
         f.Step();
         Snapshot s = f.elector.Take();
         CHECK_FALSE(s.term_reliable());
         CHECK(s.term_unreliable_reason.find("went back from 9 to 0") != std::string::npos);
         f.clock.Advance(15s);
         f.lock.ExpectGet(Obs("py_1", 0, "rv2"))
             .ExpectWrite(Op::kUpdate, Status::Ok(), [](const LeaderElectionRecord& r, MonoTime) {
               CHECK(r.leader_transitions == 10);
             });
         f.Step();
         CHECK(f.elector.Take().is_leader);
       }},
      {"[term-unbumped-holder-change] a change of holder that keeps the count makes the term "
       "unreliable",
       [] {
         Fixture f(ReleaseMode::kOff);
         f.lock.ExpectGet(Obs(kThem, 3, "rv1"));
         f.Step();
         f.clock.Advance(1s);
         f.lock.ExpectGet(Obs("py_1", 3, "rv2"));
         f.Step();
         CHECK_FALSE(f.elector.Take().term_reliable());
       }},
      {"[term-kept] client-go's holder changes (count + 1) and releases keep the term reliable",
       [] {
         Fixture f(ReleaseMode::kOff);
         f.lock.ExpectGet(Obs(kThem, 3, "rv1"));
         f.Step();
         f.clock.Advance(1s);
         f.lock.ExpectGet(Obs("", 3, "rv2"));
         f.lock.ExpectWrite(Op::kUpdate, Err(Code::kConflict), nullptr);
         f.Step();
         f.clock.Advance(3s);
         f.lock.ExpectGet(Obs("other_3", 4, "rv3"));
         f.Step();
         CHECK(f.elector.Take().term_reliable());
       }},
      {"[term-missing-count] a record without a transition count makes the term unreliable",
       [] {
         Fixture f(ReleaseMode::kOff);
         LockObservation py = Obs("py_1", 0, "rv1");
         py.record.transitions_recorded = false;
         f.lock.ExpectGet(py);
         f.Step();
         const Snapshot s = f.elector.Take();
         CHECK_FALSE(s.term_reliable());
         CHECK(s.term_unreliable_reason.find("without a transition count") != std::string::npos);
       }},
      {"[term-from-watch] a watching follower judges the term from the watch's events too",
       [] {
         Fixture f(ReleaseMode::kOff);
         f.elector.SetWatchActive(true);
         f.lock.ExpectGet(Obs(kThem, 3, "rv1"));
         f.Step();
         f.elector.Observe(Obs(kThem, 3, "rv2"));
         CHECK(f.elector.Take().term_reliable());
         // A Python elector takes over: seen by watch only, no Get.
         LockObservation py = Obs("py_1", 0, "rv3");
         py.record.transitions_recorded = false;
         f.elector.Observe(py);
         CHECK_FALSE(f.elector.Take().term_reliable());
       }},
      {"[term-unbumped-by-watch] a change of holder that keeps the count, seen by watch",
       [] {
         Fixture f(ReleaseMode::kOff);
         f.elector.SetWatchActive(true);
         f.lock.ExpectGet(Obs(kThem, 3, "rv1"));
         f.Step();
         f.elector.Observe(Obs(kThem, 3, "rv2"));
         f.elector.Observe(Obs("py_1", 3, "rv3"));
         CHECK_FALSE(f.elector.Take().term_reliable());
       }},
      {"[renew-never-null-acquire] a holder's renew never writes a null acquireTime, fast path or "
       "slow",
       [] {
         Fixture f(ReleaseMode::kOff);
         LockObservation mine = Obs(kMe, 2, "rv1");
         mine.record.acquire_time.reset();
         // A restarted replica with the same identity finds its record with a null time: the
         // slow path renews it.
         f.lock.ExpectGet(mine).ExpectWrite(Op::kUpdate, Status::Ok(),
                                            [](const LeaderElectionRecord& r, MonoTime) {
                                              CHECK(r.acquire_time.has_value());
                                              CHECK(r.renew_time.has_value());
                                              CHECK(r.leader_transitions == 2);
                                            });
         f.Step();
         REQUIRE(f.elector.Take().is_leader);
         // As leader: the fast path fails, the Get shows our record with its time blanked by
         // someone, and that slow-path write fails too. The next fast path starts from that
         // observed record and must still write a time.
         f.clock.Advance(2s);
         LockObservation blanked = Obs(kMe, 2, "rv2");
         blanked.record.acquire_time.reset();
         f.lock.ExpectWrite(Op::kUpdate, Err(Code::kConflict), nullptr)
             .ExpectGet(blanked)
             .ExpectWrite(Op::kUpdate, Err(Code::kUnavailable), nullptr);
         f.Step();
         REQUIRE(f.elector.Take().phase == Phase::kLeader);
         f.clock.Advance(2s);
         f.lock.ExpectWrite(Op::kUpdate, Status::Ok(), [](const LeaderElectionRecord& r, MonoTime) {
           CHECK(r.acquire_time.has_value());
         });
         f.Step();
         CHECK(f.lock.calls() == "Get Update Update Get Update Update");
       }},
      {"[late-answer-keeps-stale-holder] a renew answered after a foreign watch event never "
       "leads to a fast-path PUT over the rival (model/ finding 1)",
       [] {
         // A paused leader's renew lands at the apiserver, a rival takes the lease over, the
         // rival's record arrives by watch, and only then the renew's answer. The fetched raw
         // then equals the one the watch set, but the holder differs from the one the late answer
         // left in the observed record: it must be observed again, or the next fast path PUTs
         // over the rival's fresh lease with the version the Get cached.
         Fixture f(ReleaseMode::kOff);
         const LockObservation rival = Obs(kThem, 1, "rv6");
         f.LateRenewAfterRivalEvent(rival);
         CHECK_FALSE(f.elector.Take().is_leader);  // the claim counted from the send has run out
         // The next attempt: the fast path still believes the late answer and fails on the
         // version; the Get shows the rival.
         f.lock.ExpectWrite(Op::kUpdate, Err(Code::kConflict), nullptr).ExpectGet(rival);
         f.Step();
         CHECK(f.elector.Take().record.holder_identity == kThem);
         // From now on: a Get and nothing else (the strict fake fails on any Update).
         f.clock.Advance(2s);
         f.lock.ExpectGet(rival);
         f.Step();
         CHECK_FALSE(f.elector.Take().is_leader);
         CHECK(f.lock.calls() == "Get Create Update Update Get Get");
       }},
      {"[observe-ignores-changed-holder] after a late answer, a replayed watch event of the "
       "rival is taken even though its raw is the one already seen",
       [] {
         // As above, but the truth arrives again by watch (a restarted watch replays the current
         // object) instead of by a Get, once the claim has ended.
         Fixture f(ReleaseMode::kOff);
         const LockObservation rival = Obs(kThem, 1, "rv6");
         f.LateRenewAfterRivalEvent(rival);
         // The API is unreachable for one attempt: the claim has ended, so this replica steps
         // down with the late answer's record still observed.
         f.lock.ExpectWrite(Op::kUpdate, Err(Code::kUnavailable), nullptr)
             .ExpectGetError(Err(Code::kUnavailable));
         f.Step();
         REQUIRE(f.elector.Take().phase != Phase::kLeader);
         f.elector.Observe(rival);
         CHECK(f.elector.Take().record.holder_identity == kThem);
         f.clock.Advance(2s);
         f.lock.ExpectGet(rival);  // a Get, never a fast-path Update over the rival
         f.Step();
         CHECK(f.lock.calls() == "Get Create Update Update Get Get");
       }},
      {"[renew-stamped-at-send] a slow-path write stamps renewTime when it is sent, not when the "
       "attempt began (model/ finding 2)",
       [] {
         // Whole-second observers see only the record's bytes: after a slow Get the write must
         // carry the second its claim counts from.
         Fixture f(ReleaseMode::kOff);
         f.lock.ExpectGet(Obs(kThem, 4, "a"));
         f.Step();
         f.clock.Advance(16s);  // the rival's lease ran out unrenewed
         const SysTime begun = f.clock.SystemNow();
         SysTime stamped{}, acquired{};
         f.lock.ExpectGet(Obs(kThem, 4, "a"), 3s)
             .ExpectWrite(Op::kUpdate, Status::Ok(), [&](const LeaderElectionRecord& r, MonoTime) {
               stamped = *r.renew_time;
               acquired = *r.acquire_time;
             });
         f.Step();
         CHECK(stamped == begun + 3s);
         CHECK(acquired == begun + 3s);
         CHECK(f.elector.Take().is_leader);
       }},
      {"[candidate-ignores-own-watch-event] a candidate never learns from a watch event that it "
       "holds the lock (model/ finding 3)",
       [] {
         // A late event of our own old record, after a Get showed the rival: taking it would
         // make the next attempt's fast path PUT over the rival with the version the Get cached.
         Fixture f(ReleaseMode::kOff);
         f.lock.ExpectGet(Obs(kThem, 4, "b"));
         f.Step();
         f.elector.Observe(Obs(kMe, 3, "old"));
         CHECK(f.elector.Take().record.holder_identity == kThem);
         f.clock.Advance(2s);
         f.lock.ExpectGet(Obs(kThem, 4, "b"));  // a Get, never a fast-path Update
         f.Step();
         CHECK_FALSE(f.elector.Take().is_leader);
         CHECK(f.lock.calls() == "Get Get");
       }},
      // Coordinated leader election (elector.cpp, "Coordinated leader election").
      {"[renew-keeps-coordinated] a renew writes strategy and preferredHolder back as read, on "
       "the slow path and then the fast path",
       [] {
         Fixture f;
         f.BecomeLeader();
         f.clock.Advance(2s);
         f.lock.ExpectWrite(Op::kUpdate, Err(Code::kConflict), nullptr)
             .ExpectGet(Coordinated(Obs(kMe, 0, "b"), kThem))
             .ExpectWrite(Op::kUpdate, Status::Ok(), Writes(kMe, 0, "example.com/test", kThem));
         f.Step();
         f.clock.Advance(2s);
         f.lock.ExpectWrite(Op::kUpdate, Status::Ok(), Writes(kMe, 0, "example.com/test", kThem));
         f.Step();
         // With the default rule the leader keeps leading: the hint changes nothing else.
         CHECK(f.elector.Take().is_leader);
         CHECK(f.lock.calls() == "Get Create Update Get Update Update");
       }},
      {"[release-keeps-coordinated] a release writes strategy and preferredHolder back as read",
       [] {
         Fixture f(ReleaseMode::kImmediate);
         f.BecomeLeader();
         f.elector.Stop();
         f.lock.ExpectGet(Coordinated(Obs(kMe, 7, "z"), kThem))
             .ExpectWrite(Op::kUpdate, Status::Ok(), Writes("", 7, "example.com/test", kThem));
         f.Step();
         CHECK(f.elector.Take().phase == Phase::kDone);
       }},
      {"[takeover-clears-preferred] a takeover keeps the strategy and clears the preferred holder",
       [] {
         for (const char* preferred : {kMe, kThem}) {
           CAPTURE(preferred);
           Fixture f;
           f.lock.ExpectGet(Coordinated(Obs("", 2, "a"), preferred))
               .ExpectWrite(Op::kUpdate, Status::Ok(), Writes(kMe, 3, "example.com/test", ""));
           f.Step();
           CHECK(f.elector.Take().is_leader);
         }
       }},
      {"[yield-stops-renewing] with yield, a leader whose record names another preferred holder "
       "writes nothing more; its yes ends with its last claim",
       [] {
         Yielding f;
         const MonoTime sent = f.clock.MonotonicNow();
         f.BecomeLeader();
         f.clock.Advance(2s);
         // The fast path meets the controller's write; the GET shows the preferred holder.
         f.lock.ExpectWrite(Op::kUpdate, Err(Code::kConflict), nullptr)
             .ExpectGet(Coordinated(Obs(kMe, 0, "b"), kThem));
         CHECK(f.StepAndWait() == 2s);
         Snapshot s = f.elector.Take();
         CHECK(s.is_leader);
         CHECK(s.valid_until == sent + 10s);
         // Every retry reads and writes nothing: no fast-path PUT on the version just read.
         for (int i = 0; i < 3; ++i) {
           f.clock.Advance(2s);
           f.lock.ExpectGet(Coordinated(Obs(kMe, 0, "b"), kThem));
           f.Step();
           CHECK(f.elector.Take().is_leader);
         }
         f.clock.Advance(2s);  // sent + 10s: the claim has run out
         CHECK_FALSE(f.elector.Take().is_leader);
         f.lock.ExpectGet(Coordinated(Obs(kMe, 0, "b"), kThem));
         f.Step();
         s = f.elector.Take();
         CHECK(s.phase == Phase::kCandidate);
         CHECK(s.renew_failures_total == 0);
         CHECK(f.lock.calls() == "Get Create Update Get Get Get Get Get");
       }},
      {"[yield-defers-takeover] [yield-defers-free-lease] [yield-retake-is-takeover] with "
       "yield, who takes a lease that names a preferred holder, and when: a new term each time",
       [] {
         struct Take {
           const char* name;
           LockObservation read;
           Duration at;  // after the first read; one second earlier it still waits
         };
         const std::vector<Take> takes = {
             {"held, another preferred: one lease-duration past expiry",
              Coordinated(Obs("old", 4, "a"), kThem), 30s},
             {"held, this replica preferred: at expiry", Coordinated(Obs("old", 4, "a"), kMe), 15s},
             {"released, another preferred: one lease-duration after the read, not at once",
              Coordinated(Obs("", 4, "a", 1), kThem), 15s},
             {"held by this replica, which yielded: a takeover, not a renew",
              Coordinated(Obs(kMe, 4, "a"), kThem), 30s},
         };
         for (const Take& t : takes) {
           CAPTURE(t.name);
           Yielding f;
           f.lock.ExpectGet(t.read);
           f.Step();
           f.clock.Advance(t.at - 1s);
           f.lock.ExpectGet(t.read);
           f.Step();
           CHECK_FALSE(f.elector.Take().is_leader);
           f.clock.Advance(1s);
           const SysTime wall = f.clock.SystemNow();
           f.lock.ExpectGet(t.read).ExpectWrite(Op::kUpdate, Status::Ok(),
                                                [&](const LeaderElectionRecord& r, MonoTime d) {
                                                  Writes(kMe, 5, "example.com/test", "")(r, d);
                                                  CHECK(r.acquire_time == wall);
                                                });
           f.Step();
           CHECK(f.elector.Take().is_leader);
         }
       }},
      {"[yield-due] with yield and a watch, a candidate wakes at expiry and then when the "
       "deferral ends (no sleep longer than a lease, which /healthz allows), and never spins on "
       "its own yielded record",
       [] {
         for (const char* holder : {kThem, kMe}) {
           CAPTURE(holder);
           Yielding f;
           f.elector.SetWatchActive(true);
           f.lock.ExpectGet(Coordinated(Obs(holder, 1, "a"), "other"));
           CHECK(f.StepAndWait() == 15s);
           f.clock.Advance(15s);
           f.lock.ExpectGet(Coordinated(Obs(holder, 1, "a"), "other"));
           CHECK(f.StepAndWait() == 15s);
           f.clock.Advance(15s);
           f.lock.ExpectGet(Coordinated(Obs(holder, 1, "a"), "other"))
               .ExpectWrite(Op::kUpdate, Status::Ok(), Writes(kMe, 2, "example.com/test", ""));
           f.Step();
           CHECK(f.elector.Take().is_leader);
         }
       }},
      {"not ready before the first read; a 403 is reported",
       [] {
         Fixture f;
         CHECK_FALSE(f.elector.Take().observed);
         f.lock.ExpectGetError(Err(Code::kForbidden));
         f.Step();
         Snapshot s = f.elector.Take();
         CHECK_FALSE(s.observed);
         CHECK(s.last_error.code() == Code::kForbidden);
         REQUIRE(s.last_attempt_at.has_value());
       }},
  };
  return cases;
}

int64_t Ns(MonoTime t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}

// Gauges (what /metrics reads) and promise_overtaken_total: an observation of another holder's
// acquisition while a handed-out "yes" still runs ("Promises overtaken" in elector.cpp).
const std::vector<Case>& GaugeCases() {
  static const std::vector<Case> cases = {
      {"[overtaken-get] an early foreign takeover read by a Get counts once, and changes nothing "
       "else",
       [] {
         Fixture f;
         f.BecomeLeader();  // Take(): a "yes" valid until start + 10s was handed out
         CHECK(f.elector.gauges().promise_overtaken_total == 0);
         f.clock.Advance(2s);
         // A foreign elector that ignores promises wrote its acquisition 2 s into our claim.
         f.lock.ExpectWrite(Op::kUpdate, Err(Code::kConflict), nullptr)
             .ExpectGet(Obs(kThem, 1, "b"));
         CHECK(f.StepAndWait() == 3200ms);  // the same schedule as without the counter
         const Gauges& g = f.elector.gauges();
         CHECK(g.promise_overtaken_total == 1);
         CHECK(g.renew_failures_total == 1);
         CHECK(g.leader_until_ns == 0);
         CHECK_FALSE(g.holder_is_me);
         CHECK(g.held);
         CHECK(g.holder_hash == HolderHash(kThem));
         CHECK(g.term == 1);
         CHECK_FALSE(f.elector.Take().is_leader);
         // Read again while the promise still runs: the same takeover, not counted twice.
         f.clock.Advance(3200ms);
         f.lock.ExpectGet(Obs(kThem, 1, "b"));
         f.Step();
         CHECK(g.promise_overtaken_total == 1);
       }},
      {"[overtaken-watch] an early foreign takeover seen by the watch counts",
       [] {
         Fixture f;
         f.BecomeLeader();
         f.clock.Advance(1s);
         f.elector.Observe(Obs(kThem, 1, "b"));
         CHECK(f.elector.gauges().promise_overtaken_total == 1);
       }},
      {"[overtaken-stale-watch] a stale watch event of the previous holder does not count",
       [] {
         Fixture f;
         f.lock.ExpectGet(Obs("", 4, "a")).ExpectWrite(Op::kUpdate, Status::Ok(), nullptr);
         f.Step();
         REQUIRE(f.elector.Take().is_leader);  // term 5, promised
         f.clock.Advance(1s);
         f.elector.Observe(Obs(kThem, 4, "old"));  // replayed from the watch cache
         CHECK(f.elector.gauges().promise_overtaken_total == 0);
       }},
      {"[overtaken-no-promise] without a \"yes\" handed out, an early takeover is no overtaken "
       "promise",
       [] {
         Fixture f;
         f.lock.ExpectGetError(Err(Code::kNotFound))
             .ExpectWrite(Op::kCreate, Status::Ok(), nullptr);
         f.Step();
         REQUIRE(f.elector.Peek().is_leader);  // peeked: no promise
         f.elector.Observe(Obs(kThem, 1, "b"));
         CHECK(f.elector.gauges().promise_overtaken_total == 0);
       }},
      {"[overtaken-after-expiry] a takeover seen the instant the promise ends does not count",
       [] {
         Fixture f;
         f.BecomeLeader();
         f.clock.Advance(10s);  // the promise ran until exactly now
         f.elector.Observe(Obs(kThem, 1, "b"));
         CHECK(f.elector.gauges().promise_overtaken_total == 0);
       }},
      {"[overtaken-own-release] promises given back (POST /release) and released do not count",
       [] {
         Fixture f;
         f.BecomeLeader();
         f.elector.AcknowledgeRelease();
         f.lock.ExpectGet(Obs(kMe, 0, "x")).ExpectWrite(Op::kUpdate, Status::Ok(), nullptr);
         f.Step();
         REQUIRE(f.elector.Take().phase == Phase::kHeldOff);
         f.clock.Advance(1s);  // the promise handed out runs for another 9 s
         f.elector.Observe(Obs(kThem, 1, "b"));
         CHECK(f.elector.gauges().promise_overtaken_total == 0);
       }},
      {"[overtaken-release-in-flight] a rival's acquisition seen while the release write is "
       "still in flight does not count",
       [] {
         Fixture f;
         f.BecomeLeader();
         f.elector.AcknowledgeRelease();
         f.lock.ExpectGet(Obs(kMe, 0, "x"))
             .ExpectWrite(Op::kUpdate, Status::Ok(), [&f](const LeaderElectionRecord&, MonoTime) {
               // Applied: a rival saw it, acquired, and its event arrives before the answer.
               f.elector.Observe(Obs(kThem, 1, "b"));
             });
         f.Step();
         CHECK(f.elector.gauges().promise_overtaken_total == 0);
       }},
      {"gauges follow the state: leader, claim end, renew time, failures, stop",
       [] {
         Fixture f;
         const Gauges& g = f.elector.gauges();
         CHECK_FALSE(g.observed);
         CHECK(g.leader_until_ns == 0);
         const MonoTime start = f.clock.MonotonicNow();
         f.BecomeLeader();
         CHECK(g.observed);
         CHECK(g.held);
         CHECK(g.holder_is_me);
         CHECK(g.holder_hash == HolderHash(kMe));
         CHECK(g.leader_until_ns == Ns(start + 10s));
         CHECK(g.last_renew_ns == Ns(start));
         CHECK(g.acquired_total == 1);
         f.clock.Advance(2s);
         f.lock.ExpectWrite(Op::kUpdate, Err(Code::kUnavailable), nullptr)
             .ExpectGetError(Err(Code::kUnavailable));
         f.Step();
         CHECK(g.renew_failures_total == 1);
         CHECK(g.last_error == static_cast<int>(Code::kUnavailable));
         CHECK(g.leader_until_ns == Ns(start + 10s));  // the claim still runs
         f.elector.Stop();
         CHECK(g.leader_until_ns == 0);
       }},
      {"HolderHash: FNV-1a 32, 0 only for no holder",
       [] {
         CHECK(HolderHash("") == 0);
         CHECK(HolderHash("a") == 0xe40c292cu);  // FNV-1a("a")
         CHECK(HolderHash("me_0001") != HolderHash("me_0002"));
       }},
  };
  return cases;
}

TEST_CASE("elector gauges and promise_overtaken_total") {
  for (const auto& c : GaugeCases()) {
    SUBCASE(c.name) { c.run(); }
  }
}

// The names are on the wire (GET /readyz "phase"): a rename must fail here first.
TEST_CASE("PhaseName: the wire name of each phase") {
  struct NameCase {
    Phase phase;
    const char* want;
  };
  const NameCase cases[] = {
      {Phase::kCandidate, "candidate"}, {Phase::kLeader, "leader"}, {Phase::kHeldOff, "heldOff"},
      {Phase::kStopping, "stopping"},   {Phase::kDone, "done"},
  };
  for (const NameCase& c : cases) {
    CAPTURE(c.want);
    CHECK(std::string(PhaseName(c.phase)) == c.want);
  }
}

// The "lost lease" line names its cause: failed attempts (with the last error), a renew whose
// answer came after its claim had ended, or no attempt at all (a paused process), never "OK".
// The warn lines of each case, in order, are pinned by test/golden/logs/lost-lease.txt.
TEST_CASE("elector: the lost-lease line says why the claim ended") {
  const std::vector<Case> cases = {
      {"every renew failed: the count and the last error",
       [] {
         Fixture f;
         f.BecomeLeader();
         for (int i = 0; i < 5; ++i) {  // at +2s .. +10s; the claim ends at +10s
           f.clock.Advance(2s);
           f.lock.ExpectWrite(Op::kUpdate, Err(Code::kUnavailable), nullptr)
               .ExpectGetError(Status(Code::kUnavailable, "connection refused"));
           f.Step();
         }
       }},
      {"a renew answered after its claim ended",
       [] {
         Fixture f;
         f.BecomeLeader();
         f.clock.Advance(2s);
         f.lock.ExpectWrite(Op::kUpdate, Status::Ok(), nullptr, /*latency=*/10500ms);
         f.Step();
         f.lock.ExpectWrite(Op::kUpdate, Status::Ok(), nullptr);
         f.Step();
       }},
      {"a paused leader: no attempt, and how long since the last one",
       [] {
         Fixture f;
         f.BecomeLeader();
         f.clock.Advance(16s);  // SIGSTOPped past lease-duration: no Step ran
         f.lock.ExpectGet(Obs(kThem, 1, "x"));
         f.Step();
       }},
      {"failures, then a renew, then a pause: the failures before the renew are not the cause",
       [] {
         Fixture f;
         f.BecomeLeader();
         f.clock.Advance(2s);
         f.lock.ExpectWrite(Op::kUpdate, Err(Code::kUnavailable), nullptr)
             .ExpectGetError(Err(Code::kUnavailable));
         f.Step();
         f.clock.Advance(2s);
         f.lock.ExpectWrite(Op::kUpdate, Status::Ok(), nullptr);
         f.Step();
         f.clock.Advance(12s);  // the claim ended at +14s; the record still names us
         f.lock.ExpectWrite(Op::kUpdate, Status::Ok(), nullptr);
         f.Step();
         CHECK(f.lock.calls() == "Get Create Update Get Update Update");
       }},
  };
  std::string all;
  for (const auto& c : cases) {
    leasehold::testing::LogCapture log;
    c.run();
    all += std::string("# ") + c.name + "\n" + log.Lines(spdlog::level::warn);
  }
  CheckGolden("logs/lost-lease.txt", all);
  CHECK(all.find("(OK)") == std::string::npos);
}

TEST_CASE("elector") {
  for (const auto& c : Cases()) {
    SUBCASE(c.name) { c.run(); }
  }
}

}  // namespace
}  // namespace leasehold::election
