// Followers watch the lock object instead of polling it. Every event is handed to the elector as
// an observation (the expiry rule is unchanged: local time of the last change + the record's
// lease duration), and while the watch is established a follower sleeps until the exact expiry
// instead of polling every retry-period. A released lock is taken as soon as its event arrives.
// In observe mode the events go to the Observer instead (election/runner.h), which reads the
// lock at once on each.
#pragma once

#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>

#include "base/clock.h"
#include "base/status.h"
#include "election/elector.h"
#include "election/lock.h"
#include "election/runner.h"
#include "kube/watch.h"
#include "locks/lock_type.h"

namespace leasehold::cluster {

// Why a watch started over from the lock's current state rather than from the last
// resourceVersion it saw (what it missed meanwhile is only what the new watch's first event
// sums up): the label values of leasehold_watch_restarts_total (localapi/metrics.h).
inline constexpr const char kRestartExpired[] = "expired";     // 410: that version is too old
inline constexpr const char kRestartLockType[] = "lock_type";  // --lock-type=auto switched

class LockWatcher {
 public:
  // Told each start-over, with its reason (one of the kRestart* above), on the watch thread.
  using RestartObserver = std::function<void(const char* reason)>;

  // `retry` is the pause before re-watching after an error (doubling up to 16x); the watcher,
  // elector and lock must outlive this object. `on_restart` may be empty.
  LockWatcher(kube::Watcher& watcher, election::Runner& elector, const election::Lock& lock,
              const Clock& clock, Duration retry, RestartObserver on_restart = {});

  // Watches until Stop(). Run it on a thread of its own.
  void Run();
  // Thread-safe; makes Run() return promptly.
  void Stop();

 private:
  // One watch request; returns its status. `rv` is resumed from and updated.
  Status WatchOnce(const locks::LockObjectKind& kind, election::LockType type, std::string& rv);
  void Pause(Duration d);

  kube::Watcher& watcher_;
  election::Runner& elector_;
  const election::Lock& lock_;
  const Clock& clock_;
  const Duration retry_;
  const RestartObserver on_restart_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  bool warned_forbidden_ = false;
};

}  // namespace leasehold::cluster
