#include "app/gate_command.h"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>

#include "app/install.h"
#include "app/logging.h"
#include "base/duration.h"
#include "base/text.h"
#include "contract/loopback_client.h"

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

}  // namespace

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

}  // namespace leasehold::app
