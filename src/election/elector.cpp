// The leadership invariant
// ------------------------
// This replica answers "I lead" at instant T (monotonic, CLOCK_BOOTTIME) only if
//   (1) its last successful write of the lock named it holder, and
//   (2) that write was *sent* at S with T < S + renew-deadline, and
//   (3) it has not been told to stop or to release since.
// Why that is enough for "never two leaders": a rival can only take the lock by a write that
// carries the resourceVersion of a record it has read, so it must first have read our write
// (sent at S, hence read at some R ≥ S) or a later one. It then waits until R + lease-duration by
// its own clock before it writes (client-go does the same; an empty holder is only ever written
// by a holder that has already stopped answering "yes"). Our "yes" ends at S + renew-deadline,
// at least one second (validated: lease-duration − renew-deadline ≥ 1s) before R +
// lease-duration. That second absorbs the rival's clock running fast relative to ours and
// client-go's habit of noticing renewTime changes only at one-second resolution.
// The answer is judged when the question is asked, from the clock, not from state kept up to
// date by the loop: a paused process, a stalled loop or a hung API call cannot leave a stale
// "yes", because the clock keeps running while they do.
// A snapshot handed on later than it was taken (a publication to the watch streams and the status
// file, an answer rendered after its request's snapshot) carries valid_until, the claim's end,
// and is judged again against the clock when it is rendered (Snapshot::LeaderAt): kept for any
// time, it can say "no" late, never "yes" late (election/publisher.h).
// model/leasehold.pml checks this argument with SPIN, step by step as this file runs it
// (model/README.md, docs/safety.md): keep the two in step.
//
// Opaque holders
// --------------
// A record this replica cannot read (LockObservation::opaque: garbage in the annotation, a field
// of the wrong type) was written by someone, so it is held, by a holder of unknown identity:
//   (a) it is never free: no "the holder is empty" shortcut, no take at once;
//   (b) its liveness is judged by the object's resourceVersion (the observation's raw), which
//       changes on every write to the object, wherever in it the write lands, and also on
//       A→B→A between two reads: any write restarts the expiry timer;
//   (c) it expires lease-duration after the last change seen, with the longer of our duration
//       and any the record held that could be read;
//   (d) the takeover is a conditional write on the resourceVersion read, like every write here,
//       so a holder that wrote meanwhile makes it fail with Conflict;
//   (e) it never names this replica: a leader whose record turns opaque says "no" at once (the
//       observed holder is no longer itself), and re-reads the lock at once.
// That is the invariant's argument with the rival's read R taken as our read of the opaque
// object: we write only after R + lease-duration with no change in between, as client-go
// waits for a readable one. Residual risk, for every elector and client-go as well: the
// apiserver does not bump resourceVersion for a PUT of an identical object, so a foreign
// elector that "renews" by writing the same bytes again is invisible; one that writes a
// changing renew time is seen. In the model an opaque holder is a foreign holder like any other
// (model/README.md).
//
// The fencing token
// -----------------
// A takeover writes a transition count greater than any this replica has seen on the lock, so
// the term this replica leads under never repeats one it saw, whatever a foreign writer did to
// the count. Where the count is not kept by every writer, Observed::term_reliable() says so.
//
// Promises overtaken
// ------------------
// By the invariant, a rival's acquisition is written after every "yes" this replica handed out
// has ended (its validUntil, on this replica's monotonic clock). So an observation of another
// holder's acquisition while a handed-out validUntil is still in the future proves that two pods
// were told "you lead" at once: a foreign elector that ignores promises, clock-rate drift beyond
// the one-second margin, or a bug. Gauges::promise_overtaken_total counts such observations,
// once per overtaken promise. It only counts: it never changes what this replica does.
// Promises this replica gave up by releasing the lock itself do not count: a release is written
// only once they ran out (safe mode), or were given back (POST /release), or the user chose not
// to wait for them (--release-on-shutdown=immediate).
// A Get is issued after the answer to the write the promise stands on, so whatever other holder
// it reads wrote after that write. A watch event may be older than our own write (a watch lags,
// and restarts from the watch cache), so from the watch only a record whose transition count
// exceeds the one this replica last wrote counts; a takeover that keeps the count is left to
// the Get that the event triggers (a leader re-reads at once on a foreign event).
//
// Coordinated leader election
// ---------------------------
// A Lease may carry spec.strategy and spec.preferredHolder (KEP-4355): the apiserver's
// coordinated-election controller names there the candidate it would rather see lead next.
// What each write keeps of them:
//   (a) a renew (fast or slow path) and a release write both back exactly as last read: the term
//       is still this replica's, and the hint is the controller's to change. (client-go's plain
//       elector drops both on every write; its coordinated one keeps the strategy and writes
//       only while there is no preferred holder.)
//   (b) a takeover keeps the strategy and clears the preferred holder, as the controller does
//       when it writes a new holder: the term the hint was about has ended. A create writes
//       neither; there was nothing to read.
// With --preferred-holder yield, a record that names another candidate as preferred holder:
//   (c) stops this leader's renewals, as client-go's tryCoordinatedRenew does ("end of term"):
//       it writes nothing, so its "yes" ends with the claim of its last successful write, at
//       S + renew-deadline by (2), and rivals take over lease-duration after they read that
//       write. A renew not sent is a renew that failed as far as the invariant and the model
//       are concerned: no step is new (model/README.md). It does not release the lock either,
//       as client-go does not: a release lets any candidate in at once, not only the preferred
//       one, and the expiry it saves is lease-duration − renew-deadline.
//   (d) keeps this replica, leader or candidate, from writing the lock until it has seen the
//       record unchanged for the record's lease duration (none when the holder is empty) plus
//       its own lease-duration: the preferred candidate takes it at expiry, the others one
//       lease-duration later, so that a preferred holder that never comes (gone, or a typo) costs
//       one lease-duration rather than the lock. client-go's coordinated elector never takes a
//       lock (the controller writes the next holder); waiting longer than expiry is always safe,
//       since (2)'s argument needs a rival to wait at least lease-duration, never at most.
//   (e) a write after that wait, even by the holder that yielded, is a takeover (b): a new term,
//       with the hint cleared, not renewed into the same end of term.
// An opaque record names no preferred holder. Annotation locks carry neither field.

#include "election/elector.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>

#include "base/duration.h"
#include "base/messages.h"
#include "base/text.h"
#include "base/wake.h"
#include "election/term_evidence.h"

namespace leasehold::election {
namespace {

std::string Where(const LockDescription& d) { return d.name_space + "/" + d.name; }

}  // namespace

const char* PhaseName(Phase phase) {
  switch (phase) {
    case Phase::kCandidate:
      return "candidate";
    case Phase::kLeader:
      return "leader";
    case Phase::kHeldOff:
      return "heldOff";
    case Phase::kStopping:
      return "stopping";
    case Phase::kDone:
      return "done";
  }
  return "unknown";
}

bool Snapshot::LeaderAt(MonoTime now) const {
  // At valid_until itself the claim has run out, as IsLeaderLocked judges it ("now < claim").
  return is_leader && now < valid_until;
}

uint32_t HolderHash(const std::string& identity) {
  if (identity.empty()) return 0;
  uint32_t h = 2166136261u;
  for (const char c : identity) {
    h ^= static_cast<uint8_t>(c);
    h *= 16777619u;
  }
  return h == 0 ? 1 : h;  // 0 means "no holder"
}

Elector::Elector(const ElectionConfig& config, Lock& lock, const Clock& clock, Random01 random)
    : config_(config), lock_(lock), clock_(clock), random_(std::move(random)) {}

void Elector::SetListener(SnapshotListener listener) {
  std::lock_guard<std::mutex> l(mu_);
  listener_ = std::move(listener);
}

void Elector::Stop() {
  {
    std::lock_guard<std::mutex> l(mu_);
    stop_requested_ = true;
    woken_ = true;
  }
  wake_.notify_all();
  Notify();
}

void Elector::AcknowledgeRelease() {
  {
    std::lock_guard<std::mutex> l(mu_);
    release_requested_ = true;
    woken_ = true;
  }
  wake_.notify_all();
  Notify();
}

void Elector::Nudge() {
  {
    std::lock_guard<std::mutex> l(mu_);
    woken_ = true;
  }
  wake_.notify_all();
}

void Elector::Observe(const LockObservation& observation) {
  {
    std::lock_guard<std::mutex> l(mu_);
    CheckTermLocked(observation, term_from_watch_);
    NotePromiseOvertakenLocked(observation, /*from_get=*/false, clock_.MonotonicNow());
    PublishGaugesLocked();
    if (phase_ == Phase::kLeader) {
      // A leader learns of its own writes from their answers; a watch may lag behind them, so a
      // stale event must not make its view go backwards. But an event naming someone else (a
      // foreign write: client-go's release() can blank a lease it no longer holds) triggers a
      // attempt at once instead of at the next retry-period. The observed holder is then the
      // foreign one, so IsLeader() says no from this moment, and the attempt skips the fast path
      // and GETs: it steps down, with no PUT, if the record really changed.
      if (observation.record.holder_identity == config_.identity()) return;
      check_now_ = true;
      woken_ = true;
      // Two kinds of event are dropped below, each with its own reason: not one clone branch.
      // NOLINTNEXTLINE(bugprone-branch-clone)
    } else if (observation.record.holder_identity == config_.identity()) {
      // A replica that does not lead never learns from a watch event that it holds the lock:
      // such an event is older than what it last read (a watch lags behind a Get, and restarts
      // from the watch cache), and taking it would make the next attempt's fast path PUT over
      // a rival with the version that Get cached (model/README.md, finding 3). A Get, or the
      // answer to its own write, is what tells it.
      return;
    } else if (seen_.observed && observation.raw == observed_raw_ &&
               observation.record.holder_identity == seen_.record.holder_identity &&
               observation.opaque == seen_.opaque) {
      // Unchanged: the expiry timer keeps running. The holder is compared too, since a write's
      // answer sets the record without the raw it produced (see step 3 of TryAcquireOrRenew).
      return;
    }
    SetObserved(observation, clock_.MonotonicNow());
    woken_ = true;
  }
  wake_.notify_all();
  Notify();
}

void Elector::SetWatchActive(bool active) {
  {
    std::lock_guard<std::mutex> l(mu_);
    if (watch_active_ == active) return;
    watch_active_ = active;
    woken_ = true;
  }
  wake_.notify_all();
}

MonoTime Elector::CandidateDueLocked(MonoTime now) const {
  if (seen_.observed && !seen_.opaque && DefersToLocked(seen_.record)) {
    // "Coordinated leader election", (d): wake at the record's expiry, then at the deferral's
    // end, so that no sleep is longer than a lease duration (what /healthz allows a loop).
    const MonoTime end = DeferredUntilLocked();
    const MonoTime expiry = end - config_.lease_duration();
    return now < expiry ? expiry : std::max(now, end);
  }
  const std::string& holder = seen_.record.holder_identity;
  if (!seen_.observed || (holder.empty() && !seen_.opaque) || holder == config_.identity() ||
      !LeaseValidLocked(now)) {
    return now;
  }
  // The first instant at which LeaseValidLocked() turns false.
  return observed_time_ + std::chrono::seconds(ObservedLeaseSecondsLocked());
}

bool Elector::DefersToLocked(const LeaderElectionRecord& record) const {
  // See "Coordinated leader election", (c) and (d), at the top of this file.
  return config_.preferred_holder_rule() == PreferredHolderRule::kYield &&
         !record.preferred_holder.empty() && record.preferred_holder != config_.identity();
}

MonoTime Elector::DeferredUntilLocked() const {
  // "Coordinated leader election", (d): the record's expiry (at once for an empty holder), then
  // one lease-duration of ours for the preferred candidate to take it first.
  MonoTime expiry = observed_time_;
  if (!seen_.record.holder_identity.empty()) {
    expiry += std::chrono::seconds(ObservedLeaseSecondsLocked());
  }
  return expiry + config_.lease_duration();
}

int Elector::ObservedLeaseSecondsLocked() const {
  // The record's own duration counts (client-go ≥ v0.27); a record without one (a garbled
  // annotation) falls back to ours rather than to zero, which would make it expire at once. An
  // opaque holder gets the longer of the two (see "Opaque holders", (c)).
  const int recorded = seen_.record.lease_duration_seconds;
  if (seen_.opaque) return std::max(recorded, config_.lease_duration_seconds());
  return recorded > 0 ? recorded : config_.lease_duration_seconds();
}

bool Elector::LeaseValidLocked(MonoTime now) const {
  return observed_time_ + std::chrono::seconds(ObservedLeaseSecondsLocked()) > now;
}

std::optional<MonoTime> Elector::LeaderClaimLocked() const {
  // See "The leadership invariant" at the top of this file: (1) and (3) here, (2) is the claim.
  if (!stop_requested_ && !release_requested_ && phase_ == Phase::kLeader &&
      seen_.record.holder_identity == config_.identity()) {
    return claim_until_;
  }
  return std::nullopt;
}

bool Elector::IsLeaderLocked(MonoTime now) const {
  const std::optional<MonoTime> claim = LeaderClaimLocked();
  return claim.has_value() && now < *claim;
}

void Elector::NotePromiseOvertakenLocked(const LockObservation& o, bool from_get, MonoTime now) {
  // See "Promises overtaken" at the top of this file.
  const std::string& holder = o.record.holder_identity;
  const bool other = o.opaque || (!holder.empty() && holder != config_.identity());
  if (!other || !(now < promised_until_) || overtaken_counted_for_ == promised_until_) return;
  if (promised_until_ <= released_promises_until_) return;  // given up by our own release
  if (!from_get && (o.opaque || !o.record.transitions_recorded ||
                    o.record.leader_transitions <= written_term_)) {
    return;
  }
  overtaken_counted_for_ = promised_until_;
  ++progress_.promise_overtaken_total;
  spdlog::error(
      "lock {}: {} took the lock while this replica's promise to lead runs for another {}ms: two "
      "pods were told \"you lead\" at once (a foreign elector that ignores promises, clock drift "
      "beyond the margin, or a bug)",
      Where(lock_.Describe()),
      o.opaque ? std::string("an unreadable record") : EscapeForLog(holder),
      std::chrono::duration_cast<std::chrono::milliseconds>(promised_until_ - now).count());
}

void Gauges::Store(const Observed& seen, const Progress& progress, const std::string& identity,
                   std::optional<MonoTime> leader_until) {
  const auto ns = [](MonoTime t) {
    return static_cast<int64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count());
  };
  const std::string& holder = seen.record.holder_identity;
  const bool is_held = seen.observed && (seen.opaque || !holder.empty());
  observed.store(seen.observed);
  term.store(seen.record.leader_transitions);
  term_reliable.store(seen.term_reliable());
  held.store(is_held);
  holder_is_me.store(seen.observed && !seen.opaque && holder == identity);
  holder_hash.store(is_held && !seen.opaque ? HolderHash(holder) : 0);
  leader_until_ns.store(leader_until ? ns(*leader_until) : 0);
  last_renew_ns.store(progress.last_renew_at ? ns(*progress.last_renew_at) : 0);
  last_error.store(static_cast<int>(progress.last_error.code()));
  slowpath_total.store(progress.slowpath_total);
  acquired_total.store(progress.acquired_total);
  renew_failures_total.store(progress.renew_failures_total);
  promise_overtaken_total.store(progress.promise_overtaken_total);
}

void Elector::PublishGaugesLocked() {
  gauges_.Store(seen_, progress_, config_.identity(), LeaderClaimLocked());
}

Snapshot Elector::TakeLocked(MonoTime now, Reading reading) const {
  Snapshot s;
  static_cast<Observed&>(s) = seen_;
  static_cast<Progress&>(s) = progress_;
  s.identity = config_.identity();
  s.lock = lock_.Describe();
  s.phase = phase_;
  s.is_leader = IsLeaderLocked(now);
  if (s.is_leader) {
    s.valid_until = *claim_until_;
    if (reading == Reading::kPromise) promised_until_ = std::max(promised_until_, *claim_until_);
  }
  s.stopping = stop_requested_;
  return s;
}

Snapshot Elector::Read(Reading reading) const {
  std::lock_guard<std::mutex> l(mu_);
  return TakeLocked(clock_.MonotonicNow(), reading);
}

Snapshot Elector::Take() const { return Read(Reading::kPromise); }

Snapshot Elector::Peek() const { return Read(Reading::kPeek); }

void Elector::Notify() {
  SnapshotListener listener;
  {
    std::lock_guard<std::mutex> l(mu_);
    PublishGaugesLocked();
    listener = listener_;
  }
  if (listener) listener(Peek());
}

void Elector::SetObserved(const LeaderElectionRecord& record, const std::string& raw, MonoTime at) {
  LockObservation o;
  o.record = record;
  o.raw = raw;
  SetObserved(o, at);
}

void Elector::CheckTermLocked(const LockObservation& next, TermHistory& source) {
  const LeaderElectionRecord& r = next.record;
  std::optional<LeaderElectionRecord> previous = std::move(source.last);
  const int64_t max_seen = source.max_transitions;
  source.last = next.opaque ? std::nullopt : std::optional<LeaderElectionRecord>(r);
  source.max_transitions = std::max(source.max_transitions, r.leader_transitions);
  if (!seen_.term_unreliable_reason.empty()) return;
  const std::string why = TermUnreliableReason(next, previous, max_seen);
  if (why.empty()) return;
  seen_.term_unreliable_reason = why;
  spdlog::warn("lock {}: the term is no fencing token from now on: {}", Where(lock_.Describe()),
               why);
}

void Elector::SetObserved(const LockObservation& observation, MonoTime at) {
  const LeaderElectionRecord& record = observation.record;
  const std::string& raw = observation.raw;
  max_transitions_seen_ = std::max(max_transitions_seen_, record.leader_transitions);
  if (observation.opaque && (!seen_.opaque || raw != observed_raw_)) {
    // Once per version of the object, not once per read.
    spdlog::warn(
        "lock {} holds a record this replica cannot read ({}); it counts as held by an "
        "unknown holder until it has not changed for the lease duration",
        Where(lock_.Describe()), EscapeForLog(observation.unreadable));
  }
  seen_.opaque = observation.opaque;
  seen_.unreadable = observation.unreadable;
  if (!observation.opaque &&
      (record.holder_identity != seen_.record.holder_identity || !seen_.observed || seen_.opaque)) {
    if (record.holder_identity.empty()) {
      spdlog::info("lease {} is free", Where(lock_.Describe()));
    } else if (record.holder_identity != config_.identity()) {
      spdlog::info("new leader {} on {} (term {})", record.holder_identity, Where(lock_.Describe()),
                   record.leader_transitions);
    }
  }
  if (record.lease_duration_seconds > 0 &&
      record.lease_duration_seconds != config_.lease_duration_seconds() &&
      !record.holder_identity.empty() && !warned_duration_mismatch_) {
    // client-go before v0.27 and the classic leader-elector judge expiry with their own
    // configured duration, so a fleet must agree on one.
    warned_duration_mismatch_ = true;
    spdlog::warn(
        "lock {} records leaseDurationSeconds={} but this replica uses {}s; every member of "
        "a fleet must use the same --lease-duration (older client-go electors ignore the "
        "record's value)",
        Where(lock_.Describe()), record.lease_duration_seconds, config_.lease_duration_seconds());
  }
  seen_.observed = true;
  seen_.record = record;
  observed_raw_ = raw;
  observed_time_ = at;
}

bool Elector::TryAcquireOrRenew(MonoTime deadline) {
  const MonoTime now = clock_.MonotonicNow();
  const SysTime wall = clock_.SystemNow();
  LeaderElectionRecord rec;
  rec.holder_identity = config_.identity();
  rec.lease_duration_seconds = config_.lease_duration_seconds();
  rec.acquire_time = wall;
  rec.renew_time = wall;

  // 1. Fast path: while we hold a lease that is locally valid, PUT the cached object directly.
  bool fast = false;
  {
    std::lock_guard<std::mutex> l(mu_);
    if (seen_.observed && seen_.record.holder_identity == config_.identity() &&
        LeaseValidLocked(now) && !DefersToLocked(seen_.record)) {
      fast = true;
      // Never a null time while holding: a foreign elector (the Python client) takes a record
      // with a null time at once (see "Opaque holders" for the others of its kind).
      rec.acquire_time = seen_.record.acquire_time.value_or(wall);
      rec.leader_transitions = seen_.record.leader_transitions;
      // "Coordinated leader election", (a).
      rec.strategy = seen_.record.strategy;
      rec.preferred_holder = seen_.record.preferred_holder;
    }
  }
  if (fast) {
    const MonoTime sent = clock_.MonotonicNow();
    Status st = lock_.Update(rec, deadline);
    if (st.ok()) {
      const MonoTime after = clock_.MonotonicNow();
      std::lock_guard<std::mutex> l(mu_);
      // observed_raw_ is left as it was, as client-go does: the next Get re-observes.
      WriteSucceededLocked(rec, observed_raw_, sent, after);
      return true;
    }
    spdlog::debug("failed to update lease {} optimistically, falling back to slow path: {}",
                  Where(lock_.Describe()), st.ToString());
  }

  // 2. Read the record; create it when missing.
  Result<LockObservation> got = lock_.Get(deadline);
  if (!got.ok()) {
    if (got.code() != Code::kNotFound) {
      std::lock_guard<std::mutex> l(mu_);
      progress_.last_error = got.status();
      return false;
    }
    rec.leader_transitions = 0;
    const MonoTime sent = clock_.MonotonicNow();
    Status st = lock_.Create(rec, deadline);
    std::lock_guard<std::mutex> l(mu_);
    if (!st.ok()) {
      progress_.last_error = st;
      return false;
    }
    const MonoTime after = clock_.MonotonicNow();
    WriteSucceededLocked(rec, "", sent, after);
    return true;
  }

  bool takeover = false;
  // 3. Observe: only a change of the raw record restarts the expiry timer. A changed holder
  // is a change too: a write's answer records what we wrote but keeps the raw of an earlier
  // read, and a watch event may have set that raw meanwhile. Without this, a renew answered
  // after a rival's watch event leaves us the holder in seen_.record while the fetched raw
  // "is unchanged", and the next fast path PUTs over the rival's lease (found by the model:
  // model/README.md, finding 1; pinned by [late-answer-keeps-stale-holder]).
  const LockObservation& obs = got.value();
  {
    std::lock_guard<std::mutex> l(mu_);
    progress_.last_error = Status::Ok();
    CheckTermLocked(obs, term_from_gets_);
    NotePromiseOvertakenLocked(obs, /*from_get=*/true, clock_.MonotonicNow());
    if (!seen_.observed || obs.raw != observed_raw_ ||
        obs.record.holder_identity != seen_.record.holder_identity || obs.opaque != seen_.opaque) {
      SetObserved(obs, clock_.MonotonicNow());
    }
    const std::string& holder = obs.record.holder_identity;
    // An opaque record is held by someone ("Opaque holders", (a)), never free and never ours.
    const bool foreign = obs.opaque || (!holder.empty() && holder != config_.identity());
    const bool defers = !obs.opaque && DefersToLocked(obs.record);
    if (defers && now < DeferredUntilLocked()) {
      // "Coordinated leader election", (c) and (d).
      if (holder == config_.identity() && phase_ == Phase::kLeader && yielding_to_.empty()) {
        yielding_to_ = obs.record.preferred_holder;
        spdlog::info(
            "lease {} names {} as preferred holder: not renewing; this replica's term ends with "
            "its claim, in {}ms",
            Where(lock_.Describe()), EscapeForLog(yielding_to_),
            claim_until_ ? std::chrono::duration_cast<std::chrono::milliseconds>(
                               std::max(*claim_until_, now) - now)
                               .count()
                         : 0);
      }
      return false;
    }
    if (foreign && LeaseValidLocked(now)) {
      return false;  // held by another replica and not yet expired
    }
    // 4. Write: renew keeps acquireTime and transitions; a takeover bumps the term past every
    // count seen on this lock ("The fencing token"). A write after deferring to a preferred
    // holder is a takeover, even of our own record ("Coordinated leader election", (e)).
    takeover = obs.opaque || holder != config_.identity() || defers;
    if (!takeover) {
      rec.acquire_time = obs.record.acquire_time;
      rec.leader_transitions = obs.record.leader_transitions;
      // "Coordinated leader election", (a).
      rec.strategy = obs.record.strategy;
      rec.preferred_holder = obs.record.preferred_holder;
      ++progress_.slowpath_total;
    } else {
      rec.leader_transitions = std::max(max_transitions_seen_, obs.record.leader_transitions) + 1;
      // "Coordinated leader election", (b): the preferred holder stays empty.
      rec.strategy = obs.record.strategy;
    }
  }
  // Stamped now, not when the attempt began: the claim counts from this send, and an observer
  // that sees records to the second (client-go, annotation locks) must be able to tell this
  // write from the one before it whenever the claim has moved past that one's second
  // (model/README.md, finding 2). A takeover's acquireTime is the same instant.
  const SysTime stamp = clock_.SystemNow();
  rec.renew_time = stamp;
  if (takeover || !rec.acquire_time) rec.acquire_time = stamp;
  const MonoTime sent = clock_.MonotonicNow();
  Status st = lock_.Update(rec, deadline);
  std::lock_guard<std::mutex> l(mu_);
  if (!st.ok()) {
    progress_.last_error = st;
    return false;
  }
  const MonoTime after = clock_.MonotonicNow();
  WriteSucceededLocked(rec, observed_raw_, sent, after);
  return true;
}

void Elector::WriteSucceededLocked(const LeaderElectionRecord& rec, const std::string& raw,
                                   MonoTime sent, MonoTime answered) {
  SetObserved(rec, raw, answered);
  // Counted from the send, not the answer: see "The leadership invariant", (2).
  claim_until_ = sent + config_.renew_deadline();
  written_term_ = rec.leader_transitions;
  progress_.last_renew_at = answered;
  ++progress_.writes_total;
  progress_.last_write_latency = answered - sent;
  progress_.last_error = Status::Ok();
  yielding_to_.clear();
}

Status Elector::Release(MonoTime deadline) {
  // client-go's release() checks only its local view of the holder; a late release could then
  // blank a rival who took over meanwhile. We check the record just fetched, and the PUT is
  // conditional on its resourceVersion. Never a conditional DELETE instead: Kubernetes 1.11
  // ignores a DELETE's resourceVersion precondition (Lock in election/lock.h says more).
  while (true) {
    Result<LockObservation> got = lock_.Get(deadline);
    if (!got.ok()) {
      if (got.code() == Code::kNotFound) return Status::Ok();
      return got.status();
    }
    if (got->record.holder_identity != config_.identity()) {
      std::lock_guard<std::mutex> l(mu_);
      NotePromiseOvertakenLocked(got.value(), /*from_get=*/true, clock_.MonotonicNow());
      return Status::Ok();
    }
    LeaderElectionRecord rec;
    rec.holder_identity = "";
    // 1, not 0: a Lease with leaseDurationSeconds 0 fails validation.
    rec.lease_duration_seconds = 1;
    rec.acquire_time = clock_.SystemNow();
    rec.renew_time = rec.acquire_time;
    rec.leader_transitions = got->record.leader_transitions;
    // "Coordinated leader election", (a).
    rec.strategy = got->record.strategy;
    rec.preferred_holder = got->record.preferred_holder;
    {
      // The promises are given up by the decision to release, so before the write is sent: once
      // it is applied, a rival's acquisition may reach Observe() before Update() returns here.
      std::lock_guard<std::mutex> l(mu_);
      released_promises_until_ = promised_until_;
    }
    Status st = lock_.Update(rec, deadline);
    if (st.ok()) {
      std::lock_guard<std::mutex> l(mu_);
      SetObserved(rec, "", clock_.MonotonicNow());
      spdlog::info("released lease {} (term {})", Where(lock_.Describe()), rec.leader_transitions);
      return st;
    }
    if (st.code() != Code::kConflict || clock_.MonotonicNow() >= deadline) return st;
  }
}

MonoTime Elector::Step() {
  const MonoTime now = clock_.MonotonicNow();
  Phase phase;
  bool stop, release;
  {
    std::lock_guard<std::mutex> l(mu_);
    if (stop_requested_ && phase_ != Phase::kDone) phase_ = Phase::kStopping;
    phase = phase_;
    stop = stop_requested_;
    release = release_requested_;
  }
  MonoTime next;
  if (phase == Phase::kDone) {
    next = now;
  } else if (stop) {
    next = StepStopping(now);
  } else if (release || phase == Phase::kHeldOff) {
    next = StepHeldOff(now);
  } else {
    next = StepCandidateOrLeader(now);
  }
  Notify();
  return next;
}

// Why the claim ended, from what this replica knows (never "OK": a lost lease has a cause):
// renew attempts failed; the last write succeeded, but its answer came after the claim it gave
// had ended; or no attempt was made at all, because the loop did not run (a SIGSTOPped or frozen
// process, a starved one): then the time since the last attempt ended, from the Clock.
std::string Elector::LostLeaseCauseLocked(MonoTime now) const {
  using std::chrono::milliseconds;
  const auto ms = [](Duration d) {
    return FormatGoDuration(std::chrono::duration_cast<milliseconds>(d));
  };
  if (renews_failed_since_success_ > 0) {
    // (A failed attempt that saw another holder's record has already ended the claim with a
    // line of its own, "lost lease ... to ...": here the last attempt's error is never OK.)
    return fmt::format("no renew succeeded within renew-deadline ({} failed, the last: {})",
                       renews_failed_since_success_, progress_.last_error.ToString());
  }
  if (progress_.last_renew_at && claim_until_ && *progress_.last_renew_at >= *claim_until_) {
    return fmt::format(
        "the last renew succeeded, but its answer took {}, longer than renew-deadline ({})",
        ms(progress_.last_write_latency), FormatGoDuration(config_.renew_deadline()));
  }
  return fmt::format(
      "no renew was attempted within renew-deadline: the last attempt ended {} ago (this "
      "process was paused, frozen or starved of CPU meanwhile)",
      progress_.last_attempt_at ? ms(now - *progress_.last_attempt_at) : std::string("never"));
}

MonoTime Elector::StepCandidateOrLeader(MonoTime now) {
  const Duration rp = config_.retry_period();
  bool was_leader;
  MonoTime deadline;
  {
    std::lock_guard<std::mutex> l(mu_);
    if (phase_ == Phase::kLeader && (!claim_until_ || now >= *claim_until_)) {
      // No renew succeeded within renew-deadline: the "yes" has already ended; say so, and why.
      phase_ = Phase::kCandidate;
      if (!yielding_to_.empty()) {
        spdlog::info("yielded lease {} to the preferred holder {}: this replica's term ended",
                     Where(lock_.Describe()), EscapeForLog(yielding_to_));
        yielding_to_.clear();
      } else {
        spdlog::warn("lost lease {}: {}", Where(lock_.Describe()), LostLeaseCauseLocked(now));
      }
      claim_until_.reset();
    }
    was_leader = phase_ == Phase::kLeader;
    // A renew attempt may not outlive the current claim; an acquire attempt gets renew-deadline.
    deadline = was_leader ? *claim_until_ : now + config_.renew_deadline();
    // With a renew-interval longer than retry-period, the attempt due at the interval comes late
    // in the claim: it ends early enough that one retry, a retry-period later, still has
    // kRenewAttemptRoom, so a hung request does not cost the lock (the rule that makes room for
    // both: ElectionConfig::Create). Only liveness: ending an attempt early never extends a claim.
    const MonoTime cut = deadline - rp - kRenewAttemptRoom;
    if (was_leader && config_.renew_interval() > rp && now + kRenewAttemptRoom <= cut) {
      deadline = cut;
    }
  }

  const bool ok = TryAcquireOrRenew(deadline);
  const MonoTime after = clock_.MonotonicNow();

  std::lock_guard<std::mutex> l(mu_);
  progress_.last_attempt_at = after;
  progress_.last_progress_at = after;
  if (!ok && was_leader && yielding_to_.empty()) {
    ++progress_.renew_failures_total;
    ++renews_failed_since_success_;
  }
  if (ok) {
    renews_failed_since_success_ = 0;
    consecutive_errors_ = 0;
    if (!was_leader) {
      phase_ = Phase::kLeader;
      ++progress_.acquired_total;
      spdlog::info("acquired lease {} as {} (term {})", Where(lock_.Describe()), config_.identity(),
                   seen_.record.leader_transitions);
    }
    // Renew every renew-interval while renews succeed, counted from the end of this attempt.
    // Safety does not depend on it: the claim counts from this write's send ("The leadership
    // invariant"), and rivals from the last change they saw, however long ago that was.
    return after + config_.renew_interval();
  }
  if (was_leader && seen_.record.holder_identity != config_.identity()) {
    phase_ = Phase::kCandidate;
    claim_until_.reset();
    yielding_to_.clear();
    spdlog::warn("lost lease {} to {} (term {})", Where(lock_.Describe()),
                 seen_.record.holder_identity, seen_.record.leader_transitions);
  }
  if (progress_.last_error.code() == Code::kUnauthorized) {
    spdlog::error("leader election attempt on {} refused: {} -- {}", Where(lock_.Describe()),
                  progress_.last_error.ToString(), kCredentialsRefused);
  } else if (progress_.last_error.code() == Code::kForbidden) {
    spdlog::error("leader election attempt on {} refused: {} -- {}", Where(lock_.Describe()),
                  progress_.last_error.ToString(), kLockRbacRefused);
  } else if (!progress_.last_error.ok()) {
    spdlog::warn("leader election attempt on {} failed: {}", Where(lock_.Describe()),
                 progress_.last_error.ToString());
  }
  if (phase_ == Phase::kLeader) {
    // Keep trying every retry-period while the claim lasts; StepCandidateOrLeader steps down
    // once it has run out.
    return std::min(after + rp, *claim_until_);
  }
  MonoTime next =
      after + std::chrono::duration_cast<Duration>(rp * (1.0 + random_() * kJitterFactor));
  const bool api_error = !progress_.last_error.ok() &&
                         progress_.last_error.code() != Code::kConflict &&
                         progress_.last_error.code() != Code::kAlreadyExists;
  if (api_error) {
    // Back off on errors that are not lost races, up to 8x but never past a lease-duration, so
    // an outage costs the API server little and failover after it stays bounded.
    ++consecutive_errors_;
    const int factor = 1 << std::min(consecutive_errors_ - 1, 3);
    const Duration backoff = std::min<Duration>(
        (next - after) * factor, std::max<Duration>(config_.lease_duration(), next - after));
    next = after + backoff;
    if (auto ra = progress_.last_error.retry_after()) next = std::max(next, after + *ra);
  } else {
    consecutive_errors_ = 0;
    if (watch_active_) {
      // The watch tells us of every change; sleep until the held lock would expire.
      next = CandidateDueLocked(after);
    }
  }
  return next;
}

MonoTime Elector::StepHeldOff(MonoTime now) {
  bool release;
  {
    std::lock_guard<std::mutex> l(mu_);
    release = release_requested_;
  }
  if (release) {
    bool ours;
    {
      std::lock_guard<std::mutex> l(mu_);
      ours = seen_.observed && seen_.record.holder_identity == config_.identity();
    }
    if (ours) {
      Status st = Release(now + config_.renew_deadline());
      if (!st.ok())
        spdlog::warn("release of {} failed: {}", Where(lock_.Describe()), st.ToString());
    }
    std::lock_guard<std::mutex> l(mu_);
    release_requested_ = false;
    phase_ = Phase::kHeldOff;
    claim_until_.reset();
    holdoff_until_ = clock_.MonotonicNow() + config_.release_holdoff();
    spdlog::info(
        "main container released the lock; out of the election for {}ms",
        std::chrono::duration_cast<std::chrono::milliseconds>(config_.release_holdoff()).count());
    return holdoff_until_;
  }
  std::lock_guard<std::mutex> l(mu_);
  if (now < holdoff_until_) return holdoff_until_;
  // No SIGTERM followed: the main container was only restarted. Contend again.
  phase_ = Phase::kCandidate;
  spdlog::info("release hold-off over; contending for {} again", Where(lock_.Describe()));
  return now;
}

MonoTime Elector::StepStopping(MonoTime now) {
  bool ours, acked;
  MonoTime promised;
  {
    std::lock_guard<std::mutex> l(mu_);
    ours = seen_.observed && seen_.record.holder_identity == config_.identity();
    acked = release_requested_;
    promised = promised_until_;
  }
  const ReleaseMode mode = config_.release_mode();
  if (ours && mode != ReleaseMode::kOff) {
    if (mode == ReleaseMode::kSafe && !acked && now < promised) {
      // A "yes" already given holds until its validUntil; the main container may still be
      // acting on it. Wait it out (at most renew-deadline) unless it acknowledges first.
      return promised;
    }
    Status st = Release(now + config_.renew_deadline());
    if (!st.ok()) spdlog::warn("release of {} failed: {}", Where(lock_.Describe()), st.ToString());
  }
  std::lock_guard<std::mutex> l(mu_);
  phase_ = Phase::kDone;
  claim_until_.reset();
  return now;
}

void Elector::Run() {
  MonoTime next = Step();
  while (true) {
    std::unique_lock<std::mutex> l(mu_);
    if (phase_ == Phase::kDone) return;
    if (WaitUntil(wake_, l, clock_, next, [this] { return woken_; }) == Wake::kCondition) {
      woken_ = false;
      const MonoTime now = clock_.MonotonicNow();
      // A stop or release request is handled at once. A watch event or a change of watch state
      // reschedules a candidate; a leader keeps its renew rhythm unless a foreign write was seen.
      if (stop_requested_ || release_requested_) {
        next = now;
      } else if (phase_ == Phase::kLeader && check_now_) {
        check_now_ = false;
        next = now;
      } else if (phase_ == Phase::kCandidate && consecutive_errors_ == 0) {
        next = watch_active_ ? CandidateDueLocked(now) : now;
        // The loop is alive and judged the lock, though no attempt may be due for a long time.
        // Only once it has attempted: /healthz must still notice a loop that never could.
        if (progress_.last_attempt_at) progress_.last_progress_at = now;
      }
      if (next > now) continue;
    }
    l.unlock();
    next = Step();
  }
}

}  // namespace leasehold::election
