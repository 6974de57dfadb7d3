#include "gate/core.h"

#include <sys/wait.h>

#include <algorithm>
#include <cstring>

namespace leasehold::gate {
namespace {

std::string Ms(Duration d) {
  return std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(d).count()) + "ms";
}

std::string SignalText(int signo) {
  const char* abbrev = sigabbrev_np(signo);
  return abbrev ? std::string("SIG") + abbrev : "signal " + std::to_string(signo);
}

Action Spawn(int64_t term, bool reliable) { return Action{Action::kSpawn, 0, term, 0, reliable}; }
Action SignalTree(int signo) { return Action{Action::kSignalTree, signo, 0, 0}; }
Action Release() { return Action{Action::kRelease, 0, 0, 0}; }
Action Exit(int code) { return Action{Action::kExit, 0, 0, code}; }

}  // namespace

const char* StateName(State s) {
  switch (s) {
    case State::kWaiting:
      return "waiting";
    case State::kStarting:
      return "starting";
    case State::kRunning:
      return "running";
    case State::kStopping:
      return "stopping";
    case State::kExited:
      return "exited";
  }
  return "unknown";
}

int ExitCodeOf(int wait_status) {
  if (WIFEXITED(wait_status)) return WEXITSTATUS(wait_status);
  if (WIFSIGNALED(wait_status)) return 128 + WTERMSIG(wait_status);
  return 1;
}

Duration RenewEvery(const Timings& sidecar) {
  return std::max(sidecar.retry_period, sidecar.renew_interval);
}

Status CheckStopGrace(Duration stop_grace, Duration margin, const Timings& sidecar) {
  const Duration every = RenewEvery(sidecar);
  const Duration room = sidecar.renew_deadline - every;
  if (stop_grace + margin > room / 2) {
    const bool interval = every > sidecar.retry_period;
    return Status(Code::kBadConfig,
                  "--stop-grace " + Ms(stop_grace) + " is too long for the sidecar's timings: " +
                      "stop-grace + " + Ms(margin) + " (teardown margin) must be at most half of " +
                      "renew-deadline - " + (interval ? "renew-interval" : "retry-period") + " (" +
                      Ms(sidecar.renew_deadline) + " - " + Ms(every) +
                      "), i.e. stop-grace <= " + Ms(std::max(Duration::zero(), room / 2 - margin)) +
                      "; otherwise CMD would be stopped on every renew cycle" +
                      (interval ? " (or run the sidecar with --renew-interval=retry-period)" : ""));
  }
  return Status();
}

GateCore::GateCore(const Clock& clock, CoreOptions options, Observer observer)
    : clock_(clock), options_(options), observer_(std::move(observer)) {}

void GateCore::Enter(State to, const std::string& why) {
  const State from = state_;
  state_ = to;
  if (observer_) observer_(from, to, why);
}

MonoTime GateCore::BoundedKill(MonoTime now) const {
  MonoTime at = now + options_.stop_grace;
  if (deadline_) at = std::min(at, *deadline_ - options_.margin);
  return at;
}

void GateCore::BeginStop(const std::string& why, MonoTime kill_at, Actions& out) {
  kill_at_ = kill_at;
  kill_sent_ = false;
  const Duration in = kill_at - clock_.MonotonicNow();
  Enter(State::kStopping, why + "; " + SignalText(options_.stop_signal) + " now, SIGKILL in " +
                              Ms(std::max(Duration::zero(), in)));
  out.push_back(SignalTree(options_.stop_signal));
}

Actions GateCore::Judge() {
  Actions out;
  const Duration g = options_.stop_grace;
  const Duration m = options_.margin;
  // Each pass may change the state once; a few passes cover every chain (e.g. stopping ->
  // waiting -> starting). The bound only guards against a bug looping forever.
  for (int pass = 0; pass < 8; ++pass) {
    const MonoTime now = clock_.MonotonicNow();
    const State before = state_;
    switch (state_) {
      case State::kWaiting:
        if (fatal_code_) {
          Enter(State::kExited, fatal_why_ + " while CMD was not running");
          out.push_back(Release());
          out.push_back(Exit(*fatal_code_));
        } else if (shutdowns_ > 0) {
          Enter(State::kExited,
                "received " + SignalText(shutdown_signo_) + " while CMD was not running");
          out.push_back(Release());
          out.push_back(Exit(0));
        } else if (yes_ && now < *deadline_ - g - m) {
          running_term_ = term_;
          running_term_reliable_ = term_reliable_;
          pid_ = 0;
          child_exited_ = false;
          tree_empty_ = false;
          self_exit_ = false;
          exit_code_ = 0;
          Enter(State::kStarting, "this pod leads (term " + std::to_string(term_) +
                                      ", validUntil in " + Ms(*deadline_ - now) + ")");
          out.push_back(Spawn(term_, term_reliable_));
        }
        break;
      case State::kStarting:
        break;
      case State::kRunning:
        if (child_exited_) {
          self_exit_ = true;
          BeginStop("CMD exited by itself with code " + std::to_string(exit_code_) +
                        "; stopping what is left of its process tree",
                    BoundedKill(now), out);
        } else if (fatal_code_) {
          BeginStop(fatal_why_ + ": shutting down", BoundedKill(now), out);
        } else if (shutdowns_ > 0) {
          BeginStop("received " + SignalText(shutdown_signo_) + ": shutting down", BoundedKill(now),
                    out);
        } else if (!yes_) {
          BeginStop(no_reason_, BoundedKill(now), out);
        } else if (term_ != running_term_) {
          BeginStop("the term changed from " + std::to_string(running_term_) + " to " +
                        std::to_string(term_) + ": CMD belongs to the old one",
                    BoundedKill(now), out);
        } else if (now >= *deadline_ - g - m) {
          BeginStop("no fresh validUntil: the last one is " + Ms(*deadline_ - now) + " away",
                    *deadline_ - m, out);
        }
        break;
      case State::kStopping:
        if (child_exited_ && tree_empty_) {
          if (fatal_code_) {
            Enter(State::kExited, "CMD exited with code " + std::to_string(exit_code_) +
                                      "; releasing the lock and exiting with code " +
                                      std::to_string(*fatal_code_) + " (" + fatal_why_ + ")");
            out.push_back(Release());
            out.push_back(Exit(*fatal_code_));
          } else if (shutdowns_ > 0 || self_exit_) {
            Enter(State::kExited, "CMD exited with code " + std::to_string(exit_code_) +
                                      "; releasing the lock and exiting with its code");
            out.push_back(Release());
            out.push_back(Exit(exit_code_));
          } else {
            Enter(State::kWaiting, "CMD stopped (code " + std::to_string(exit_code_) +
                                       "); waiting until this pod leads");
          }
        } else if (!kill_sent_ && now >= kill_at_) {
          kill_sent_ = true;
          resweep_at_ = now + kKillResweep;
          out.push_back(SignalTree(SIGKILL));
        } else if (kill_sent_ && now >= resweep_at_) {
          resweep_at_ = now + kKillResweep;
          out.push_back(SignalTree(SIGKILL));
        }
        break;
      case State::kExited:
        break;
    }
    if (state_ == before) break;
  }
  return out;
}

Actions GateCore::OnLeader(const LeaderView& view) {
  const MonoTime now = clock_.MonotonicNow();
  if (view.is_leader && view.valid_until) {
    const Duration ahead =
        std::chrono::duration_cast<Duration>(*view.valid_until - clock_.SystemNow());
    yes_ = true;
    term_ = view.term;
    term_reliable_ = view.term_reliable;
    deadline_ = now + ahead;
    if (state_ == State::kStopping && !kill_sent_) {
      kill_at_ = std::min(kill_at_, *deadline_ - options_.margin);
    }
  } else {
    yes_ = false;
    no_reason_ = view.is_leader ? "the sidecar said leader without a validUntil"
                                : "the sidecar says this pod does not lead (term " +
                                      std::to_string(view.term) + ")";
    if (state_ == State::kStopping && !kill_sent_) {
      kill_at_ = std::min(kill_at_, now + options_.stop_grace);
    }
  }
  return Judge();
}

Actions GateCore::OnSidecarLost(const std::string& why) {
  yes_ = false;
  no_reason_ = why;
  if (state_ == State::kStopping && !kill_sent_) {
    kill_at_ = std::min(kill_at_, clock_.MonotonicNow() + options_.stop_grace);
  }
  return Judge();
}

Actions GateCore::OnSpawned(int pid) {
  if (state_ != State::kStarting) return {};
  pid_ = pid;
  Enter(State::kRunning,
        "started CMD, pid " + std::to_string(pid) +
            ", LEASEHOLD_TERM=" + std::to_string(running_term_) +
            ", LEASEHOLD_TERM_RELIABLE=" + (running_term_reliable_ ? "true" : "false"));
  return Judge();
}

Actions GateCore::OnSpawnFailed(const std::string& why) {
  if (state_ != State::kStarting) return {};
  Enter(State::kExited, "cannot start CMD: " + why);
  return {Release(), Exit(1)};
}

Actions GateCore::OnChildExited(int wait_status) {
  if (state_ != State::kRunning && state_ != State::kStopping) return {};
  child_exited_ = true;
  exit_code_ = ExitCodeOf(wait_status);
  return Judge();
}

Actions GateCore::OnTreeEmpty() {
  if (!child_exited_) return {};
  tree_empty_ = true;
  return Judge();
}

Actions GateCore::OnShutdown(int signo) {
  ++shutdowns_;
  if (shutdowns_ == 1) shutdown_signo_ = signo;
  if (state_ == State::kStopping && !kill_sent_) {
    const MonoTime now = clock_.MonotonicNow();
    // A second signal means "now": the operator or supervisor will not wait the grace.
    kill_at_ = std::min(kill_at_, shutdowns_ > 1 ? now : now + options_.stop_grace);
  }
  return Judge();
}

Actions GateCore::OnFatal(const std::string& why, int exit_code) {
  if (state_ == State::kExited) return {};
  if (!fatal_code_) {
    fatal_code_ = exit_code;
    fatal_why_ = why;
  }
  if (state_ == State::kStopping && !kill_sent_) {
    kill_at_ = std::min(kill_at_, clock_.MonotonicNow() + options_.stop_grace);
  }
  return Judge();
}

Actions GateCore::OnTick() { return Judge(); }

std::optional<MonoTime> GateCore::NextDeadline() const {
  switch (state_) {
    case State::kRunning:
      if (deadline_) return *deadline_ - options_.stop_grace - options_.margin;
      return std::nullopt;
    case State::kStopping:
      if (child_exited_ && tree_empty_) return std::nullopt;
      return kill_sent_ ? resweep_at_ : kill_at_;
    default:
      return std::nullopt;
  }
}

}  // namespace leasehold::gate
