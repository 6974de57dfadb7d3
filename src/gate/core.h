// The gate's decisions as a pure state machine: events in (what the sidecar said, what the child
// did, signals, the clock), actions out (spawn, signal the process tree, release, exit). No
// sockets, no processes; time comes from the injected Clock, so every edge is tested with a
// FakeClock (test/gate/core_test.cpp). The I/O shell (gate.cpp) feeds it and carries out what it
// returns.
//
// What a "yes" is worth. Each yes (an SSE event or a GET /leader answer with isLeader true and a
// validUntil) is turned, when it is received, into a CLOCK_BOOTTIME deadline:
//   deadline = MonotonicNow() + (validUntil - SystemNow())
// so that timers never run on the wall clock, and a queued validForMs never counts. Only the
// newest yes received counts (even if an older one named a later instant). A "no" (isLeader
// false, or a yes without validUntil), a lost stream, a refused connection or a timed-out
// answer ends the yes at once, but the deadline of the last yes still bounds the SIGKILL.
//
// Let G = stop-grace, M = margin (kTeardownMargin, 250 ms: time for the kernel to tear the
// process tree down after SIGKILL, and for our own wake-up latency), D = deadline.
//
//   state     event / condition                          -> state     actions
//   waiting   shutdown requested                         -> exited    release, exit 0
//   waiting   fatal(code)                                -> exited    release, exit(code)
//   waiting   yes and now < D - G - M                    -> starting  spawn(term)
//   waiting   yes but now >= D - G - M                      (stays)   (too close to run at all)
//   starting  spawned(pid)                               -> running   (then re-judged at once)
//   starting  spawn failed                               -> exited    release, exit 1
//   running   CMD exited by itself (status s)            -> stopping  signal tree(stop), kill at
//                                                                     min(D - M, now + G): its
//                                                                     descendants may be left
//   running   shutdown requested, or fatal(code)         -> stopping  signal tree(stop), kill at
//                                                                     min(D - M, now + G)
//   running   no / lost / refused                        -> stopping  the same
//   running   yes of another term                        -> stopping  the same (one CMD, one term)
//   running   now >= D - G - M (no fresh yes arrived)    -> stopping  signal tree(stop), kill at
//                                                                     D - M
//   stopping  now >= kill-at                                (stays)   signal tree(SIGKILL), then
//                                                                     again every 20 ms until
//                                                                     the tree is gone
//   stopping  no / lost / shutdown / fatal                  (stays)   kill-at = min(kill-at,
//                                                                     now + G); a second
//                                                                     shutdown: kill-at = now
//   stopping  CMD and all its descendants gone,
//             after a fatal(code)                        -> exited    release, exit(code)
//   stopping  the same, after shutdown or CMD's own exit -> exited    release, exit(CMD's code)
//   stopping  the same, otherwise                        -> waiting   (then re-judged at once)
//   exited    anything                                      (stays)
//
// fatal(code) is a configuration error found at run time (the sidecar's timings changed so that
// --stop-grace no longer fits them): the gate leaves as on SIGTERM, but with `code`, and never
// starts CMD again. It is no signal: a SIGTERM after it is the first one, not the second.
//
// So CMD is never running at D - M: by then it got SIGKILL, and M covers the teardown. Every
// transition is reported to the observer with its reason.
#pragma once

#include <csignal>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/status.h"
#include "base/timings.h"

namespace leasehold::gate {

enum class State { kWaiting, kStarting, kRunning, kStopping, kExited };
const char* StateName(State s);  // "waiting", "starting", ...

// Time for SIGKILL to take the process tree down, plus the gate's own wake-up latency: SIGKILL
// is sent this long before the deadline.
inline constexpr Duration kTeardownMargin = std::chrono::milliseconds(250);
// After SIGKILL, the tree is swept again this often (re-parented descendants, late forks).
inline constexpr Duration kKillResweep = std::chrono::milliseconds(20);

struct CoreOptions {
  Duration stop_grace = std::chrono::seconds(3);
  Duration margin = kTeardownMargin;
  int stop_signal = SIGTERM;
};

// What the sidecar said, as parsed from one event or answer.
struct LeaderView {
  bool is_leader = false;
  int64_t term = 0;
  std::optional<SysTime> valid_until;
  // termReliable: whether `term` is a fencing token. Absent (an older sidecar): false, the safe
  // reading.
  bool term_reliable = false;
};

struct Action {
  enum Kind { kSpawn, kSignalTree, kRelease, kExit } kind;
  int signo = 0;               // kSignalTree
  int64_t term = 0;            // kSpawn: LEASEHOLD_TERM
  int exit_code = 0;           // kExit
  bool term_reliable = false;  // kSpawn: LEASEHOLD_TERM_RELIABLE
  bool operator==(const Action& o) const {
    return kind == o.kind && signo == o.signo && term == o.term && exit_code == o.exit_code &&
           term_reliable == o.term_reliable;
  }
};
using Actions = std::vector<Action>;

// The exit code of a child from its waitpid() status: its own code, or 128 + n when killed by
// signal n (as shells report it).
int ExitCodeOf(int wait_status);

// The sidecar's pause between successful renews: its renew interval, or retry-period when it
// sent none (an older sidecar, which renews every retry-period) or a shorter one.
Duration RenewEvery(const Timings& sidecar);

// stop-grace + margin must fit in half of renew-deadline - RenewEvery, the least time a fresh
// validUntil lies ahead of a renew's answer: the other half is left for the renew's own
// latency. Otherwise the gate would stop CMD on every renew cycle. kBadConfig, naming the flag.
Status CheckStopGrace(Duration stop_grace, Duration margin, const Timings& sidecar);

class GateCore {
 public:
  // from, to, why; called on every change of state.
  using Observer = std::function<void(State from, State to, const std::string& why)>;

  GateCore(const Clock& clock, CoreOptions options, Observer observer = nullptr);

  // Each returns the actions to carry out now, in order.
  Actions OnLeader(const LeaderView& view);
  // The stream ended, the connection was refused or an answer timed out: "not leader" now.
  Actions OnSidecarLost(const std::string& why);
  Actions OnSpawned(int pid);
  Actions OnSpawnFailed(const std::string& why);
  // The direct child was reaped (waitpid status).
  Actions OnChildExited(int wait_status);
  // After OnChildExited: no process of the tree is left (waitpid says ECHILD).
  Actions OnTreeEmpty();
  // SIGTERM/SIGINT (signo for the log).
  Actions OnShutdown(int signo);
  // A configuration error found at run time (see fatal above): stop CMD as on SIGTERM, release,
  // exit with `exit_code`. The first call counts.
  Actions OnFatal(const std::string& why, int exit_code);
  // Call when NextDeadline() has passed (or at any time: it acts only on what is due).
  Actions OnTick();

  // When OnTick() next has something to do; nullopt when only an event can change anything.
  std::optional<MonoTime> NextDeadline() const;

  State state() const { return state_; }
  // The deadline of the newest yes, nullopt before the first.
  std::optional<MonoTime> deadline() const { return deadline_; }
  bool has_yes() const { return yes_; }
  int64_t running_term() const { return running_term_; }
  bool running_term_reliable() const { return running_term_reliable_; }
  int pid() const { return pid_; }
  // While stopping: when SIGKILL is (or was) due.
  MonoTime kill_at() const { return kill_at_; }

 private:
  Actions Judge();
  void Enter(State to, const std::string& why);
  void BeginStop(const std::string& why, MonoTime kill_at, Actions& out);
  MonoTime BoundedKill(MonoTime now) const;

  const Clock& clock_;
  CoreOptions options_;
  Observer observer_;
  State state_ = State::kWaiting;

  bool yes_ = false;
  int64_t term_ = 0;
  bool term_reliable_ = false;
  std::optional<MonoTime> deadline_;
  std::string no_reason_ = "no answer from the sidecar yet";

  int pid_ = 0;
  int64_t running_term_ = 0;
  bool running_term_reliable_ = false;
  bool child_exited_ = false;
  int exit_code_ = 0;
  bool tree_empty_ = false;
  bool self_exit_ = false;
  int shutdowns_ = 0;
  int shutdown_signo_ = 0;
  std::optional<int> fatal_code_;
  std::string fatal_why_;
  MonoTime kill_at_{};
  bool kill_sent_ = false;
  MonoTime resweep_at_{};
};

}  // namespace leasehold::gate
