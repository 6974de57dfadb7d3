// Observe mode's "yes", and why no rival can beat it
// -------------------------------------------------
// The observer never writes the lock. It reads it with a Get every retry-period (sequentially,
// on one thread) and takes watch events, and says "yes" for this pod at instant T (monotonic)
// only if
//   (1) the last answered Get read a record whose holder is this pod (HolderMatch), and
//   (2) an earlier Get, sent at S, read another version of the record than that one (so the
//       first write of this version came after S), with T < S + min(renew-deadline,
//       LD − kObserveMargin), LD = min(the record's leaseDurationSeconds, --lease-duration), and
//   (3) no watch event naming another holder (or none) arrived after the last Get was sent, and
//   (4) it has not been told to stop.
// It cannot know when the holder last managed to renew: a Get only says that a version existed
// when the server answered, maybe long after it was written (a dead holder's record looks alive
// to the first Get). What it can know is a lower bound: a Get sent at S that read another
// version was answered after S, so the version that replaced it was first written after S.
// Why that is enough: a rival (client-go's or controller-runtime's elector, which keep the
// observed record's raw bytes and the local time they last changed) takes the lock only after
// it has seen the record unchanged for the lease duration by its own clock. Its timer for the
// current version started when it first saw bytes equal to it, which is no earlier than the
// first write of such bytes. Versions are told apart here exactly as a Go elector tells them
// apart, or more coarsely (KeyOf: the record's fields with both times in whole seconds, as
// client-go marshals them; a Go record's strategy fields are left out): whenever the key
// changed, the rival's bytes changed too, so the first write of the current key is no earlier
// than the first write of the rival's current bytes, and both came after S. The rival therefore
// writes no earlier than S + LD by its clock, and our "yes" ends at least kObserveMargin before
// that: one second for clock-rate drift over the lease duration (as the elector's margin), and
// one to spare (observer.h). LD is the smaller of the record's value (what client-go ≥ 1.14
// waits) and --lease-duration (what an elector that waits its own configured duration waits; it
// must not exceed the electors' own, docs/safety.md). S is a send time, never a receive time:
// the version read may have been written at any instant between S and the answer.
// Watch events may only shorten a "yes": an event naming another holder says "no" at once,
// until a Get sent after it (which reads that version or a newer one) has answered; an event
// naming this pod only makes the next Get due at once, so the "yes" starts sooner. A Get's send
// time is the only thing that extends one. A Get that failed says nothing: the "yes" runs out on
// its own bound.
// What it does not cover: a holder that releases the lock (writes an empty holder, client-go's
// ReleaseOnCancel) lets a rival take it at once, before any observer can have seen the release;
// the "yes" of the releasing pod's observer then outlives its operator's leadership by the time
// its watch event (or Get) takes to arrive. Observe mode's "yes" is therefore safe only beside
// electors that do not release on cancel (controller-runtime's default,
// LeaderElectionReleaseOnCancel=false); docs/safety.md says so.
// The answer is judged when the question is asked, from the clock (Snapshot::LeaderAt), as the
// elector's is: a stalled loop or a hung Get cannot leave a stale "yes".

#include "election/observer.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>

#include "base/text.h"
#include "base/wake.h"
#include "election/term_evidence.h"

namespace leasehold::election {
namespace {

std::string Where(const LockDescription& d) { return d.name_space + "/" + d.name; }

std::string WholeSeconds(const std::optional<SysTime>& t) {
  if (!t) return "-";
  return std::to_string(std::chrono::floor<std::chrono::seconds>(t->time_since_epoch()).count());
}

// The version of the record as a Go elector tells versions apart, or more coarsely (see the top
// of this file). An unreadable record is told apart by its object's version (its raw).
std::string KeyOf(const LockObservation& o) {
  if (o.opaque) return "opaque\n" + o.raw;
  const LeaderElectionRecord& r = o.record;
  return "holder=" + r.holder_identity + "\nlease=" + std::to_string(r.lease_duration_seconds) +
         "\nacquired=" + WholeSeconds(r.acquire_time) + "\nrenewed=" + WholeSeconds(r.renew_time) +
         "\ntransitions=" + std::to_string(r.leader_transitions);
}

// The key of "no lock object" (a Get answered NotFound).
constexpr const char* kAbsentKey = "absent";

}  // namespace

const char* MatchRuleName(MatchRule rule) { return rule == MatchRule::kExact ? "exact" : "pod"; }

bool HolderMatch::Matches(const std::string& holder) const {
  if (name.empty() || holder.empty()) return false;
  if (rule == MatchRule::kExact) return holder == name;
  if (holder == name) return true;
  return holder.size() > name.size() && holder.compare(0, name.size(), name) == 0 &&
         holder[name.size()] == '_';
}

Status CheckHolderMatch(const HolderMatch& match) {
  if (match.name.empty()) {
    return Status(Code::kBadConfig,
                  match.rule == MatchRule::kPod
                      ? "needs this pod's name in POD_NAME (from the downward API: "
                        "valueFrom.fieldRef.fieldPath: metadata.name)"
                      : "needs --identity, the holder identity that is this pod");
  }
  if (match.rule == MatchRule::kPod && match.name.find('_') != std::string::npos) {
    // "a_b" would match the holder "a_b_x", and so would "a": two pods for one holder.
    return Status(Code::kBadConfig, "pod name " + Quote(match.name) +
                                        " contains \"_\", which no pod name can: two names could "
                                        "match one holder");
  }
  return Status::Ok();
}

Observer::Observer(ObserverConfig config, Lock& lock, const Clock& clock)
    : config_(std::move(config)), lock_(lock), clock_(clock) {}

void Observer::SetListener(std::function<void(const Snapshot&)> listener) {
  std::lock_guard<std::mutex> l(mu_);
  listener_ = std::move(listener);
}

void Observer::Notify() {
  std::function<void(const Snapshot&)> listener;
  {
    std::lock_guard<std::mutex> l(mu_);
    listener = listener_;
  }
  if (listener) listener(Peek());
}

void Observer::Run() {
  while (true) {
    const MonoTime due = Step();
    std::unique_lock<std::mutex> l(mu_);
    WaitUntil(wake_, l, clock_, due, [this] { return woken_ || stop_requested_; });
    woken_ = false;
    if (stop_requested_) break;
  }
  Notify();
}

void Observer::Stop() {
  {
    std::lock_guard<std::mutex> l(mu_);
    stop_requested_ = true;
    PublishGaugesLocked();
  }
  wake_.notify_all();
  Notify();
}

void Observer::AcknowledgeRelease() {
  spdlog::info(
      "POST /release: nothing to release in observe mode (this agent never writes the lock)");
}

MonoTime Observer::Step() {
  const MonoTime send = clock_.MonotonicNow();
  {
    std::lock_guard<std::mutex> l(mu_);
    if (stop_requested_) return send;
  }
  // Bounded like one attempt of the elector: a Get that outlives the yes it could extend is
  // worth nothing.
  Result<LockObservation> got = lock_.Get(send + config_.renew_deadline);
  const MonoTime answered = clock_.MonotonicNow();
  const LockType type = lock_.Describe().type;
  {
    std::lock_guard<std::mutex> l(mu_);
    last_attempt_at_ = answered;
    if (!got.ok() && got.code() != Code::kNotFound) {
      last_error_ = got.status();
      spdlog::debug("observe: reading lock {} failed: {}", Where(lock_.Describe()),
                    got.status().ToString());
    } else {
      last_error_ = Status::Ok();
      const bool found = got.ok();
      LockObservation o = found ? std::move(got).value() : LockObservation{};
      const std::string key = found ? KeyOf(o) : kAbsentKey;
      if (!last_key_ || type != last_type_) {
        evidence_.reset();  // no earlier Get of this lock object: no lower bound yet
      } else if (key != *last_key_) {
        evidence_ = last_send_;
      }
      last_key_ = key;
      last_send_ = send;
      last_type_ = type;
      if (veto_since_ && send > *veto_since_) veto_since_.reset();
      if (found) CheckTermLocked(o);
      current_ = o;
      shown_ = std::move(o);
      observed_ = true;
      last_progress_at_ = answered;
    }
    PublishGaugesLocked();
  }
  Notify();
  return send + config_.retry_period;
}

void Observer::Observe(const LockObservation& observation) {
  const MonoTime now = clock_.MonotonicNow();
  {
    std::lock_guard<std::mutex> l(mu_);
    if (observation.opaque || !config_.match.Matches(observation.record.holder_identity)) {
      veto_since_ = now;  // the latest: only a Get sent after it may end the veto
    }
    shown_ = observation;
    observed_ = true;
    last_progress_at_ = now;
    woken_ = true;  // read it now: the Get that may start (or end) a "yes" is due
    PublishGaugesLocked();
  }
  wake_.notify_all();
  Notify();
}

void Observer::SetWatchActive(bool active) {
  std::lock_guard<std::mutex> l(mu_);
  watch_active_ = active;
}

std::optional<MonoTime> Observer::ClaimLocked() const {
  if (stop_requested_ || veto_since_ || !evidence_ || current_.opaque) return std::nullopt;
  if (!config_.match.Matches(current_.record.holder_identity)) return std::nullopt;
  const Duration lease = std::min<Duration>(
      std::chrono::seconds(current_.record.lease_duration_seconds), config_.lease_duration);
  const Duration span = std::min<Duration>(config_.renew_deadline, lease - kObserveMargin);
  if (span <= Duration::zero()) return std::nullopt;
  return *evidence_ + span;
}

Snapshot Observer::SnapshotLocked(MonoTime now) const {
  Snapshot s;
  s.identity = config_.identity;
  s.lock = lock_.Describe();
  s.observed = observed_;
  s.record = shown_.record;
  s.opaque = shown_.opaque;
  s.unreadable = shown_.unreadable;
  const std::optional<MonoTime> claim = ClaimLocked();
  s.is_leader = claim && now < *claim;
  if (s.is_leader) s.valid_until = *claim;
  s.phase = stop_requested_ ? Phase::kDone : s.is_leader ? Phase::kLeader : Phase::kCandidate;
  s.stopping = stop_requested_;
  s.last_error = last_error_;
  s.last_attempt_at = last_attempt_at_;
  s.last_progress_at = last_progress_at_;
  s.term_unreliable_reason = term_unreliable_reason_;
  return s;
}

Snapshot Observer::Take() const { return Peek(); }

Snapshot Observer::Peek() const {
  std::lock_guard<std::mutex> l(mu_);
  return SnapshotLocked(clock_.MonotonicNow());
}

// The term is the holder's leaseTransitions as read; it is a fencing token only while every
// writer kept the count (the same evidence the elector looks for, from the Gets).
void Observer::CheckTermLocked(const LockObservation& o) {
  const std::optional<LeaderElectionRecord> previous = std::move(term_last_);
  const int64_t max_seen = term_max_;
  term_last_ = o.opaque ? std::nullopt : std::optional<LeaderElectionRecord>(o.record);
  term_max_ = std::max(term_max_, o.record.leader_transitions);
  if (term_unreliable_reason_.empty()) {
    term_unreliable_reason_ = TermUnreliableReason(o, previous, max_seen);
    if (!term_unreliable_reason_.empty()) {
      spdlog::warn("lock {}: the term is no fencing token from now on: {}", Where(lock_.Describe()),
                   term_unreliable_reason_);
    }
  }
}

void Observer::PublishGaugesLocked() {
  const std::string& holder = shown_.record.holder_identity;
  const bool held = observed_ && (shown_.opaque || !holder.empty());
  gauges_.observed.store(observed_);
  gauges_.term.store(shown_.record.leader_transitions);
  gauges_.term_reliable.store(term_unreliable_reason_.empty());
  gauges_.held.store(held);
  gauges_.holder_is_me.store(observed_ && !shown_.opaque && config_.match.Matches(holder));
  gauges_.holder_hash.store(held && !shown_.opaque ? HolderHash(holder) : 0);
  const std::optional<MonoTime> claim = ClaimLocked();
  gauges_.leader_until_ns.store(
      claim ? static_cast<int64_t>(
                  std::chrono::duration_cast<std::chrono::nanoseconds>(claim->time_since_epoch())
                      .count())
            : 0);
  gauges_.last_error.store(static_cast<int>(last_error_.code()));
}

}  // namespace leasehold::election
