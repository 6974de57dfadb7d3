#include "app/signals.h"

#include <signal.h>
#include <spdlog/spdlog.h>

#include <cerrno>
#include <cstdlib>

namespace leasehold::app {
namespace {

sigset_t TerminationSignals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  return set;
}

}  // namespace

const char* SignalName(int signo) {
  switch (signo) {
    case SIGTERM:
      return "SIGTERM";
    case SIGINT:
      return "SIGINT";
    default:
      return "a signal";
  }
}

void BlockTerminationSignals() {
  const sigset_t set = TerminationSignals();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

void FirstSignal::operator()(int signo) {
  std::lock_guard<std::mutex> l(mu_);
  if (armed_) {
    armed_(signo);
  } else if (unarmed_) {
    unarmed_(signo);
  }
}

void FirstSignal::Arm(Callback armed) {
  std::lock_guard<std::mutex> l(mu_);
  armed_ = std::move(armed);
}

void FirstSignal::Disarm() {
  std::lock_guard<std::mutex> l(mu_);
  armed_ = nullptr;
}

SignalWatcher::SignalWatcher(Callback on_first, Callback on_second)
    : on_first_(std::move(on_first)), on_second_(std::move(on_second)) {
  thread_ = std::thread([this] { Loop(); });
}

SignalWatcher::~SignalWatcher() {
  done_ = true;
  thread_.join();
}

void SignalWatcher::ExitNow(int signo) {
  spdlog::warn("received {} again while stopping: exiting now without releasing the lock",
               SignalName(signo));
  spdlog::default_logger()->flush();
  std::_Exit(1);
}

void SignalWatcher::Loop() {
  const sigset_t set = TerminationSignals();
  // Polls `done_` between waits: the only way to end a sigtimedwait without a signal.
  const timespec tick{0, 100L * 1000 * 1000};
  int seen = 0;
  while (!done_) {
    const int signo = sigtimedwait(&set, nullptr, &tick);
    if (signo < 0) continue;  // EAGAIN (timeout) or EINTR
    ++seen;
    if (seen == 1) {
      if (on_first_) on_first_(signo);
    } else if (on_second_) {
      on_second_(signo);
    }
  }
}

}  // namespace leasehold::app
