#include "app/gate_command.h"

#include <signal.h>
#include <spdlog/spdlog.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <map>

#include "app/install.h"
#include "app/logging.h"
#include "app/settings.h"
#include "base/duration.h"
#include "base/listen_address.h"
#include "base/text.h"
#include "contract/loopback_client.h"
#include "gate/status.h"

namespace leasehold::app {
namespace {

// --stop-grace and --poll-interval's bounds.
constexpr Duration kMaxStopGrace = std::chrono::minutes(10);
constexpr Duration kMinPollInterval = std::chrono::milliseconds(50);
constexpr Duration kMaxPollInterval = std::chrono::seconds(10);

// The help around the flags' column (RenderColumns, from the option table).
constexpr const char* kGateHelpHead = R"(Usage: leasehold gate [flags] -- CMD [ARGS...]

Runs CMD only while this pod leads, as the leasehold sidecar says on GET /leader/watch, and
stops it before the validUntil it last received: the stop signal at validUntil - stop-grace -
250ms, SIGKILL at validUntil - 250ms; a "no", a lost stream or a refused connection stops it at
once. On SIGTERM/SIGINT it stops CMD, POSTs /release and exits with CMD's code; when CMD exits
by itself it POSTs /release and exits with CMD's code (128 + n for signal n). CMD gets
LEASEHOLD_TERM, the term it runs for, and LEASEHOLD_TERM_RELIABLE, true when that term is a
fencing token (false when the sidecar says it is not, or does not say).

Flags (each also LEASEHOLD_GATE_<FLAG>, e.g. LEASEHOLD_GATE_STOP_GRACE; the flag wins):
)";
constexpr const char* kGateHelpTail = "  -h, --help           print this help\n";
constexpr size_t kHelpColumn = 23;

// The signals --stop-signal takes by name (with or without "SIG", any case).
const std::map<std::string, int>& SignalNames() {
  static const std::map<std::string, int> kNames = {
      {"TERM", SIGTERM}, {"INT", SIGINT},   {"HUP", SIGHUP},   {"QUIT", SIGQUIT},
      {"USR1", SIGUSR1}, {"USR2", SIGUSR2}, {"KILL", SIGKILL}, {"WINCH", SIGWINCH}};
  return kNames;
}

Result<int> ParseSignal(const std::string& text) {
  std::string t = text;
  for (char& c : t) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (t.rfind("SIG", 0) == 0) t = t.substr(3);
  if (auto it = SignalNames().find(t); it != SignalNames().end()) return it->second;
  char* end = nullptr;
  const long n = std::strtol(text.c_str(), &end, 10);
  if (!text.empty() && *end == '\0' && n > 0 && n < NSIG) return static_cast<int>(n);
  return Status(Code::kBadConfig,
                Quote(text) + " is not a signal (e.g. SIGTERM, TERM, 15, SIGINT, SIGQUIT)");
}

std::string SignalText(int signo) {
  for (const auto& [name, number] : SignalNames()) {
    if (number == signo) return "SIG" + name;
  }
  return std::to_string(signo);
}

// The gate's settings as given; each default from the struct where its meaning lives.
struct GateDraft {
  gate::GateOptions options;  // stop signal, stop-grace, poll interval
  std::string address = kDefaultHttpAddress;
  // "" = none ("off"); nullopt = the default, gate::kStatusFileName beside this binary.
  std::optional<std::string> status_file;
  LogSettings log;
};
using Row = Option<GateDraft>;

Result<Duration> ParseBoundedDuration(const std::string& text) {
  auto d = ParseGoDuration(text);
  if (!d.ok()) return Status(Code::kBadConfig, d.status().message());
  return d;
}

// `leasehold gate`'s settings, in --help order. A help's '\n' breaks its column's line.
const OptionTable<GateDraft>& GateTable() {
  static const OptionTable<GateDraft> table{
      "leasehold gate",
      "LEASEHOLD_GATE_",
      {
          Row("address", "ADDR",
              [](const std::string& t, GateDraft& d) {
                d.address =
                    t;  // every endpoint, in order, as `leasehold probe` asks (SidecarTargets)
                return contract::SidecarTargets(t).status();
              })
              .Fallback("LEASEHOLD_HTTP_ADDRESS")
              .Default([](const GateDraft& d) { return d.address; })
              .Help("the sidecar's local API (default ${fallback}, else\n{default})")
              .Summary(
                  "the sidecar's local API: every endpoint of the address in order (`localhost` "
                  "is 127.0.0.1, then ::1; a wildcard is asked on loopback), the next one when "
                  "one cannot be reached; the same rule as `leasehold probe`"),
          Row("stop-signal", "SIG",
              [](const std::string& t, GateDraft& d) {
                auto s = ParseSignal(t);
                if (s.ok()) d.options.core.stop_signal = *s;
                return s.status();
              })
              .Default([](const GateDraft& d) { return SignalText(d.options.core.stop_signal); })
              .Help("the first signal to stop CMD (default {default})")
              .Summary("the first signal of a stop"),
          Row("stop-grace", "D",
              [](const std::string& t, GateDraft& d) {
                auto v = ParseBoundedDuration(t);
                if (!v.ok()) return v.status();
                // "10m": Go would print kMaxStopGrace as "10m0s".
                if (*v > kMaxStopGrace) return Status(Code::kBadConfig, "at most 10m");
                d.options.core.stop_grace = *v;
                return Status::Ok();
              })
              .Default(
                  [](const GateDraft& d) { return FormatGoDuration(d.options.core.stop_grace); })
              .Help("stop signal to SIGKILL (default {default}); at most\n"
                    "(renew-deadline - renew interval) / 2 - 250ms of the sidecar,\n"
                    "checked at start and whenever its timings change (if not: CMD\n"
                    "is stopped, exit 2)")
              .Summary("stop signal to SIGKILL; fits the sidecar's default timings with "
                       "--renew-interval=retry-period, which the gate component sets"),
          Row("poll-interval", "D",
              [](const std::string& t, GateDraft& d) {
                auto v = ParseBoundedDuration(t);
                if (!v.ok()) return v.status();
                if (*v < kMinPollInterval || *v > kMaxPollInterval) {
                  return Status(Code::kBadConfig, "must be between " +
                                                      FormatGoDuration(kMinPollInterval) + " and " +
                                                      FormatGoDuration(kMaxPollInterval));
                }
                d.options.poll_interval = *v;
                return Status::Ok();
              })
              .Default([](const GateDraft& d) { return FormatGoDuration(d.options.poll_interval); })
              .Help("GET /leader while the stream is unavailable (default {default})")
              .Summary("`GET /leader` while the stream is unavailable"),
          Row("status-file", "PATH",
              [](const std::string& t, GateDraft& d) {
                d.status_file = t == "off" ? "" : t;
                return Status::Ok();
              })
              .Default([](const GateDraft&) { return std::string(gate::kStatusFileName); })
              .Help("status for `leasehold gate-probe` (default {default} beside\n"
                    "this binary; \"off\" for none)")
              .Summary(
                  "for `gate-probe`, beside the binary (the emptyDir) by default; `off` for none"),
          LogFormatOption<GateDraft>("F", "text or json (default {default})")
              .Summary("as the agent's"),
          LogLevelOption<GateDraft>("L", "trace, debug, info, warn, error (default {default})")
              .Summary("as the agent's"),
      }};
  return table;
}

}  // namespace

std::vector<SettingDoc> GateSettings() { return Describe(GateTable()); }

std::string GateHelp() {
  return kGateHelpHead + RenderColumns(GateSettings(), kHelpColumn) + kGateHelpTail;
}

Result<GateCommand> ParseGateCommand(const std::vector<std::string>& args, const Environment& env,
                                     const std::string& exe_dir) {
  GateCommand c;
  const Result<Arguments> given =
      ScanArguments(GateSettings(), args, ScanRules("leasehold gate", true));
  if (!given.ok()) return given.status();
  if (given->help) {
    c.output = GateHelp();
    return c;
  }
  GateDraft d;
  d.options.command = given->command;
  if (Status st = ReadOptions(GateTable(), given->LastValues(), env, d); !st.ok()) return st;
  // Checked by the address's parser, or the default.
  auto targets = contract::SidecarTargets(d.address);
  if (!targets.ok()) return Status(Code::kFailedPrecondition, targets.status().message());
  d.options.sidecars = std::move(targets).value();
  d.options.status_file = d.status_file     ? *d.status_file
                          : exe_dir.empty() ? ""
                                            : exe_dir + "/" + gate::kStatusFileName;
  c.options = std::move(d.options);
  c.log = d.log;
  c.warnings = UnknownVariableWarnings(env, AllSettings(), "leasehold gate");
  return c;
}

int RunGateCommand(const std::vector<std::string>& args, const Environment& env) {
  const Result<GateCommand> c = ParseGateCommand(args, env, ExecutableDir());
  if (std::optional<int> code = ExitBeforeRunning("leasehold gate", c)) return *code;
  SetupLogging(c->log.format, c->log.level);
  for (const std::string& warning : c->warnings) spdlog::warn("{}", warning);
  return gate::RunGate(c->options);
}

}  // namespace leasehold::app
