// The election algorithm: client-go's tools/leaderelection, step for step, with one addition
// that makes the local answer safe (see "The leadership invariant" in elector.cpp).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "base/clock.h"
#include "base/status.h"
#include "election/config.h"
#include "election/lock.h"
#include "election/record.h"
#include "election/runner.h"

namespace leasehold::election {

enum class Phase {
  kCandidate,  // trying to acquire every retry-period × (1 + rand × 1.2)
  kLeader,     // renewing every retry-period
  kHeldOff,    // released on request (POST /release); out of the election until the hold-off ends
  kStopping,   // told to stop; waiting for promises to expire, then releasing
  kDone,       // nothing more to do; Run() returns
};

// The one name of each phase, for every reader: "candidate", "leader", "heldOff", "stopping",
// "done". camelCase, because it is on the wire: GET /readyz reports it as "phase", beside the
// other camelCase keys of the local API's JSON; renaming one changes that answer.
const char* PhaseName(Phase phase);

// What this replica has read of the lock. The elector keeps one, under its lock; every Snapshot
// carries a copy.
struct Observed {
  // True once the lock has been read (or created) successfully at least once.
  bool observed = false;
  // The record as last observed (or as last written by this replica).
  LeaderElectionRecord record;
  // The lock holds a record this replica cannot read (see LockObservation::opaque): the holder
  // is unknown, and `unreadable` says why.
  bool opaque = false;
  std::string unreadable;
  // Set once this replica has seen evidence that the lock's transition count is not kept by
  // every writer (a record without one, a count that went backwards, a change of holder that
  // did not raise it, an unreadable record): `term` is then no fencing token, and this says which
  // evidence. Sticky for the life of the process; empty while the count looks kept.
  std::string term_unreliable_reason;

  bool term_reliable() const { return term_unreliable_reason.empty(); }
};

// What the election loop has done: its last attempt, and how often each thing happened. The
// elector keeps one, under its lock; every Snapshot carries a copy.
struct Progress {
  // The result of the last completed attempt (OK if it succeeded).
  Status last_error;
  // When the last attempt completed, successful or not; nullopt before the first one.
  std::optional<MonoTime> last_attempt_at;
  // When the election loop last made progress: a completed attempt, or a watch event it judged
  // and rescheduled on (a watching follower makes no attempt while the leader renews). What
  // /healthz ages; nullopt before the first attempt.
  std::optional<MonoTime> last_progress_at;
  // When the last write of this replica succeeded; nullopt if it never led.
  std::optional<MonoTime> last_renew_at;
  // Times this replica's slow path (GET then PUT while believing it leads) ran, as client-go's
  // leader_election_slowpath_total counts it.
  uint64_t slowpath_total = 0;
  // Times this replica became leader.
  uint64_t acquired_total = 0;
  // Successful writes that made or kept this replica the holder (acquisitions and renewals, not
  // releases), and the last one's latency from sending to its answer: the metrics turn them into
  // the renew-latency histogram.
  uint64_t writes_total = 0;
  Duration last_write_latency{};
  // Renew attempts (while leading) that failed; acquisition attempts are not counted.
  uint64_t renew_failures_total = 0;
  // See Elector::NotePromiseOvertakenLocked.
  uint64_t promise_overtaken_total = 0;
};

// What the local API reports. Taken under the elector's lock, so it is self-consistent.
struct Snapshot : Observed, Progress {
  std::string identity;
  LockDescription lock;
  Phase phase = Phase::kCandidate;
  // Judged at the instant the snapshot was taken: true only while this replica holds the lock
  // and its last successful write was sent less than renew-deadline ago.
  bool is_leader = false;
  // Only while is_leader: the monotonic instant at which this "yes" stops being true.
  MonoTime valid_until{};
  bool stopping = false;

  // Whether this snapshot may still say "you lead" at `now`: it was a "yes" when taken, and its
  // claim has not run out since. Every reader that hands a snapshot on later than the instant
  // it was taken (a publication rendered by a sink, an answer rendered after the request's
  // snapshot) judges it with this, on its own clock, at the moment it answers: a snapshot kept
  // for any time can say "no" late, never "yes" late (publisher.h, (b)).
  bool LeaderAt(MonoTime now) const;
};

// What /metrics reads, as atomics the elector stores under its lock and a scrape loads without
// it: a scrape never waits for the elector, and the elector never waits for a scrape (a flood of
// scrapes on the pod IP cannot delay a renew). Each field is exact; two fields read by one
// scrape may come from two consecutive states. Monotonic instants are nanoseconds of
// Clock::MonotonicNow() since its epoch; 0 means "none". Written when the elector finishes a
// change (Notify(), Observe()), so a field may lag behind by at most the attempt in flight.
struct Gauges {
  std::atomic<bool> observed{false};
  // The observed record's transition count, and whether it is a fencing token
  // (Observed::term_reliable()).
  std::atomic<int64_t> term{0};
  std::atomic<bool> term_reliable{true};
  // The lock is held (a holder is named, or the record is opaque), and by this replica.
  std::atomic<bool> held{false};
  std::atomic<bool> holder_is_me{false};
  // FNV-1a (32-bit) of the holder's identity; 0 when none is named or the record is opaque.
  std::atomic<uint32_t> holder_hash{0};
  // The end of this replica's claim while it is the leader in every respect but the clock
  // (IsLeaderLocked without "now < claim"); 0 otherwise. A scrape at `now` reports "leader"
  // exactly when now < leader_until_ns, which is IsLeaderLocked(now) for the stored state.
  std::atomic<int64_t> leader_until_ns{0};
  std::atomic<int64_t> last_renew_ns{0};  // the last successful acquire/renew write's answer
  std::atomic<int> last_error{0};         // the last attempt's Code (kOk = 0)
  // Progress's counters of the same names.
  std::atomic<uint64_t> slowpath_total{0};
  std::atomic<uint64_t> acquired_total{0};
  std::atomic<uint64_t> renew_failures_total{0};
  std::atomic<uint64_t> promise_overtaken_total{0};

  // Stores every field from the elector's state: what it observed, its progress, its own
  // identity (for holder_is_me) and the end of its claim while it leads but for the clock
  // (Elector::LeaderClaimLocked; nullopt otherwise).
  void Store(const Observed& seen, const Progress& progress, const std::string& identity,
             std::optional<MonoTime> leader_until);
};

// FNV-1a, 32 bits: the holder hash of Gauges (0 is kept for "no holder").
uint32_t HolderHash(const std::string& identity);

// Called (outside the elector's lock) after every attempt and every phase change, with a
// Peek()ed snapshot: the listener is no client, so a "yes" in it is no promise. A listener that
// hands leadership on must Take() for itself.
using SnapshotListener = std::function<void(const Snapshot&)>;

class Elector : public Runner {
 public:
  Elector(const ElectionConfig& config, Lock& lock, const Clock& clock, Random01 random);

  // Runs the election until Stop() has been called and the release (if any) is done.
  void Run();

  // Performs the work due now (one attempt, or one release step) and returns the monotonic
  // instant at which the next work is due. Run() calls it in a loop; tests call it directly
  // with a FakeClock. Never call it from two threads at once.
  MonoTime Step();

  // SIGTERM/SIGINT: stop answering "leader" at once; release as the ReleaseMode says.
  void Stop();

  // POST /release: the main container's work has stopped. Stop answering "leader", release at
  // once if held, and stay out of the election for the hold-off (or exit if stopping).
  void AcknowledgeRelease();

  // Wakes Run() early so that it re-decides what is due now.
  void Nudge();

  // A watch on the lock object saw this version of the record. It counts as an observation,
  // exactly as a Get would (only a changed raw restarts the expiry timer), and reschedules a
  // candidate: at once if the lock is free, else at the exact instant it would expire.
  void Observe(const LockObservation& observation);

  // Whether a watch on the lock object is established. While it is, a candidate that waits on a
  // held lock sleeps until the lock's expiry (or the next event) instead of polling every
  // retry-period; when it breaks, polling resumes.
  void SetWatchActive(bool active);

  // Thread-safe. Any "yes" it returns is remembered as a promise that safe mode honours: use it
  // for every answer that tells someone "you lead" (/leader, /is-leader, the status file, the
  // watch stream).
  Snapshot Take() const;
  // The same, but the "yes" is not handed to anyone (probes, metrics): no promise is recorded.
  Snapshot Peek() const;

  void SetListener(SnapshotListener listener);

  // For /metrics; lives as long as the elector. Loaded without the elector's lock.
  const Gauges& gauges() const { return gauges_; }

  const ElectionConfig& config() const { return config_; }

 private:
  MonoTime StepCandidateOrLeader(MonoTime now);
  // The cause the "lost lease" log line states. Caller holds mu_.
  std::string LostLeaseCauseLocked(MonoTime now) const;
  MonoTime StepStopping(MonoTime now);
  MonoTime StepHeldOff(MonoTime now);
  // client-go's tryAcquireOrRenew. True when this replica holds the lock after it.
  bool TryAcquireOrRenew(MonoTime deadline);
  // GET, and only if the holder is still this replica, write the released record. Retries on
  // Conflict until `deadline`.
  Status Release(MonoTime deadline);
  void SetObserved(const LeaderElectionRecord& record, const std::string& raw, MonoTime at);
  void SetObserved(const LockObservation& observation, MonoTime at);
  // The records a source (Gets, or the watch) delivered last, and the largest count it showed.
  // Each source is judged against its own history: each delivers versions in order, but a watch
  // event may be older than the Get before it.
  struct TermHistory {
    std::optional<LeaderElectionRecord> last;
    int64_t max_transitions = 0;
  };
  // Notes evidence against the transition count (see Observed::term_unreliable_reason) in `next`,
  // which `source` delivered.
  void CheckTermLocked(const LockObservation& next, TermHistory& source);
  // The bookkeeping of every write that made or kept this replica the holder (a create, a
  // fast-path or a slow-path renew), sent at `sent` and answered at `answered`: `rec` is the
  // observed record from then on, with `raw` (a write's answer keeps the raw of the last read;
  // a create has none), and the claim runs until sent + renew-deadline.
  void WriteSucceededLocked(const LeaderElectionRecord& rec, const std::string& raw, MonoTime sent,
                            MonoTime answered);
  // The claim's end when this replica leads in every respect but the clock, else nullopt.
  std::optional<MonoTime> LeaderClaimLocked() const;
  bool IsLeaderLocked(MonoTime now) const;
  bool LeaseValidLocked(MonoTime now) const;
  // The lease duration the observed record is judged by, in seconds.
  int ObservedLeaseSecondsLocked() const;
  Snapshot Read(Reading reading) const;
  Snapshot TakeLocked(MonoTime now, Reading reading) const;
  // Stores the state into gauges_.
  void PublishGaugesLocked();
  // An observation (`from_get`: by a Get, else by the watch) at `now` names another holder
  // than this replica: counts it in promise_overtaken_total when a promise is still running.
  void NotePromiseOvertakenLocked(const LockObservation& o, bool from_get, MonoTime now);
  void Notify();
  // When a candidate's next attempt is due, given what it has observed (watch active only).
  MonoTime CandidateDueLocked(MonoTime now) const;
  // With --preferred-holder yield: `record` (readable) names another candidate as its preferred
  // holder, so this replica does not write the lock before DeferredUntilLocked() (see
  // "Coordinated leader election" in elector.cpp).
  bool DefersToLocked(const LeaderElectionRecord& record) const;
  // For the observed record, which this replica defers to: the first instant it may write it.
  MonoTime DeferredUntilLocked() const;

  const ElectionConfig config_;
  Lock& lock_;
  const Clock& clock_;
  Random01 random_;

  mutable std::mutex mu_;
  std::condition_variable wake_;
  bool woken_ = false;
  bool watch_active_ = false;
  // A leader saw a watch event naming another holder: renew now to find out.
  bool check_now_ = false;
  Phase phase_ = Phase::kCandidate;
  bool stop_requested_ = false;
  bool release_requested_ = false;
  MonoTime holdoff_until_{};
  // What the loop last read of the lock (an opaque holder: see "Opaque holders"), with the raw
  // record and when it was read (the expiry timer's start).
  Observed seen_;
  std::string observed_raw_;
  MonoTime observed_time_{};
  // The largest transition count seen on this lock; a takeover writes more than it, so the
  // term never goes backwards whatever a foreign writer did to the count.
  int64_t max_transitions_seen_ = 0;
  TermHistory term_from_gets_;
  TermHistory term_from_watch_;
  // The invariant's input: send time of the last successful write + renew-deadline.
  std::optional<MonoTime> claim_until_;
  // The latest valid_until handed out in any "yes"; safe mode releases only after it.
  mutable MonoTime promised_until_{};
  bool warned_duration_mismatch_ = false;
  // Failed attempts in a row that were API errors rather than lost races; drives the backoff.
  int consecutive_errors_ = 0;
  SnapshotListener listener_;
  // The term of this replica's last successful write (its own acquisition or renewal).
  int64_t written_term_ = 0;
  // promised_until_ when a takeover was last counted: one count per overtaken promise.
  MonoTime overtaken_counted_for_{};
  // promised_until_ when this replica last released the lock: those promises were given up.
  MonoTime released_promises_until_{};
  // While this leader lets its term end because the record names another preferred holder:
  // that holder, for the log; empty otherwise.
  std::string yielding_to_;
  // Renew attempts that failed since the last successful write: what the "lost lease" line
  // says caused the loss (failures, a late answer, or no attempt at all: a stalled process).
  uint64_t renews_failed_since_success_ = 0;
  // The last attempt, the counts.
  Progress progress_;
  Gauges gauges_;
};

}  // namespace leasehold::election
