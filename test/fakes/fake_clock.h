// A clock that moves only when told to, for tests (and the fuzz targets): production code gets a
// RealClock. Thread-safe, so tests may read it from a server thread.
#pragma once

#include <chrono>
#include <mutex>

#include "base/clock.h"

namespace leasehold {

class FakeClock final : public Clock {
 public:
  // Starts at 1 h of monotonic time and 2026-01-02T03:00:00Z on the wall clock.
  FakeClock() : mono_(std::chrono::hours(1)), sys_(std::chrono::seconds(1767322800)) {}
  MonoTime MonotonicNow() const override {
    std::lock_guard<std::mutex> l(mu_);
    return mono_;
  }
  SysTime SystemNow() const override {
    std::lock_guard<std::mutex> l(mu_);
    return sys_;
  }
  // Moves both clocks forward together.
  void Advance(Duration d) {
    std::lock_guard<std::mutex> l(mu_);
    mono_ += d;
    sys_ += std::chrono::duration_cast<SysTime::duration>(d);
  }
  // Moves only the wall clock, e.g. to model skew or an NTP step.
  void StepWall(Duration d) {
    std::lock_guard<std::mutex> l(mu_);
    sys_ += std::chrono::duration_cast<SysTime::duration>(d);
  }

 private:
  mutable std::mutex mu_;
  MonoTime mono_;
  SysTime sys_;
};

}  // namespace leasehold
