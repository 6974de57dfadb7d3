// The one wake-up loop of the threads on the renew path (the elector's, the publisher's, the
// announcer's and the lock watcher's): sleep until someone notifies a condition, or until an
// instant on the injected Clock, whichever comes first.
//
// What a hand-rolled wait gets wrong, and this does not:
// * a notify that came before the wait is not lost: the condition is checked, under the lock,
//   before any wait (the notifier sets its flag under the same lock);
// * a spurious wake-up, or a notify for something else, is no wake-up: the condition is checked
//   again and the wait resumes for what is left of the deadline;
// * the deadline is the Clock's, not the condition variable's: the wait is re-armed from
//   Clock::MonotonicNow() after every wake-up, so a clock that runs ahead of or behind
//   std::chrono::steady_clock (CLOCK_BOOTTIME over a suspend; a FakeClock advanced by a test)
//   ends the wait at its own deadline, at the latest at the next wake-up;
// * a deadline already past returns at once, without waiting.
// A FakeClock does not wake a waiter by itself: a test advances it and then notifies.
#pragma once

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <mutex>

#include "base/clock.h"

namespace leasehold {

// Why WaitUntil() returned.
enum class Wake {
  kCondition,  // `condition` held (possibly already before the wait)
  kDeadline,   // `clock` reached `deadline` while `condition` did not hold
};

// Blocks on `cv`, with `lock` held (as for std::condition_variable::wait), until `condition()`
// holds or `clock`'s MonotonicNow() reaches `deadline`; MonoTime::max() means no deadline.
// `condition` is called with the lock held, first before any wait.
template <typename Condition>
Wake WaitUntil(std::condition_variable& cv, std::unique_lock<std::mutex>& lock, const Clock& clock,
               MonoTime deadline, Condition condition) {
  // One wait at most this long, so that a far deadline never overflows the steady clock's
  // arithmetic inside wait_for; the loop simply waits again.
  constexpr Duration kLongestWait = std::chrono::hours(24);
  while (!condition()) {
    if (deadline == MonoTime::max()) {
      cv.wait(lock);
      continue;
    }
    const MonoTime now = clock.MonotonicNow();
    if (now >= deadline) return Wake::kDeadline;
    cv.wait_for(lock, std::min<Duration>(deadline - now, kLongestWait));
  }
  return Wake::kCondition;
}

}  // namespace leasehold
