// Time is injected. Every interval and expiry decision uses MonoTime (CLOCK_BOOTTIME, which keeps
// counting while the machine is suspended, so a suspended leader's claim still runs out). Wall
// time (SysTime) is used only for timestamps written to the API and shown to users.
#pragma once

#include <chrono>
#include <functional>

namespace leasehold {

// A steady clock backed by CLOCK_BOOTTIME.
struct BootClock {
  using duration = std::chrono::nanoseconds;
  using rep = duration::rep;
  using period = duration::period;
  using time_point = std::chrono::time_point<BootClock>;
  static constexpr bool is_steady = true;
  static time_point now() noexcept;
};

using MonoTime = BootClock::time_point;
using SysTime = std::chrono::system_clock::time_point;
using Duration = std::chrono::nanoseconds;

class Clock {
 public:
  virtual ~Clock() = default;
  virtual MonoTime MonotonicNow() const = 0;
  virtual SysTime SystemNow() const = 0;
};

class RealClock final : public Clock {
 public:
  MonoTime MonotonicNow() const override { return BootClock::now(); }
  SysTime SystemNow() const override { return std::chrono::system_clock::now(); }
};

// Randomness is injected too: returns a uniform value in [0, 1).
using Random01 = std::function<double()>;
Random01 MakeRandom01();

// Converts a monotonic instant to the wall clock, as seen from "now" on both clocks.
inline SysTime ToSystem(const Clock& clock, MonoTime t) {
  return clock.SystemNow() +
         std::chrono::duration_cast<SysTime::duration>(t - clock.MonotonicNow());
}

}  // namespace leasehold
