// Every edge of the gate's state machine (src/gate/core.h), with a FakeClock: table-driven,
// each case a sequence of events and the state and actions the last one must produce.
#include "gate/core.h"

#include <doctest/doctest.h>
#include <sys/wait.h>

#include <functional>
#include <string>
#include <vector>

#include "fakes/fake_clock.h"

namespace leasehold::gate {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr Duration kGrace = seconds(1);
constexpr Duration kMargin = kTeardownMargin;

// waitpid statuses.
int Exited(int code) { return code << 8; }
int Killed(int signo) { return signo; }

struct Harness {
  FakeClock clock;
  std::vector<std::string> transitions;  // "from->to"
  GateCore core{clock, CoreOptions{kGrace, kMargin, SIGTERM},
                [this](State from, State to, const std::string&) {
                  transitions.push_back(std::string(StateName(from)) + "->" + StateName(to));
                }};
  MonoTime t0 = clock.MonotonicNow();

  LeaderView Yes(int64_t term, Duration valid_for, bool term_reliable = false) const {
    return LeaderView{true, term,
                      clock.SystemNow() + std::chrono::duration_cast<SysTime::duration>(valid_for),
                      term_reliable};
  }
  // Waiting -> starting -> running for term 4 with a yes valid for 10 s.
  void Run() {
    core.OnLeader(Yes(4, seconds(10)));
    core.OnSpawned(100);
  }
};

using Step = std::function<Actions(Harness&)>;

Action Spawn(int64_t term, bool reliable = false) {
  return Action{Action::kSpawn, 0, term, 0, reliable};
}
Action Sig(int signo) { return Action{Action::kSignalTree, signo, 0, 0}; }
Action Release() { return Action{Action::kRelease, 0, 0, 0}; }
Action Exit(int code) { return Action{Action::kExit, 0, 0, code}; }

std::string Show(const Actions& as) {
  std::string out;
  for (const Action& a : as) {
    out += "[" + std::to_string(a.kind) + " sig=" + std::to_string(a.signo) +
           " term=" + std::to_string(a.term) + " code=" + std::to_string(a.exit_code) +
           " reliable=" + std::to_string(a.term_reliable) + "]";
  }
  return out;
}

TEST_CASE("GateCore: every edge") {
  struct Case {
    const char* name;
    std::vector<Step> steps;
    State state;
    Actions last;  // what the last step returned
    // When SIGKILL is due, relative to t0 (checked while stopping and not yet killed).
    std::optional<Duration> kill_at = std::nullopt;
  };
  const Step run = [](Harness& h) {
    h.Run();
    return Actions{};
  };
  const std::vector<Case> cases = {
      // waiting
      {"waiting + yes -> starting, spawn with the term",
       {[](Harness& h) { return h.core.OnLeader(h.Yes(7, seconds(10))); }},
       State::kStarting,
       {Spawn(7)}},
      {"waiting + yes with a reliable term -> starting, spawn with LEASEHOLD_TERM_RELIABLE",
       {[](Harness& h) { return h.core.OnLeader(h.Yes(7, seconds(10), true)); }},
       State::kStarting,
       {Spawn(7, true)}},
      {"waiting + yes (reliable) too close to run, then yes (unreliable): the spawning view counts",
       {[](Harness& h) { return h.core.OnLeader(h.Yes(7, kGrace + kMargin, true)); },
        [](Harness& h) { return h.core.OnLeader(h.Yes(7, seconds(10), false)); }},
       State::kStarting,
       {Spawn(7, false)}},
      {"waiting + fatal -> exited: release, exit with its code",
       {[](Harness& h) { return h.core.OnFatal("timings", 2); }},
       State::kExited,
       {Release(), Exit(2)}},
      {"waiting + yes too close to its validUntil to run at all: stays waiting",
       {[](Harness& h) { return h.core.OnLeader(h.Yes(7, kGrace + kMargin)); }},
       State::kWaiting,
       {}},
      {"waiting + yes without validUntil: no yes",
       {[](Harness& h) {
         return h.core.OnLeader(LeaderView{true, 7, std::nullopt});
       }},
       State::kWaiting,
       {}},
      {"waiting + no",
       {[](Harness& h) {
         return h.core.OnLeader(LeaderView{false, 7, std::nullopt});
       }},
       State::kWaiting,
       {}},
      {"waiting + lost",
       {[](Harness& h) { return h.core.OnSidecarLost("refused"); }},
       State::kWaiting,
       {}},
      {"waiting + shutdown -> exited: release, exit 0",
       {[](Harness& h) { return h.core.OnShutdown(SIGTERM); }},
       State::kExited,
       {Release(), Exit(0)}},
      {"waiting + tick: nothing due",
       {[](Harness& h) { return h.core.OnTick(); }},
       State::kWaiting,
       {}},
      // starting
      {"starting + spawned -> running",
       {[](Harness& h) { return h.core.OnLeader(h.Yes(4, seconds(10))); },
        [](Harness& h) { return h.core.OnSpawned(100); }},
       State::kRunning,
       {}},
      {"starting + spawn failed -> exited: release, exit 1",
       {[](Harness& h) { return h.core.OnLeader(h.Yes(4, seconds(10))); },
        [](Harness& h) { return h.core.OnSpawnFailed("fork: EAGAIN"); }},
       State::kExited,
       {Release(), Exit(1)}},
      {"starting + shutdown, then spawned -> stopping at once",
       {[](Harness& h) { return h.core.OnLeader(h.Yes(4, seconds(10))); },
        [](Harness& h) { return h.core.OnShutdown(SIGTERM); },
        [](Harness& h) { return h.core.OnSpawned(100); }},
       State::kStopping,
       {Sig(SIGTERM)},
       kGrace},
      // running
      {"running + fresh yes: stays running",
       {run, [](Harness& h) { return h.core.OnLeader(h.Yes(4, seconds(10))); }},
       State::kRunning,
       {}},
      {"running + tick before the stop point: nothing",
       {run,
        [](Harness& h) {
          h.clock.Advance(seconds(10) - kGrace - kMargin - milliseconds(1));
          return h.core.OnTick();
        }},
       State::kRunning,
       {}},
      {"running + tick at validUntil - grace - margin -> stopping, SIGKILL at validUntil - margin",
       {run,
        [](Harness& h) {
          h.clock.Advance(seconds(10) - kGrace - kMargin);
          return h.core.OnTick();
        }},
       State::kStopping,
       {Sig(SIGTERM)},
       seconds(10) - kMargin},
      {"running + no -> stopping, SIGKILL after the grace",
       {run,
        [](Harness& h) {
          return h.core.OnLeader(LeaderView{false, 4, std::nullopt});
        }},
       State::kStopping,
       {Sig(SIGTERM)},
       kGrace},
      {"running + lost stream -> stopping, SIGKILL after the grace",
       {run, [](Harness& h) { return h.core.OnSidecarLost("the stream ended"); }},
       State::kStopping,
       {Sig(SIGTERM)},
       kGrace},
      {"running + lost after a late wake-up: SIGKILL still at validUntil - margin",
       {run,
        [](Harness& h) {
          h.clock.Advance(seconds(9));
          return h.core.OnSidecarLost("refused");
        }},
       State::kStopping,
       {Sig(SIGTERM)},
       seconds(10) - kMargin},
      {"running + newest yes with a nearer validUntil counts: stop at once",
       {run, [](Harness& h) { return h.core.OnLeader(h.Yes(4, kGrace)); }},
       State::kStopping,
       {Sig(SIGTERM)},
       kGrace - kMargin},
      {"running + yes of another term -> stopping",
       {run, [](Harness& h) { return h.core.OnLeader(h.Yes(5, seconds(10))); }},
       State::kStopping,
       {Sig(SIGTERM)},
       kGrace},
      {"running + shutdown -> stopping",
       {run, [](Harness& h) { return h.core.OnShutdown(SIGTERM); }},
       State::kStopping,
       {Sig(SIGTERM)},
       kGrace},
      {"running + fatal -> stopping, SIGKILL after the grace",
       {run, [](Harness& h) { return h.core.OnFatal("timings", 2); }},
       State::kStopping,
       {Sig(SIGTERM)},
       kGrace},
      {"running + fatal late: SIGKILL still at validUntil - margin",
       {run,
        [](Harness& h) {
          h.clock.Advance(seconds(9));
          return h.core.OnFatal("timings", 2);
        }},
       State::kStopping,
       {Sig(SIGTERM)},
       seconds(10) - kMargin},
      {"running + CMD exits by itself -> stopping what is left",
       {run, [](Harness& h) { return h.core.OnChildExited(Exited(3)); }},
       State::kStopping,
       {Sig(SIGTERM)},
       kGrace},
      {"running + spawned again: ignored",
       {run, [](Harness& h) { return h.core.OnSpawned(101); }},
       State::kRunning,
       {}},
      // stopping
      {"stopping: CMD's own exit, tree empty -> exited with its code",
       {run, [](Harness& h) { return h.core.OnChildExited(Exited(3)); },
        [](Harness& h) { return h.core.OnTreeEmpty(); }},
       State::kExited,
       {Release(), Exit(3)}},
      {"stopping: CMD killed by a signal of its own: 128 + n",
       {run, [](Harness& h) { return h.core.OnChildExited(Killed(SIGSEGV)); },
        [](Harness& h) { return h.core.OnTreeEmpty(); }},
       State::kExited,
       {Release(), Exit(128 + SIGSEGV)}},
      {"stopping after shutdown: tree gone -> exited with CMD's code",
       {run, [](Harness& h) { return h.core.OnShutdown(SIGTERM); },
        [](Harness& h) { return h.core.OnChildExited(Killed(SIGTERM)); },
        [](Harness& h) { return h.core.OnTreeEmpty(); }},
       State::kExited,
       {Release(), Exit(128 + SIGTERM)}},
      {"stopping after a fatal: tree gone -> exited with the fatal code, not CMD's",
       {run, [](Harness& h) { return h.core.OnFatal("timings", 2); },
        [](Harness& h) { return h.core.OnChildExited(Exited(0)); },
        [](Harness& h) { return h.core.OnTreeEmpty(); }},
       State::kExited,
       {Release(), Exit(2)}},
      {"stopping after a lost stream + fatal: tree gone -> exited, CMD never again",
       {run, [](Harness& h) { return h.core.OnSidecarLost("the stream ended"); },
        [](Harness& h) { return h.core.OnFatal("timings", 2); },
        [](Harness& h) { return h.core.OnLeader(h.Yes(4, seconds(10))); },
        [](Harness& h) { return h.core.OnChildExited(Killed(SIGTERM)); },
        [](Harness& h) { return h.core.OnTreeEmpty(); }},
       State::kExited,
       {Release(), Exit(2)}},
      {"stopping (timer) + fatal: SIGKILL moves to now + grace when sooner",
       {run,
        [](Harness& h) {
          h.clock.Advance(seconds(10) - kGrace - kMargin);
          return h.core.OnTick();
        },
        [](Harness& h) { return h.core.OnFatal("timings", 2); }},
       State::kStopping,
       {},
       seconds(10) - kMargin},  // D - M = now + 1 s = now + grace
      {"stopping (fatal) + shutdown: a first signal, not a second: SIGKILL not now",
       {run, [](Harness& h) { return h.core.OnFatal("timings", 2); },
        [](Harness& h) {
          h.clock.Advance(milliseconds(300));
          return h.core.OnShutdown(SIGTERM);
        }},
       State::kStopping,
       {},
       kGrace},
      {"stopping (fatal) + shutdown, tree gone: still the fatal code",
       {run, [](Harness& h) { return h.core.OnFatal("timings", 2); },
        [](Harness& h) { return h.core.OnShutdown(SIGTERM); },
        [](Harness& h) { return h.core.OnChildExited(Killed(SIGTERM)); },
        [](Harness& h) { return h.core.OnTreeEmpty(); }},
       State::kExited,
       {Release(), Exit(2)}},
      {"stopping after a no: tree gone -> waiting, no release",
       {run,
        [](Harness& h) {
          return h.core.OnLeader(LeaderView{false, 4, std::nullopt});
        },
        [](Harness& h) { return h.core.OnChildExited(Killed(SIGTERM)); },
        [](Harness& h) { return h.core.OnTreeEmpty(); }},
       State::kWaiting,
       {}},
      {"stopping after a term change: tree gone -> waiting -> starting in the new term",
       {run, [](Harness& h) { return h.core.OnLeader(h.Yes(5, seconds(10))); },
        [](Harness& h) { return h.core.OnChildExited(Exited(0)); },
        [](Harness& h) { return h.core.OnTreeEmpty(); }},
       State::kStarting,
       {Spawn(5)}},
      {"stopping: CMD exited, descendants left: stays stopping",
       {run, [](Harness& h) { return h.core.OnSidecarLost("x"); },
        [](Harness& h) { return h.core.OnChildExited(Exited(0)); }},
       State::kStopping,
       {},
       kGrace},
      {"stopping: tree empty before CMD's exit is not believed",
       {run, [](Harness& h) { return h.core.OnSidecarLost("x"); },
        [](Harness& h) { return h.core.OnTreeEmpty(); }},
       State::kStopping,
       {},
       kGrace},
      {"stopping + tick before kill-at: nothing",
       {run, [](Harness& h) { return h.core.OnSidecarLost("x"); },
        [](Harness& h) {
          h.clock.Advance(kGrace - milliseconds(1));
          return h.core.OnTick();
        }},
       State::kStopping,
       {},
       kGrace},
      {"stopping + tick at kill-at: SIGKILL",
       {run, [](Harness& h) { return h.core.OnSidecarLost("x"); },
        [](Harness& h) {
          h.clock.Advance(kGrace);
          return h.core.OnTick();
        }},
       State::kStopping,
       {Sig(SIGKILL)}},
      {"stopping after SIGKILL: swept again 20 ms later, not before",
       {run, [](Harness& h) { return h.core.OnSidecarLost("x"); },
        [](Harness& h) {
          h.clock.Advance(kGrace);
          return h.core.OnTick();
        },
        [](Harness& h) {
          h.clock.Advance(kKillResweep - milliseconds(1));
          CHECK(h.core.OnTick().empty());
          h.clock.Advance(milliseconds(1));
          return h.core.OnTick();
        }},
       State::kStopping,
       {Sig(SIGKILL)}},
      {"stopping (timer) + no: SIGKILL moves to now + grace when sooner",
       {run,
        [](Harness& h) {
          h.clock.Advance(seconds(10) - kGrace - kMargin);
          return h.core.OnTick();
        },
        [](Harness& h) {
          h.clock.Advance(milliseconds(100));
          return h.core.OnLeader(LeaderView{false, 4, std::nullopt});
        }},
       State::kStopping,
       {},
       seconds(10) - kMargin},  // D - M = now + 650 ms < now + grace: unchanged
      {"stopping (shutdown) + lost: kill-at never later",
       {run, [](Harness& h) { return h.core.OnShutdown(SIGTERM); },
        [](Harness& h) {
          h.clock.Advance(milliseconds(300));
          return h.core.OnSidecarLost("x");
        }},
       State::kStopping,
       {},
       kGrace},
      {"stopping + yes with a nearer validUntil: SIGKILL before it",
       {run, [](Harness& h) { return h.core.OnShutdown(SIGTERM); },
        [](Harness& h) { return h.core.OnLeader(h.Yes(4, milliseconds(600))); }},
       State::kStopping,
       {},
       milliseconds(600) - kMargin},
      {"stopping + second shutdown: SIGKILL now",
       {run, [](Harness& h) { return h.core.OnShutdown(SIGTERM); },
        [](Harness& h) { return h.core.OnShutdown(SIGINT); }},
       State::kStopping,
       {Sig(SIGKILL)}},
      {"stopping + yes does not restart CMD",
       {run, [](Harness& h) { return h.core.OnSidecarLost("x"); },
        [](Harness& h) { return h.core.OnLeader(h.Yes(4, seconds(10))); }},
       State::kStopping,
       {},
       kGrace},
      // exited
      {"exited + anything: stays exited",
       {[](Harness& h) { return h.core.OnShutdown(SIGTERM); },
        [](Harness& h) {
          Actions all = h.core.OnLeader(h.Yes(4, seconds(10)));
          for (auto& a : h.core.OnTick()) all.push_back(a);
          for (auto& a : h.core.OnShutdown(SIGTERM)) all.push_back(a);
          for (auto& a : h.core.OnSidecarLost("x")) all.push_back(a);
          for (auto& a : h.core.OnFatal("timings", 2)) all.push_back(a);
          return all;
        }},
       State::kExited,
       {}},
  };
  for (const Case& c : cases) {
    SUBCASE(c.name) {
      Harness h;
      Actions last;
      for (const Step& s : c.steps) last = s(h);
      CHECK(StateName(h.core.state()) == std::string(StateName(c.state)));
      CHECK_MESSAGE(last == c.last, Show(last), " != ", Show(c.last));
      if (c.kill_at) {
        CHECK(h.core.kill_at() - h.t0 == *c.kill_at);
        CHECK(h.core.NextDeadline() == std::optional<MonoTime>(h.t0 + *c.kill_at));
      }
    }
  }
}

TEST_CASE("GateCore: the deadline is validUntil - wall now at receipt, on the monotonic clock") {
  Harness h;
  // The wall clock jumps 1 h ahead (NTP step): a validUntil 10 s ahead of the new wall time is
  // still 10 s ahead on the monotonic clock, and a later wall step changes nothing.
  h.clock.StepWall(std::chrono::hours(1));
  h.Run();
  REQUIRE(h.core.deadline());
  CHECK(*h.core.deadline() - h.t0 == seconds(10));
  h.clock.StepWall(-std::chrono::hours(2));
  CHECK(h.core.NextDeadline() == std::optional<MonoTime>(h.t0 + seconds(10) - kGrace - kMargin));
  CHECK(h.core.OnTick().empty());
  h.clock.Advance(seconds(10) - kGrace - kMargin);
  CHECK(h.core.OnTick() == Actions{Sig(SIGTERM)});
}

TEST_CASE("GateCore: CMD is never running at validUntil - margin without any event") {
  // The worst case for every grace: a yes, then silence. Stop signal and SIGKILL come from the
  // clock alone, and the last SIGKILL is sent by validUntil - margin.
  for (Duration grace : std::vector<Duration>{Duration::zero(), milliseconds(500), seconds(3)}) {
    CAPTURE(grace.count());
    FakeClock clock;
    GateCore core(clock, CoreOptions{grace, kMargin, SIGTERM});
    const MonoTime t0 = clock.MonotonicNow();
    core.OnLeader(LeaderView{true, 1, clock.SystemNow() + seconds(8)});
    core.OnSpawned(100);
    std::optional<MonoTime> term_at, kill_at;
    while (auto next = core.NextDeadline()) {
      if (*next > clock.MonotonicNow()) clock.Advance(*next - clock.MonotonicNow());
      for (const Action& a : core.OnTick()) {
        if (a.kind == Action::kSignalTree && a.signo == SIGTERM) term_at = clock.MonotonicNow();
        if (a.kind == Action::kSignalTree && a.signo == SIGKILL && !kill_at) {
          kill_at = clock.MonotonicNow();
        }
      }
      if (kill_at) break;
    }
    REQUIRE(term_at);
    REQUIRE(kill_at);
    CHECK(*term_at - t0 == seconds(8) - grace - kMargin);
    CHECK(*kill_at - t0 == seconds(8) - kMargin);
  }
}

TEST_CASE("GateCore: transitions are reported in order") {
  Harness h;
  h.Run();
  h.core.OnShutdown(SIGTERM);
  h.core.OnChildExited(Killed(SIGTERM));
  h.core.OnTreeEmpty();
  CHECK(h.transitions == std::vector<std::string>{"waiting->starting", "starting->running",
                                                  "running->stopping", "stopping->exited"});
}

TEST_CASE("ExitCodeOf") {
  CHECK(ExitCodeOf(Exited(0)) == 0);
  CHECK(ExitCodeOf(Exited(3)) == 3);
  CHECK(ExitCodeOf(Exited(255)) == 255);
  CHECK(ExitCodeOf(Killed(SIGKILL)) == 137);
  CHECK(ExitCodeOf(Killed(SIGTERM)) == 143);
}

TEST_CASE("CheckStopGrace") {
  struct Case {
    const char* name;
    Duration grace, renew, retry, interval;  // interval zero: an older sidecar that sent none
    bool ok;
  };
  const std::vector<Case> cases = {
      {"defaults 10s/2s: 3s fits", seconds(3), seconds(10), seconds(2), seconds(2), true},
      {"defaults: 3.75s is the most", milliseconds(3750), seconds(10), seconds(2), seconds(2),
       true},
      {"defaults: 3.751s is too long", milliseconds(3751), seconds(10), seconds(2), seconds(2),
       false},
      {"no interval sent: retry-period", milliseconds(3750), seconds(10), seconds(2),
       Duration::zero(), true},
      {"auto 5.5s: 3s does not fit", seconds(3), seconds(10), seconds(2), milliseconds(5500),
       false},
      {"auto 5.5s: 2s is the most", seconds(2), seconds(10), seconds(2), milliseconds(5500), true},
      {"auto 5.5s: 2.001s is too long", milliseconds(2001), seconds(10), seconds(2),
       milliseconds(5500), false},
      {"an interval below retry-period counts as retry-period", milliseconds(3750), seconds(10),
       seconds(2), seconds(1), true},
      {"e2e 3s/1s: 750ms fits", milliseconds(750), seconds(3), seconds(1), seconds(1), true},
      {"e2e 3s/1s: 1s does not", seconds(1), seconds(3), seconds(1), seconds(1), false},
      {"zero grace fits anything sane", Duration::zero(), seconds(2), seconds(1), seconds(1), true},
  };
  for (const Case& c : cases) {
    SUBCASE(c.name) {
      const Timings t{seconds(15), c.renew, c.retry, c.interval};
      const Status st = CheckStopGrace(c.grace, kMargin, t);
      CHECK(st.ok() == c.ok);
      if (!c.ok) {
        CHECK(st.code() == Code::kBadConfig);
        CHECK(st.message().rfind("--stop-grace", 0) == 0);
        // The message names the rhythm it used, and the way out when it is the interval.
        const bool by_interval = c.interval > c.retry;
        CHECK((st.message().find("renew-deadline - renew-interval") != std::string::npos) ==
              by_interval);
        CHECK((st.message().find("--renew-interval=retry-period") != std::string::npos) ==
              by_interval);
      }
    }
  }
}

}  // namespace
}  // namespace leasehold::gate
