#include "app/signals.h"

#include <doctest/doctest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <vector>

namespace leasehold::app {
namespace {

// Records callbacks; Wait blocks until `n` arrived (the timeout only guards against a hang).
class Recorder {
 public:
  SignalWatcher::Callback Hook(int which) {
    return [this, which](int signo) {
      std::lock_guard<std::mutex> l(mu_);
      calls_.push_back({which, signo});
      cv_.notify_all();
    };
  }
  std::vector<std::pair<int, int>> Wait(size_t n) {
    std::unique_lock<std::mutex> l(mu_);
    cv_.wait_for(l, std::chrono::seconds(30), [&] { return calls_.size() >= n; });
    return calls_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::pair<int, int>> calls_;
};

TEST_CASE("SignalWatcher: first signal stops, later ones take the second path") {
  // No other thread exists in this test binary, so blocking here blocks everywhere.
  BlockTerminationSignals();
  Recorder rec;
  {
    SignalWatcher watcher(rec.Hook(1), rec.Hook(2));
    REQUIRE(kill(getpid(), SIGTERM) == 0);
    CHECK(rec.Wait(1) == std::vector<std::pair<int, int>>{{1, SIGTERM}});
    REQUIRE(kill(getpid(), SIGINT) == 0);
    CHECK(rec.Wait(2) == std::vector<std::pair<int, int>>{{1, SIGTERM}, {2, SIGINT}});
    REQUIRE(kill(getpid(), SIGTERM) == 0);
    CHECK(rec.Wait(3).size() == 3);
  }  // joins
  sigset_t pending;
  sigpending(&pending);
  CHECK_FALSE(sigismember(&pending, SIGTERM));
  CHECK_FALSE(sigismember(&pending, SIGINT));
}

TEST_CASE("SignalName") {
  CHECK(std::string(SignalName(SIGTERM)) == "SIGTERM");
  CHECK(std::string(SignalName(SIGINT)) == "SIGINT");
}

}  // namespace
}  // namespace leasehold::app
