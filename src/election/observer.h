// Observe mode (--agent-mode observe): the agent reads a lock that another program elects with (a
// controller-runtime or client-go operator in the same pod) and never writes it. It says who
// holds the lock, and "yes" for this pod only within a bound no rival can beat: the argument is
// at the top of observer.cpp and in docs/safety.md ("Observe mode").
#pragma once

#include <condition_variable>
#include <mutex>
#include <optional>
#include <string>

#include "base/clock.h"
#include "base/status.h"
#include "election/elector.h"
#include "election/lock.h"
#include "election/runner.h"

namespace leasehold::election {

// Which holder identities are this pod.
enum class MatchRule {
  // The holder is the pod's name, or starts with the pod's name and "_" (controller-runtime's
  // `<hostname>_<uuid>`; a pod's host name is its name). Pod names cannot contain "_", so the
  // part of a holder before its first "_" names at most one pod: no two pods of one namespace
  // match one holder.
  kPod,
  // The holder is exactly the configured identity (--identity).
  kExact,
};

// "pod", "exact": the one spelling of --observe-identity's values.
const char* MatchRuleName(MatchRule rule);

struct HolderMatch {
  MatchRule rule = MatchRule::kPod;
  // The pod's name (kPod) or the identity (kExact).
  std::string name;

  bool Matches(const std::string& holder) const;
};

// kBadConfig, without the flag's name (the caller puts it in front), when `match` could match
// the holders of two pods: an empty name, or (kPod) a name with "_" in it.
Status CheckHolderMatch(const HolderMatch& match);

// How far below the lease duration a "yes" ends after its evidence (S, see observer.cpp): one
// second for clock-rate drift, as the elector's margin, and one for a rival that tells records
// apart more coarsely than the observer does (none known). --lease-duration minus
// --renew-deadline must be at least this in observe mode.
inline constexpr Duration kObserveMargin = std::chrono::seconds(2);

struct ObserverConfig {
  HolderMatch match;
  // What the local API reports as this replica's "identity".
  std::string identity;
  // At most the electors' own lease duration: the bound takes the smaller of this and the
  // record's leaseDurationSeconds.
  Duration lease_duration = std::chrono::seconds(15);
  // The longest a "yes" runs after its evidence's send time S.
  Duration renew_deadline = std::chrono::seconds(10);
  // A Get every retry-period.
  Duration retry_period = std::chrono::seconds(2);
};

class Observer : public Runner {
 public:
  Observer(ObserverConfig config, Lock& lock, const Clock& clock);

  // Reads the lock every retry-period (at once after a watch event) until Stop().
  void Run() override;
  // One Get, and its bookkeeping; returns when the next one is due. Run() calls it in a loop;
  // tests call it directly with a FakeClock.
  MonoTime Step();
  void Stop() override;
  // Nothing to release: this agent never writes the lock.
  void AcknowledgeRelease() override;
  // A watch event may only end a "yes" (one that names another holder), never start or extend
  // one; it makes the next Get due at once.
  void Observe(const LockObservation& observation) override;
  void SetWatchActive(bool active) override;
  // The same: an observer makes no promise, so nothing waits one out.
  Snapshot Take() const override;
  Snapshot Peek() const override;
  void SetListener(std::function<void(const Snapshot&)> listener) override;
  const Gauges& gauges() const override { return gauges_; }

 private:
  // The instant the current "yes" ends, if the state (not the clock) allows one.
  std::optional<MonoTime> ClaimLocked() const;
  Snapshot SnapshotLocked(MonoTime now) const;
  void CheckTermLocked(const LockObservation& o);
  void PublishGaugesLocked();
  void Notify();

  const ObserverConfig config_;
  Lock& lock_;
  const Clock& clock_;

  mutable std::mutex mu_;
  std::condition_variable wake_;
  bool woken_ = false;
  bool stop_requested_ = false;
  // The last answered Get: what it read (as compared, see KeyOf), when it was sent, and the
  // lock type it read (a switch of `auto` starts the history over).
  std::optional<std::string> last_key_;
  MonoTime last_send_{};
  LockType last_type_ = LockType::kAuto;
  LockObservation current_;  // the last Get's record: the only one a "yes" is judged from
  // S: the send time of the last Get whose answer held another version than current_'s; none
  // when the first Get (since a type switch) already showed current_'s version.
  std::optional<MonoTime> evidence_;
  // A watch event named another holder at this instant: no "yes" until a Get sent after it.
  std::optional<MonoTime> veto_since_;
  // What /leader shows: the latest record from a Get or the watch.
  bool observed_ = false;
  LockObservation shown_;
  bool watch_active_ = false;
  Status last_error_;
  std::optional<MonoTime> last_attempt_at_;
  std::optional<MonoTime> last_progress_at_;
  std::optional<LeaderElectionRecord> term_last_;
  int64_t term_max_ = 0;
  std::string term_unreliable_reason_;
  std::function<void(const Snapshot&)> listener_;
  Gauges gauges_;
};

}  // namespace leasehold::election
