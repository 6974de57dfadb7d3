// SIGTERM/SIGINT are taken synchronously by one thread (sigtimedwait), never by a handler, so
// the reaction may lock mutexes and log.
#pragma once

#include <atomic>
#include <functional>
#include <mutex>
#include <thread>

namespace leasehold::app {

// "SIGTERM", "SIGINT", for logs.
const char* SignalName(int signo);

// Blocks SIGTERM and SIGINT in the calling thread. Threads created later inherit the mask, so
// call it first in main, before any thread exists (libcurl's resolver and httplib's pools
// included); otherwise such a thread could take the signal and die of it.
void BlockTerminationSignals();

// Waits for SIGTERM/SIGINT on its own thread; they must be blocked in every thread.
// The first calls on_first (Elector::Stop: stop saying "yes", release as configured).
// Every later one calls on_second: by default it logs and _exit(1)s at once, without release,
// for an operator pressing Ctrl-C twice or a supervisor that means it.
// The first signal's reaction, which changes once start-up has built an elector. Until Arm(),
// and again after Disarm(), it calls `unarmed` (Main: log and exit at once; no lock is held
// before the elector runs, so there is nothing to release, and start-up may be stuck in I/O).
// In between it calls the armed callback (Elector::Stop). Disarm() waits for a call in progress,
// so the armed callback never outlives what it refers to. Thread-safe.
class FirstSignal {
 public:
  using Callback = std::function<void(int signo)>;
  explicit FirstSignal(Callback unarmed) : unarmed_(std::move(unarmed)) {}
  void operator()(int signo);
  void Arm(Callback armed);
  void Disarm();

 private:
  std::mutex mu_;
  Callback unarmed_;
  Callback armed_;
};

class SignalWatcher {
 public:
  using Callback = std::function<void(int signo)>;
  explicit SignalWatcher(Callback on_first, Callback on_second = ExitNow);
  ~SignalWatcher();  // stops watching and joins (within ~100 ms)
  SignalWatcher(const SignalWatcher&) = delete;
  SignalWatcher& operator=(const SignalWatcher&) = delete;

  static void ExitNow(int signo);

 private:
  void Loop();

  Callback on_first_;
  Callback on_second_;
  std::atomic<bool> done_{false};
  std::thread thread_;
};

}  // namespace leasehold::app
