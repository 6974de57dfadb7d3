#include "base/clock.h"

#include <time.h>

#include <memory>
#include <mutex>
#include <random>

namespace leasehold {

BootClock::time_point BootClock::now() noexcept {
  timespec ts{};
  clock_gettime(CLOCK_BOOTTIME, &ts);
  return time_point(std::chrono::seconds(ts.tv_sec) + std::chrono::nanoseconds(ts.tv_nsec));
}

Random01 MakeRandom01() {
  auto engine = std::make_shared<std::mt19937_64>(std::random_device{}());
  auto mu = std::make_shared<std::mutex>();
  return [engine, mu]() {
    std::lock_guard<std::mutex> l(*mu);
    return std::uniform_real_distribution<double>(0.0, 1.0)(*engine);
  };
}

}  // namespace leasehold
