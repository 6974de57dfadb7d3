#include "app/gate_command.h"

#include <signal.h>
#include <sys/auxv.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>

#include "app/logging.h"
#include "base/duration.h"
#include "base/file.h"
#include "base/text.h"
#include "contract/loopback_client.h"
#include "gate/status.h"

namespace leasehold::app {
namespace {

constexpr const char* kGateHelp = R"(Usage: leasehold gate [flags] -- CMD [ARGS...]

Runs CMD only while this pod leads, as the leasehold sidecar says on GET /leader/watch, and
stops it before the validUntil it last received: the stop signal at validUntil - stop-grace -
250ms, SIGKILL at validUntil - 250ms; a "no", a lost stream or a refused connection stops it at
once. On SIGTERM/SIGINT it stops CMD, POSTs /release and exits with CMD's code; when CMD exits
by itself it POSTs /release and exits with CMD's code (128 + n for signal n). CMD gets
LEASEHOLD_TERM, the term it runs for, and LEASEHOLD_TERM_RELIABLE, true when that term is a
fencing token (false when the sidecar says it is not, or does not say).

Flags (each also LEASEHOLD_GATE_<FLAG>, e.g. LEASEHOLD_GATE_STOP_GRACE; the flag wins):
  --address ADDR       the sidecar's local API (default $LEASEHOLD_HTTP_ADDRESS, else
                       localhost:4040)
  --stop-signal SIG    the first signal to stop CMD (default SIGTERM)
  --stop-grace D       stop signal to SIGKILL (default 3s); at most
                       (renew-deadline - retry-period) / 2 - 250ms of the sidecar, checked
                       at start and whenever its timings change (if not: CMD is
                       stopped, exit 2)
  --poll-interval D    GET /leader while the stream is unavailable (default 500ms)
  --status-file PATH   status for `leasehold gate-probe` (default gate-status.json beside
                       this binary; "off" for none)
  --log-format F       text or json (default text)
  --log-level L        trace, debug, info, warn, error (default info)
  -h, --help           print this help
)";

constexpr const char* kProbeHelp = R"(Usage: leasehold gate-probe [--ready] [--status-file PATH]

Exec probe for a container run by `leasehold gate`. Exit 0 when the gate is alive and
consistent (its status file rewritten within 10s, not stuck stopping CMD beyond stop-grace +
10s); with --ready, also when it reaches its sidecar. 1 otherwise, 2 for bad arguments.
  --status-file PATH   default $LEASEHOLD_GATE_STATUS_FILE, else gate-status.json beside
                       this binary
)";

Status Invalid(const std::string& what, const char* cmd) {
  return Status(Code::kBadConfig, what + " (see leasehold " + cmd + " --help)");
}

std::string EnvName(const std::string& flag) {
  std::string n = "LEASEHOLD_GATE_";
  for (char c : flag) n += c == '-' ? '_' : static_cast<char>(std::toupper(c));
  return n;
}

Result<int> ParseSignal(const std::string& text) {
  static const std::map<std::string, int> kNames = {
      {"TERM", SIGTERM}, {"INT", SIGINT},   {"HUP", SIGHUP},   {"QUIT", SIGQUIT},
      {"USR1", SIGUSR1}, {"USR2", SIGUSR2}, {"KILL", SIGKILL}, {"WINCH", SIGWINCH}};
  std::string t = text;
  for (char& c : t) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (t.rfind("SIG", 0) == 0) t = t.substr(3);
  if (auto it = kNames.find(t); it != kNames.end()) return it->second;
  char* end = nullptr;
  const long n = std::strtol(text.c_str(), &end, 10);
  if (!text.empty() && *end == '\0' && n > 0 && n < NSIG) return static_cast<int>(n);
  return Status(Code::kBadConfig,
                Quote(text) + " is not a signal (e.g. SIGTERM, TERM, 15, SIGINT, SIGQUIT)");
}

// This binary: /proc/self/exe, the file that runs even if its path was replaced since; else (no
// /proc, as in a bare chroot) the path the kernel was given at exec (AT_EXECFN).
// (An execute-only binary cannot be copied either way.)
std::string SelfPath() {
  char buf[16];
  if (readlink("/proc/self/exe", buf, sizeof buf) > 0) return "/proc/self/exe";
  const auto* execfn = reinterpret_cast<const char*>(getauxval(AT_EXECFN));
  return execfn != nullptr ? execfn : "";
}

}  // namespace

std::string ExecutableDir() {
  char buf[4096];
  const std::string self = SelfPath();
  if (self.empty()) return "";
  std::string path = self;
  if (self == "/proc/self/exe") {
    const ssize_t n = readlink(self.c_str(), buf, sizeof buf - 1);
    if (n <= 0) return "";
    path.assign(buf, static_cast<size_t>(n));
  }
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? "" : path.substr(0, slash == 0 ? 1 : slash);
}

Result<GateCommand> ParseGateCommand(const std::vector<std::string>& args, const Environment& env,
                                     const std::string& exe_dir) {
  GateCommand c;
  std::map<std::string, std::string> given;
  static const char* kFlags[] = {"address",     "stop-signal", "stop-grace", "poll-interval",
                                 "status-file", "log-format",  "log-level"};
  size_t i = 0;
  for (; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--") {
      ++i;
      break;
    }
    if (a == "-h" || a == "--help") {
      c.output = kGateHelp;
      return c;
    }
    if (a.rfind("--", 0) != 0) break;  // CMD starts here (without "--")
    std::string name = a.substr(2), value;
    const size_t eq = name.find('=');
    bool known = false;
    for (const char* f : kFlags) known = known || name.substr(0, eq) == f;
    if (!known) return Invalid("unknown flag " + Quote(a), "gate");
    if (eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
    } else {
      if (i + 1 >= args.size()) return Invalid("--" + name + ": needs a value", "gate");
      value = args[++i];
    }
    given[name] = value;
  }
  c.options.command.assign(args.begin() + static_cast<long>(i), args.end());
  if (c.options.command.empty()) {
    return Invalid("no command: leasehold gate [flags] -- CMD [ARGS...]", "gate");
  }
  // The flag, else LEASEHOLD_GATE_<FLAG>; `origin` names where a bad value came from.
  const auto get = [&](const std::string& flag, std::string* origin) -> std::optional<std::string> {
    if (auto it = given.find(flag); it != given.end()) {
      *origin = "--" + flag;
      return it->second;
    }
    if (auto e = env.getenv(EnvName(flag)); e && !e->empty()) {
      *origin = EnvName(flag) + " (--" + flag + ")";
      return *e;
    }
    *origin = "--" + flag;
    return std::nullopt;
  };
  std::string origin;

  std::string address = "localhost:4040";
  if (auto v = get("address", &origin)) {
    address = *v;
  } else if (auto e = env.getenv("LEASEHOLD_HTTP_ADDRESS"); e && !e->empty()) {
    address = *e;
    origin = "LEASEHOLD_HTTP_ADDRESS (--address)";
  }
  // Every endpoint, in order, as `leasehold probe` asks (the one rule: contract::SidecarTargets).
  auto targets = contract::SidecarTargets(address);
  if (!targets.ok()) return Status(Code::kBadConfig, origin + ": " + targets.status().message());
  c.options.sidecars = std::move(targets).value();

  if (auto v = get("stop-signal", &origin)) {
    auto s = ParseSignal(*v);
    if (!s.ok()) return Status(Code::kBadConfig, origin + ": " + s.status().message());
    c.options.core.stop_signal = *s;
  }
  if (auto v = get("stop-grace", &origin)) {
    auto d = ParseGoDuration(*v);
    if (!d.ok()) return Status(Code::kBadConfig, origin + ": " + d.status().message());
    if (*d > std::chrono::minutes(10)) {
      return Status(Code::kBadConfig, origin + ": at most 10m");
    }
    c.options.core.stop_grace = *d;
  }
  if (auto v = get("poll-interval", &origin)) {
    auto d = ParseGoDuration(*v);
    if (!d.ok()) return Status(Code::kBadConfig, origin + ": " + d.status().message());
    if (*d < std::chrono::milliseconds(50) || *d > std::chrono::seconds(10)) {
      return Status(Code::kBadConfig, origin + ": must be between 50ms and 10s");
    }
    c.options.poll_interval = *d;
  }
  c.options.status_file = exe_dir.empty() ? "" : exe_dir + "/gate-status.json";
  if (auto v = get("status-file", &origin)) c.options.status_file = *v == "off" ? "" : *v;
  if (auto v = get("log-format", &origin)) {
    Result<LogFormat> format = ParseLogFormat(*v);
    if (!format.ok()) return Status(Code::kBadConfig, origin + ": " + format.status().message());
    c.log_format = *format;
  }
  if (auto v = get("log-level", &origin)) {
    Result<LogLevel> level = ParseLogLevel(*v);
    if (!level.ok()) return Status(Code::kBadConfig, origin + ": " + level.status().message());
    c.log_level = *level;
  }
  return c;
}

int RunGateCommand(const std::vector<std::string>& args, const Environment& env) {
  auto c = ParseGateCommand(args, env, ExecutableDir());
  if (!c.ok()) {
    std::fprintf(stderr, "leasehold gate: %s\n", EscapeForLog(c.status().message()).c_str());
    return 2;
  }
  if (!c->output.empty()) {
    std::fputs(c->output.c_str(), stdout);
    return 0;
  }
  SetupLogging(c->log_format, c->log_level);
  return gate::RunGate(c->options);
}

int RunGateProbe(const std::vector<std::string>& args, const Environment& env) {
  bool ready = false;
  std::string path;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "-h" || a == "--help") {
      std::fputs(kProbeHelp, stdout);
      return 0;
    }
    if (a == "--ready") {
      ready = true;
    } else if (a == "--status-file" && i + 1 < args.size()) {
      path = args[++i];
    } else if (a.rfind("--status-file=", 0) == 0) {
      path = a.substr(14);
    } else {
      std::fprintf(stderr, "leasehold gate-probe: unexpected argument %s\n",
                   EscapeForLog(Quote(a)).c_str());
      return 2;
    }
  }
  if (path.empty()) {
    if (auto e = env.getenv("LEASEHOLD_GATE_STATUS_FILE"); e && !e->empty()) path = *e;
  }
  if (path.empty()) {
    // The gate's own default; where this binary's directory is unknown the gate writes none.
    const std::string dir = ExecutableDir();
    if (dir.empty()) {
      std::fprintf(stderr,
                   "leasehold gate-probe: no status file: this binary's directory is unknown; "
                   "set --status-file or LEASEHOLD_GATE_STATUS_FILE for the gate and the probe\n");
      return 1;
    }
    path = dir + "/gate-status.json";
  }
  auto content = ReadRegularFile(path, 64 * 1024);
  if (!content.ok()) {
    std::fprintf(stderr, "leasehold gate-probe: %s\n",
                 EscapeForLog(content.status().message()).c_str());
    return 1;
  }
  const Status st =
      gate::JudgeStatus(*content, gate::BootMillis(RealClock().MonotonicNow()), ready);
  if (st.ok()) return 0;
  std::fprintf(stderr, "leasehold gate-probe: %s: %s\n", EscapeForLog(path).c_str(),
               EscapeForLog(st.message()).c_str());
  return 1;
}

Status InstallCopy(const std::string& source, const std::string& dir, const std::string& name) {
  // An exact 0755 whatever the init container's umask: the main container must run it.
  AtomicWriteOptions options;
  options.mode = 0755;
  options.exact_mode = true;
  return CopyFileAtomically(source, dir + "/" + name, options);
}

int RunInstall(const std::vector<std::string>& args) {
  if (args.size() == 1 && (args[0] == "-h" || args[0] == "--help")) {
    std::fputs(
        "Usage: leasehold install DIR\n\nCopies this binary to DIR/leasehold atomically "
        "(a temporary file in DIR, then rename), e.g. into an emptyDir from an init "
        "container, so that `leasehold gate` runs in any main image.\n",
        stdout);
    return 0;
  }
  if (args.size() != 1 || args[0].empty() || args[0][0] == '-') {
    std::fprintf(stderr, "leasehold install: usage: leasehold install DIR\n");
    return 2;
  }
  const std::string self = SelfPath();
  const Status st = self.empty()
                        ? Status(Code::kUnavailable, "cannot tell which file this binary is")
                        : InstallCopy(self, args[0], "leasehold");
  if (!st.ok()) {
    std::fprintf(stderr, "leasehold install: %s\n", EscapeForLog(st.message()).c_str());
    return 1;
  }
  std::printf("leasehold installed as %s/leasehold\n", args[0].c_str());
  return 0;
}

}  // namespace leasehold::app
