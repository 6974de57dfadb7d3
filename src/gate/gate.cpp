#include "gate/gate.h"

#include <poll.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <deque>
#include <memory>
#include <optional>

#include "base/file.h"
#include "contract/leader.h"
#include "contract/loopback_client.h"
#include "contract/sse.h"
#include "gate/process.h"
#include "gate/status.h"

namespace leasehold::gate {
namespace {

using contract::FetchFirst;
using contract::HttpExchange;
using contract::SseParser;
using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr Duration kHeadTimeout = seconds(2);
constexpr Duration kStreamIdle = seconds(20);
constexpr Duration kRetryStreamAfter = seconds(10);
constexpr Duration kBackoffMin = milliseconds(50);
constexpr Duration kBackoffMax = seconds(1);
constexpr Duration kReleaseTimeout = seconds(2);
constexpr Duration kHeartbeat = seconds(1);

std::string SigName(int signo) {
  const char* abbrev = sigabbrev_np(signo);
  return abbrev ? std::string("SIG") + abbrev : "signal " + std::to_string(signo);
}

int64_t Millis(Duration d) { return std::chrono::duration_cast<milliseconds>(d).count(); }

// What the core decides on, from the /leader contract (see contract/leader.h for the readings of
// absent keys: termReliable false, a validUntil that does not parse none).
LeaderView ViewOf(const contract::LeaderDoc& d) {
  LeaderView v;
  v.is_leader = d.is_leader;
  v.term = d.term;
  v.valid_until = d.valid_until;
  v.term_reliable = d.term_reliable;
  return v;
}

// `name`=`value` in `env`, replacing any value inherited from the gate's own environment.
void SetEnv(std::vector<std::string>& env, const std::string& name, const std::string& value) {
  const std::string prefix = name + "=";
  env.erase(std::remove_if(env.begin(), env.end(),
                           [&](const std::string& e) { return e.rfind(prefix, 0) == 0; }),
            env.end());
  env.push_back(prefix + value);
}

std::string Join(const std::vector<std::string>& v) {
  std::string out;
  for (const std::string& s : v) out += (out.empty() ? "" : " ") + s;
  return out;
}

class Shell {
 public:
  explicit Shell(const GateOptions& o)
      : o_(o), core_(clock_, o.core, [this](State from, State to, const std::string& why) {
          OnTransition(from, to, why);
        }) {}

  int Run();

 private:
  // kCheck: one GET /leader, for its "timings" (watch events carry none), at start and after
  // every lost stream; then kStream. kPoll: GET /leader every poll-interval.
  enum class Mode { kCheck, kStream, kPoll };

  void OnTransition(State from, State to, const std::string& why);
  void Apply(Actions actions);
  void HandleSignals(int sfd);
  void StartExchange(MonoTime now);
  void HandleExchange(MonoTime now);
  void OnAnswer(MonoTime now, int status, const std::string& body);
  bool CheckTimings(const std::optional<Timings>& timings);
  void Failed(MonoTime now, const std::string& why);
  // The endpoint the next exchange goes to: o_.sidecars in turn, moving on only when one cannot
  // be reached (contract::SidecarTargets' rule).
  const contract::Target& Sidecar() const { return o_.sidecars[sidecar_index_]; }
  // "127.0.0.1:4040 or [::1]:4040", for the start line.
  std::string SidecarList() const {
    std::string out;
    for (const contract::Target& t : o_.sidecars) out += (out.empty() ? "" : " or ") + t.ToString();
    return out;
  }
  void NextSidecar() { sidecar_index_ = (sidecar_index_ + 1) % o_.sidecars.size(); }
  void ArmTimer(int tfd, MonoTime at);
  void WriteStatus(MonoTime now);
  void SetSidecar(const char* state);
  void LogView(const char* from, const LeaderView& v);
  Duration Backoff() const;

  const GateOptions& o_;
  RealClock clock_;
  GateCore core_;
  std::optional<int> exit_code_;

  Mode mode_ = Mode::kCheck;
  std::unique_ptr<HttpExchange> ex_;
  MonoTime ex_deadline_{};
  MonoTime reconnect_at_{};
  MonoTime poll_until_{};
  bool stream_up_ = false;
  int failures_ = 0;
  bool unreachable_logged_ = false;
  bool poll_logged_ = false;
  SseParser sse_;
  size_t sidecar_index_ = 0;
  std::string body_;
  bool timings_checked_ = false;
  std::optional<Timings> timings_;  // as last checked
  // After a configuration error found at run time: CMD is being stopped, the sidecar is no
  // longer asked (only POST /release is left).
  bool leaving_ = false;
  std::string sidecar_ = "connecting";

  pid_t main_pid_ = 0;
  bool main_reaped_ = true;
  bool tree_reported_ = true;
  int kill_sweeps_ = 0;

  MonoTime state_since_{};
  MonoTime next_heartbeat_{};
  bool status_warned_ = false;
};

void Shell::OnTransition(State from, State to, const std::string& why) {
  spdlog::info("gate: {} -> {}: {}", StateName(from), StateName(to), why);
  state_since_ = clock_.MonotonicNow();
  WriteStatus(state_since_);
}

void Shell::WriteStatus(MonoTime now) {
  next_heartbeat_ = now + kHeartbeat;
  if (o_.status_file.empty()) return;
  GateStatus s;
  s.state = core_.state();
  s.state_since_ms = BootMillis(state_since_);
  s.heartbeat_ms = BootMillis(now);
  s.pid = (core_.state() == State::kRunning || core_.state() == State::kStopping) ? main_pid_ : 0;
  s.term = core_.running_term();
  s.sidecar = sidecar_;
  s.stop_grace_ms = Millis(o_.core.stop_grace);
  // A heartbeat of a running process: it means nothing after a crash of the node, so no fsync
  // (and the gate's loop never waits on the disk).
  AtomicWriteOptions write;
  write.durable = false;
  if (Status st = WriteFileAtomically(o_.status_file, StatusJson(s), write); !st.ok()) {
    if (!status_warned_) {
      spdlog::warn("gate: cannot write the status file (gate-probe will fail): {}", st.message());
      status_warned_ = true;
    }
  } else {
    status_warned_ = false;
  }
}

void Shell::LogView(const char* from, const LeaderView& v) {
  if (!spdlog::should_log(spdlog::level::debug)) return;
  if (v.is_leader && v.valid_until) {
    const int64_t ms =
        std::chrono::duration_cast<milliseconds>(v.valid_until->time_since_epoch()).count();
    spdlog::debug("gate: {}: leader, term {}, validUntil {}.{:03d} (in {}ms)", from, v.term,
                  ms / 1000, static_cast<int>(ms % 1000),
                  Millis(*v.valid_until - clock_.SystemNow()));
  } else {
    spdlog::debug("gate: {}: not leader, term {}", from, v.term);
  }
}

void Shell::SetSidecar(const char* state) {
  if (sidecar_ == state) return;
  sidecar_ = state;
  WriteStatus(clock_.MonotonicNow());
}

void Shell::Apply(Actions actions) {
  std::deque<Action> queue(actions.begin(), actions.end());
  while (!queue.empty()) {
    const Action a = queue.front();
    queue.pop_front();
    Actions more;
    switch (a.kind) {
      case Action::kSpawn: {
        std::vector<std::string> env = EnvironWith("LEASEHOLD_TERM", std::to_string(a.term));
        SetEnv(env, "LEASEHOLD_TERM_RELIABLE", a.term_reliable ? "true" : "false");
        auto pid = Spawn(o_.command, env);
        if (pid.ok()) {
          main_pid_ = *pid;
          main_reaped_ = false;
          tree_reported_ = false;
          kill_sweeps_ = 0;
          more = core_.OnSpawned(*pid);
        } else {
          more = core_.OnSpawnFailed(pid.status().message());
        }
        break;
      }
      case Action::kSignalTree: {
        const int reached = SignalTree(main_pid_, main_reaped_, a.signo);
        if (a.signo != SIGKILL || kill_sweeps_++ == 0) {
          spdlog::info(
              "gate: sent {} to CMD's process group and its re-parented descendants "
              "({} reached)",
              SigName(a.signo), reached);
        }
        break;
      }
      case Action::kRelease: {
        auto r = FetchFirst(o_.sidecars, HttpExchange::Post("/release"), kReleaseTimeout, clock_);
        if (r.ok()) {
          spdlog::info("gate: POST /release answered {}", r->status);
        } else {
          spdlog::warn("gate: POST /release failed: {}", r.status().message());
        }
        break;
      }
      case Action::kExit:
        exit_code_ = a.exit_code;
        break;
    }
    queue.insert(queue.end(), more.begin(), more.end());
  }
}

void Shell::HandleSignals(int sfd) {
  for (;;) {
    signalfd_siginfo si{};
    const ssize_t n = read(sfd, &si, sizeof si);
    if (n != static_cast<ssize_t>(sizeof si)) return;
    const int signo = static_cast<int>(si.ssi_signo);
    switch (signo) {
      case SIGCHLD: {
        const Reaped r = ReapChildren(main_pid_);
        if (r.others > 0) spdlog::debug("gate: reaped {} orphaned descendant(s)", r.others);
        if (r.main_exited && !main_reaped_) {
          main_reaped_ = true;
          spdlog::info("gate: CMD (pid {}) exited with code {}", main_pid_,
                       ExitCodeOf(r.main_status));
          Apply(core_.OnChildExited(r.main_status));
        }
        if (main_reaped_ && !tree_reported_ && r.none_left) {
          tree_reported_ = true;
          Apply(core_.OnTreeEmpty());
        }
        break;
      }
      case SIGTERM:
      case SIGINT:
        spdlog::info("gate: received {}", SigName(signo));
        Apply(core_.OnShutdown(signo));
        break;
      default:  // SIGHUP, SIGUSR1, SIGUSR2
        if (main_pid_ > 0 && !main_reaped_) {
          kill(main_pid_, signo);
          spdlog::info("gate: forwarded {} to CMD (pid {})", SigName(signo), main_pid_);
        }
        break;
    }
  }
}

Duration Shell::Backoff() const {
  Duration d = kBackoffMin;
  for (int i = 1; i < failures_ && d < kBackoffMax; ++i) d *= 2;
  return std::min(d, kBackoffMax);
}

void Shell::StartExchange(MonoTime now) {
  const std::string path = mode_ == Mode::kStream ? "/leader/watch" : "/leader";
  const contract::Target& target = Sidecar();
  auto ex = HttpExchange::Start(target, HttpExchange::Get(path));
  if (!ex.ok()) {
    NextSidecar();
    Failed(now, "cannot connect to " + target.ToString() + ": " + ex.status().message());
    return;
  }
  ex_ = std::move(ex).value();
  ex_deadline_ = now + kHeadTimeout;
  stream_up_ = false;
  sse_ = SseParser();
  body_.clear();
}

void Shell::Failed(MonoTime now, const std::string& why) {
  ex_.reset();
  stream_up_ = false;
  // A lost stream may be a sidecar restarted with other flags: ask GET /leader for its timings
  // again before the next stream.
  if (mode_ == Mode::kStream) mode_ = Mode::kCheck;
  SetSidecar("unreachable");
  ++failures_;
  if (!unreachable_logged_) {
    spdlog::info("gate: {}; \"not leader\" until it answers again (retrying with backoff)", why);
    unreachable_logged_ = true;
  } else {
    spdlog::debug("gate: {}", why);
  }
  reconnect_at_ = now + Backoff();
  Apply(core_.OnSidecarLost(why));
}

void Shell::OnAnswer(MonoTime now, int status, const std::string& body) {
  ex_.reset();
  auto parsed = contract::ParseLeader(body);
  if (!parsed.ok()) {
    Failed(now, "GET /leader answered " + std::to_string(status) + " without leader JSON");
    return;
  }
  if (unreachable_logged_) spdlog::info("gate: the sidecar answers again");
  unreachable_logged_ = false;
  // A check after a lost stream leaves the backoff to the stream: a sidecar whose stream keeps
  // failing is not asked twice every 50 ms.
  if (mode_ != Mode::kCheck || !timings_checked_) failures_ = 0;
  if (!CheckTimings(parsed->timings)) return;
  if (mode_ == Mode::kPoll) SetSidecar("polling");
  if (mode_ == Mode::kCheck) {
    mode_ = Mode::kStream;
    reconnect_at_ = now;
  } else {
    reconnect_at_ = now + o_.poll_interval;
    if (now >= poll_until_) mode_ = Mode::kStream;
  }
  LogView("GET /leader", ViewOf(*parsed));
  Apply(core_.OnLeader(ViewOf(*parsed)));
}

// --stop-grace against the sidecar's timings, at the first answer and again whenever they differ
// from the ones last checked: the sidecar container can restart alone (its liveness probe, an
// OOM kill, a changed ConfigMap behind its flags) while the gate and CMD run on. Returns false
// when the gate is leaving because they do not fit.
//
// At start that is a bad configuration: exit 2 before CMD ever runs. Found later, the gate
// leaves as on SIGTERM (CMD stopped within validUntil - margin, POST /release) and exits 2,
// rather than staying alive without starting CMD: a gate that stayed would leave its sidecar
// contending, and once it leads it holds the lock with no CMD running, which a POST /release
// only defers by the sidecar's hold-off, while every probe of the gate passes. Exiting gives the
// outcome a restarted gate would reach anyway with these timings, and shows it: the container
// restarts, its log names --stop-grace, and once the timings are fixed it runs again.
bool Shell::CheckTimings(const std::optional<Timings>& t) {
  const bool first = !timings_checked_;
  if (!first && t == timings_) return true;
  timings_checked_ = true;
  timings_ = t;
  if (!t) {
    spdlog::warn(
        "gate: the sidecar's /leader has no \"timings\" (an older leasehold?): "
        "--stop-grace cannot be checked against the sidecar's renew rhythm");
    return true;
  }
  const std::string changed =
      first ? ""
            : "sidecar timings changed to lease-duration " +
                  std::to_string(Millis(t->lease_duration)) + "ms, renew-deadline " +
                  std::to_string(Millis(t->renew_deadline)) + "ms, retry-period " +
                  std::to_string(Millis(t->retry_period)) + "ms, renews every " +
                  std::to_string(Millis(RenewEvery(*t))) + "ms (the sidecar restarted?): ";
  Status st = CheckStopGrace(o_.core.stop_grace, o_.core.margin, *t);
  if (st.ok()) {
    if (first) {
      spdlog::info(
          "gate: sidecar timings renew-deadline {}ms, renews every {}ms: stop-grace {}ms fits",
          Millis(t->renew_deadline), Millis(RenewEvery(*t)), Millis(o_.core.stop_grace));
    } else {
      spdlog::info("gate: {}stop-grace {}ms fits", changed, Millis(o_.core.stop_grace));
    }
    return true;
  }
  if (first) {
    spdlog::error("gate: {}", st.message());
    exit_code_ = 2;
    return false;
  }
  spdlog::error("gate: {}{}; stopping CMD, releasing the lock and exiting with code 2", changed,
                st.message());
  leaving_ = true;
  Apply(core_.OnFatal("--stop-grace does not fit the sidecar's new timings", 2));
  return false;
}

void Shell::HandleExchange(MonoTime now) {
  if (Status st = ex_->OnReady(); !st.ok()) {
    // Not even a head: this endpoint cannot be reached; the next attempt asks the next one.
    if (!ex_->head_done()) NextSidecar();
    Failed(now, (stream_up_ ? "the watch stream failed: " : "no answer from the sidecar: ") +
                    st.message());
    return;
  }
  if (!ex_->head_done()) return;
  if (mode_ != Mode::kStream) {
    body_ += ex_->TakeBody();
    if (ex_->closed()) OnAnswer(now, ex_->status(), body_);
    return;
  }
  if (!stream_up_) {
    if (ex_->status() != 200) {
      if (!poll_logged_) {
        spdlog::warn("gate: GET /leader/watch answered {}: polling GET /leader every {}ms",
                     ex_->status(), Millis(o_.poll_interval));
        poll_logged_ = true;
      }
      ex_.reset();
      mode_ = Mode::kPoll;
      poll_until_ = now + kRetryStreamAfter;
      reconnect_at_ = now;
      return;
    }
    stream_up_ = true;
    poll_logged_ = false;
    SetSidecar("streaming");
    spdlog::info("gate: following the sidecar's watch stream on {}", Sidecar().ToString());
  }
  const std::string bytes = ex_->TakeBody();
  if (!bytes.empty()) ex_deadline_ = now + kStreamIdle;
  auto events = sse_.Feed(bytes);
  if (!events.ok()) {
    Failed(now, "the watch stream is broken: " + events.status().message());
    return;
  }
  for (const SseParser::Event& e : *events) {
    if (e.type != contract::kLeaderEvent) continue;
    auto parsed = contract::ParseLeader(e.data);
    if (!parsed.ok()) {
      Failed(now, "the watch stream sent an event without leader JSON");
      return;
    }
    failures_ = 0;
    unreachable_logged_ = false;
    LogView("event", ViewOf(*parsed));
    Apply(core_.OnLeader(ViewOf(*parsed)));
    if (exit_code_) return;
  }
  if (ex_ && ex_->closed()) Failed(now, "the sidecar's watch stream ended");
}

void Shell::ArmTimer(int tfd, MonoTime at) {
  itimerspec its{};
  const auto ns = at.time_since_epoch().count();
  its.it_value.tv_sec = static_cast<time_t>(std::max<int64_t>(ns, 1) / 1000000000);
  its.it_value.tv_nsec = static_cast<long>(std::max<int64_t>(ns, 1) % 1000000000);
  timerfd_settime(tfd, TFD_TIMER_ABSTIME, &its, nullptr);
}

int Shell::Run() {
  if (Status st = BecomeSubreaper(); !st.ok()) spdlog::warn("gate: {}", st.message());
  sigset_t set;
  sigemptyset(&set);
  for (int s : {SIGCHLD, SIGTERM, SIGINT, SIGHUP, SIGUSR1, SIGUSR2}) sigaddset(&set, s);
  sigprocmask(SIG_BLOCK, &set, nullptr);
  const int sfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
  const int tfd = timerfd_create(CLOCK_BOOTTIME, TFD_CLOEXEC | TFD_NONBLOCK);
  if (sfd < 0 || tfd < 0) {
    spdlog::error("gate: signalfd/timerfd: {}", std::strerror(errno));
    return 1;
  }
  spdlog::info(
      "gate: CMD {}; sidecar {}; stop-signal {}, stop-grace {}ms, SIGKILL {}ms before validUntil",
      Join(o_.command), SidecarList(), SigName(o_.core.stop_signal), Millis(o_.core.stop_grace),
      Millis(o_.core.margin));
  state_since_ = clock_.MonotonicNow();
  spdlog::info("gate: waiting until this pod leads");
  WriteStatus(state_since_);
  reconnect_at_ = state_since_;

  while (!exit_code_) {
    MonoTime now = clock_.MonotonicNow();
    if (!ex_ && !leaving_ && now >= reconnect_at_) StartExchange(now);
    if (exit_code_) break;
    MonoTime wake = next_heartbeat_;
    if (auto d = core_.NextDeadline()) wake = std::min(wake, *d);
    if (ex_) {
      wake = std::min(wake, ex_deadline_);
    } else if (!leaving_) {
      wake = std::min(wake, reconnect_at_);
    }
    ArmTimer(tfd, wake);
    pollfd fds[3] = {{sfd, POLLIN, 0}, {tfd, POLLIN, 0}, {ex_ ? ex_->fd() : -1, 0, 0}};
    if (ex_) fds[2].events = ex_->poll_events();
    if (poll(fds, ex_ ? 3 : 2, -1) < 0 && errno != EINTR) {
      spdlog::error("gate: poll: {}", std::strerror(errno));
      return 1;
    }
    if (fds[1].revents) {
      uint64_t expirations = 0;
      ssize_t ignored = read(tfd, &expirations, sizeof expirations);
      (void)ignored;
    }
    if (fds[0].revents) HandleSignals(sfd);
    if (exit_code_) break;
    Apply(core_.OnTick());
    if (exit_code_) break;
    now = clock_.MonotonicNow();
    if (ex_ && fds[2].revents) HandleExchange(now);
    if (exit_code_) break;
    if (ex_ && now >= ex_deadline_) {
      Failed(now, stream_up_ ? "no byte from the sidecar's watch stream for 20s"
                             : "no answer from the sidecar within 2s");
    }
    if (now >= next_heartbeat_) WriteStatus(now);
  }
  WriteStatus(clock_.MonotonicNow());
  spdlog::info("gate: exiting with code {}", *exit_code_);
  spdlog::default_logger()->flush();
  // signalfd and timerfd carry no data of ours: a failed close loses nothing (Linux frees the
  // descriptor even then), and the exit code is already decided.
  (void)close(sfd);
  (void)close(tfd);
  return *exit_code_;
}

}  // namespace

int RunGate(const GateOptions& options) {
  if (options.sidecars.empty()) {
    spdlog::error("gate: no sidecar address to ask");
    return 2;
  }
  return Shell(options).Run();
}

}  // namespace leasehold::gate
