// WaitUntil, the one wake-up loop (base/wake.h), on a FakeClock: the waiter runs on a thread of
// its own, and the test waits (with a real-time bound, so that a hang fails instead of blocking
// the run) for the state it counts from: the condition evaluated, the waiter returned. Nothing
// here sleeps to let something happen. Also run under TSan (scripts/test.sh).
#include "base/wake.h"

#include <doctest/doctest.h>

#include <condition_variable>
#include <future>
#include <mutex>
#include <optional>

#include "fakes/fake_clock.h"

namespace leasehold {
namespace {

using namespace std::chrono_literals;

// Long enough never to be reached by a test that passes, short enough to end one that hangs.
constexpr auto kBound = 10s;

// A waiter in WaitUntil on its own thread, and what it shares with the notifier.
struct Waiter {
  explicit Waiter(FakeClock& c) : clock(c) {}
  ~Waiter() {
    // Whatever a failed check left behind: let the waiter go before its future is destroyed.
    {
      std::lock_guard<std::mutex> l(mu);
      flag = true;
    }
    cv.notify_all();
  }

  // Starts waiting until `deadline`.
  void Start(MonoTime deadline) {
    result = std::async(std::launch::async, [this, deadline] {
      std::unique_lock<std::mutex> l(mu);
      return WaitUntil(cv, l, clock, deadline, [this] {
        ++evaluations;
        evaluated.notify_all();
        return flag;
      });
    });
  }
  // Blocks until the condition was evaluated `n` times in all (false on the real-time bound).
  bool EvaluatedAtLeast(int n) {
    std::unique_lock<std::mutex> l(mu);
    return evaluated.wait_for(l, kBound, [&] { return evaluations >= n; });
  }
  int Evaluations() {
    std::lock_guard<std::mutex> l(mu);
    return evaluations;
  }
  // The waiter's answer once it returned; nullopt while it still waits after `within`.
  std::optional<Wake> Returned(std::chrono::milliseconds within = std::chrono::milliseconds(0)) {
    if (result.wait_for(within) != std::future_status::ready) return std::nullopt;
    return result.get();
  }
  // Sets the flag (or not: a spurious wake-up) and notifies, as the notifier does.
  void Notify(bool set_flag) {
    {
      std::lock_guard<std::mutex> l(mu);
      if (set_flag) flag = true;
    }
    cv.notify_all();
  }

  FakeClock& clock;
  std::mutex mu;
  std::condition_variable cv;
  std::condition_variable evaluated;
  bool flag = false;
  int evaluations = 0;
  std::future<Wake> result;
};

TEST_CASE("WaitUntil: a notify before the wait is not lost, whatever the deadline") {
  for (const bool has_deadline : {true, false}) {
    CAPTURE(has_deadline);
    FakeClock clock;
    Waiter w(clock);
    w.Notify(/*set_flag=*/true);
    w.Start(has_deadline ? clock.MonotonicNow() + 1h : MonoTime::max());
    CHECK(w.Returned(kBound) == Wake::kCondition);
    CHECK(w.Evaluations() == 1);  // checked once, before any wait
  }
}

TEST_CASE("WaitUntil: a deadline already past returns at once") {
  struct Case {
    const char* name;
    Duration past_by;
  };
  for (const Case& c : {Case{"the deadline is now", 0ns}, Case{"an hour ago", 1h}}) {
    CAPTURE(c.name);
    FakeClock clock;
    Waiter w(clock);
    w.Start(clock.MonotonicNow() - c.past_by);
    CHECK(w.Returned(kBound) == Wake::kDeadline);
    CHECK(w.Evaluations() == 1);
  }
}

TEST_CASE("WaitUntil: a spurious wake-up is no wake-up; the real one is") {
  for (const bool has_deadline : {true, false}) {
    CAPTURE(has_deadline);
    FakeClock clock;
    Waiter w(clock);
    w.Start(has_deadline ? clock.MonotonicNow() + 1h : MonoTime::max());
    // Evaluated, under the lock it releases only inside the wait: from here a notify reaches it.
    REQUIRE(w.EvaluatedAtLeast(1));
    // Notified with the flag unset, as a spurious wake-up would be: it checks again, waits on.
    w.Notify(/*set_flag=*/false);
    REQUIRE(w.EvaluatedAtLeast(2));
    // The clock moved, but not to the deadline: it checks again, waits on.
    clock.Advance(59min);
    w.Notify(/*set_flag=*/false);
    REQUIRE(w.EvaluatedAtLeast(3));
    // A waiter that had returned on either would have said kDeadline, or never checked again.
    w.Notify(/*set_flag=*/true);
    CHECK(w.Returned(kBound) == Wake::kCondition);
    CHECK(w.Evaluations() >= 4);  // more if a real spurious wake-up came too
  }
}

TEST_CASE("WaitUntil: the deadline is the injected clock's, judged at every wake-up") {
  FakeClock clock;
  Waiter w(clock);
  w.Start(clock.MonotonicNow() + 1h);
  REQUIRE(w.EvaluatedAtLeast(1));
  // The fake clock reaches the deadline; the next wake-up (here a notify without the flag) sees
  // it. The steady clock the condition variable waits on has hardly moved.
  clock.Advance(1h);
  w.Notify(/*set_flag=*/false);
  CHECK(w.Returned(kBound) == Wake::kDeadline);
}

TEST_CASE("WaitUntil: on the real clock, a deadline ends the wait on its own") {
  RealClock clock;
  std::mutex mu;
  std::condition_variable cv;
  std::unique_lock<std::mutex> l(mu);
  const MonoTime deadline = clock.MonotonicNow() + 50ms;
  CHECK(WaitUntil(cv, l, clock, deadline, [] { return false; }) == Wake::kDeadline);
  CHECK(clock.MonotonicNow() >= deadline);  // never early (it may be late under load)
}

}  // namespace
}  // namespace leasehold
