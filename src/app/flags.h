// The agent's command line and environment → AppConfig. Pure: the process environment, files
// and randomness come in through Environment, and nothing here exits or prints. Its settings are
// declared once, in flags.cpp's option table (app/options.h).
//
// Every flag --some-flag can also be set with LEASEHOLD_SOME_FLAG; the flag wins, and an
// empty variable counts as unset. Aliases (--election, --id) have no variables of their own.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "app/options.h"
#include "base/listen_address.h"
#include "base/status.h"
#include "election/config.h"
#include "election/lock.h"
#include "election/observer.h"
#include "kube/cluster_config.h"
#include "localapi/watch_hub.h"

namespace leasehold::app {

enum class LogFormat { kText, kJson };
// --agent-mode: contend for the lock (Elector), or only read a lock another program elects with
// (Observer, election/observer.h).
enum class AgentMode { kElect, kObserve };
enum class LogLevel { kTrace, kDebug, kInfo, kWarn, kError };

const char* LogFormatName(LogFormat format);
const char* AgentModeName(AgentMode mode);  // "elect", "observe"
const char* LogLevelName(LogLevel level);

// --log-format and --log-level values, for the agent, `gate` and `probe` alike: the one home of
// their error messages (kBadConfig, naming the value and the accepted ones), which callers
// prefix with the setting's origin.
Result<LogFormat> ParseLogFormat(const std::string& text);
Result<LogLevel> ParseLogLevel(const std::string& text);

// --log-format and --log-level, of every command that logs (the agent, `gate`).
struct LogSettings {
  LogFormat format = LogFormat::kText;
  LogLevel level = LogLevel::kInfo;
};

// The --log-format and --log-level rows of a command whose draft holds a `LogSettings log`: the
// flag, the parser and the default once; `arg` and `help` as the command's --help shows them.
template <typename Draft, typename T, T LogSettings::*field, Result<T> (*parse)(const std::string&),
          const char* (*name)(T)>
Option<Draft> LogOption(const char* flag, const char* arg, const char* help) {
  return Option<Draft>(flag, arg,
                       [](const std::string& t, Draft& d) {
                         Result<T> v = parse(t);
                         if (v.ok()) d.log.*field = *v;
                         return v.status();
                       })
      .Default([](const Draft& d) { return std::string(name(d.log.*field)); })
      .Help(help);
}
template <typename Draft>
Option<Draft> LogFormatOption(const char* arg, const char* help) {
  return LogOption<Draft, LogFormat, &LogSettings::format, ParseLogFormat, LogFormatName>(
      "log-format", arg, help);
}
template <typename Draft>
Option<Draft> LogLevelOption(const char* arg, const char* help) {
  return LogOption<Draft, LogLevel, &LogSettings::level, ParseLogLevel, LogLevelName>("log-level",
                                                                                      arg, help);
}

// The lock contended for.
struct LockSettings {
  std::string name;  // --lock-name: a DNS-1123 subdomain
  election::LockType type = election::LockType::kAuto;
  std::string name_space;  // a DNS-1123 label
  // Where name_space came from: "--namespace", "LEASEHOLD_NAMESPACE", "POD_NAMESPACE", the
  // service-account file's path, or "default" when nothing named one. Only in the last case
  // does Main let the kubeconfig context's namespace take over.
  std::string namespace_source;
};

// The local API and the sinks beside it.
struct LocalApiSettings {
  std::string http_address = kDefaultHttpAddress;  // checked by ParseListenAddress
  // Most open GET /leader/watch streams; 0 turns the stream off. 0..10000.
  int max_watchers = localapi::WatchHubOptions{}.max_watchers;
  // --status-file; "" = none. Free of control characters; Main writes it once at start, which
  // checks the rest.
  std::string status_file;
  // --probe-address; "" = no probe listener. Checked by ParseListenAddress.
  std::string probe_address;
};

// What this pod carries while it leads, and the pod.
struct LeaderPodSettings {
  // --leader-label; "" = none. A valid label key.
  std::string label;
  // --deletion-cost; none = off. 1 to INT32_MAX.
  std::optional<int32_t> deletion_cost;
  // With either set, pod_name is set (from POD_NAME) and pod_namespace is POD_NAMESPACE, or ""
  // when unset: the pod is in the lock's namespace.
  std::string pod_name;
  std::string pod_namespace;
};

// Every part of AppConfig but the election's: the option rows parse straight into these (each
// default is the one its struct holds), and the rules across settings fill in the rest (the
// lock's namespace, the labelled pod).
struct AppSettings {
  LockSettings lock;
  LocalApiSettings local_api;
  LeaderPodSettings leader_pod;
  kube::LoadOptions kube;  // --kubeconfig, --context, --serviceaccount-dir
  LogSettings log;
};

// Valid or nonexistent: ParseCommandLine builds it only once every value checked out, and sets
// every field (the defaults are its structs', which flags.cpp's option table prints in --help).
struct AppConfig : AppSettings {
  AppConfig(election::ElectionConfig e, AppSettings settings)
      : AppSettings(std::move(settings)), election(std::move(e)) {}

  // Identity, timings, release mode and hold-off (ElectionConfig::Create checked them).
  election::ElectionConfig election;
  AgentMode mode = AgentMode::kElect;  // --agent-mode
  // kObserve only: which holder is this pod (checked: it can match one pod's holder only).
  election::HolderMatch observe_match;
};

struct Command {
  // Set: run the agent with it. Unset: print `output` to stdout and exit 0 (--help, --version).
  std::optional<AppConfig> config;
  std::string output;
  // One line each, for Main to log as warnings once logging is set up (so they follow
  // --log-format): a flag given more than once (command line and/or its LEASEHOLD_* variable),
  // naming the value that wins; a LEASEHOLD_* variable no setting reads that is a near miss of
  // one (UnknownVariableWarnings, app/options.h), naming it.
  std::vector<std::string> warnings;
};

// `args` excludes the program name. On error (kBadConfig) the message is one line naming the
// flag (and the variable, when the value came from one), without a "leasehold: " prefix, e.g.
//   --lease-duration: "15x" is not a duration (examples: 15s, 1m30s, 500ms)
// When several are bad, the first reported is: the first setting in --help order whose own
// value is bad (or the missing --lock-name; before any value, a flag the scanner rejects:
// ScanArguments, app/options.h), else the namespace found in the environment
// (POD_NAMESPACE, the service-account file), else --leader-label's pod, else the rules across
// the timings (ElectionConfig::Create, then the product's floors, election::kMinRetryPeriod
// etc., with the reason). A flag given more than once keeps its last command-line value (the Helm
// chart's sidecar.extraArgs appends overrides), and the command line beats the variable.
Result<Command> ParseCommandLine(const std::vector<std::string>& args, const Environment& env);

// LEASEHOLD_ + upper-case flag name with dashes as underscores: "lease-duration" →
// "LEASEHOLD_LEASE_DURATION".
std::string EnvVarFor(const std::string& flag);

}  // namespace leasehold::app
