#include "app/flags.h"

// GCC 12 with -fsanitize=address reports a false -Wmaybe-uninitialized inside <regex>, which
// cxxopts uses; the instantiation lands at the end of this file, so the whole file is covered.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cxxopts.hpp>
#include <random>
#include <sstream>
#include <string_view>

#include "base/duration.h"
#include "base/file.h"
#include "base/listen_address.h"
#include "base/text.h"
#include "base/version.h"
#include "kube/names.h"
#include "localapi/routes.h"
#include "locks/lock_type.h"

namespace leasehold::app {
namespace {

constexpr const char* kDurationExamples = "(examples: 15s, 1m30s, 500ms)";
constexpr const char* kDefaultServiceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount";

// One flag as the user supplied it (or did not).
struct Value {
  bool set = false;
  std::string text;
  // Names the source in messages: "--lease-duration" or
  // "LEASEHOLD_LEASE_DURATION (--lease-duration)".
  std::string origin;
};

Status Invalid(const Value& v, const std::string& what) {
  return Status(Code::kBadConfig, v.origin + ": " + what);
}

std::string Trim(std::string s) {
  const char* ws = " \t\r\n";
  s.erase(0, s.find_first_not_of(ws));
  const size_t end = s.find_last_not_of(ws);
  s.erase(end == std::string::npos ? 0 : end + 1);
  return s;
}

// cxxopts quotes names with typographic quotes; messages here use plain ones.
std::string PlainQuotes(std::string s) {
  for (const char* q : {"\xe2\x80\x98", "\xe2\x80\x99"}) {
    for (size_t at = s.find(q); at != std::string::npos; at = s.find(q)) s.replace(at, 3, "\"");
  }
  return s;
}

bool HasControl(const std::string& s) {
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (c < 0x20 || c == 0x7f) return true;
  }
  return false;
}

Result<Duration> DurationFlag(const Value& v, Duration fallback) {
  if (!v.set) return fallback;
  auto d = ParseGoDuration(v.text);
  if (!d.ok()) return Invalid(v, d.status().message() + " " + kDurationExamples);
  return d;
}

constexpr const char* kHelpFooter = R"(
Durations use Go syntax: 15s, 1m30s, 500ms, 1h, 2.5s.

Local API (GET unless noted):
)";

// After the routes (localapi::RoutesHelp(), from the route table).
constexpr const char* kHelpTail = R"(
Probe without curl: leasehold probe [--leader] [--address ADDR] asks /readyz (or /is-leader)
with a 1s timeout and exits 0 on 200, else 1 (see leasehold probe --help).

Gate a program that cannot ask: leasehold gate [FLAGS] -- CMD [ARGS...] runs CMD only while this
pod leads, and stops it before the last validUntil it received (see leasehold gate --help);
leasehold gate-probe [--ready] is its exec probe, leasehold install DIR copies this binary.

Signals: the first SIGTERM/SIGINT stops and releases as --release-on-shutdown says; a second
one exits at once (code 1) without releasing.
Exit codes: 0 stopped cleanly, 1 cannot run, 2 invalid flags or API configuration.
)";

// One flag, for both cxxopts and the help text (cxxopts' own help shows no aliases).
struct FlagSpec {
  const char* name;
  const char* alias;  // "" if none
  const char* arg;    // "" for a switch
  const char* help;
  const char* dflt;  // "" if none worth printing
};

// clang-format off
const FlagSpec kFlags[] = {
    {"lock-name", "election", "NAME",
     "Name of the lock object to contend for; every replica names the same one. Required.", ""},
    {"namespace", "", "NS", "Namespace of the lock object.",
     "$POD_NAMESPACE, else the service-account directory's namespace file, else the kubeconfig "
     "context's namespace, else \"default\""},
    {"identity", "id", "ID",
     "This replica's name in the lock. It must be unique: two processes with one identity would "
     "both believe they lead, since each sees its own name as the holder.",
     "$POD_NAME (else the host name) followed by \"_\" and 8 random hex digits, new at every "
     "start as client-go does, so a restarted container waits out its predecessor's lease"},
    {"lock-type", "", "TYPE",
     "Kind of lock object: auto, leases, configmaps, endpoints, configmapsleases, "
     "endpointsleases or none. auto uses the Lease where the cluster serves Leases, the ConfigMap "
     "where it does not, and both while an older ConfigMap lock of the same name exists (so "
     "replicas still using it see the same leader during an upgrade). none switches leader "
     "election off: this replica always leads and makes no API call (no RBAC, no token); more "
     "than one replica would each act as leader.",
     "auto"},
    {"lease-duration", "", "DURATION",
     "How long rivals wait, after they last saw the record change, before taking the lock. Whole "
     "seconds, at least 3s.",
     "15s"},
    {"renew-deadline", "", "DURATION",
     "How long the leader keeps answering \"yes\" after sending its last successful renewal. At "
     "least 2s, 1s or more below --lease-duration, and above 1.2 x --retry-period.",
     "10s"},
    {"retry-period", "", "DURATION",
     "Pause between attempts (plus up to 120% jitter while acquiring). At least 1s: records "
     "keep whole seconds.",
     "2s"},
    {"release-on-shutdown", "", "safe|immediate|off",
     "What SIGTERM/SIGINT does to a held lock. safe: release once every \"yes\" already given "
     "has expired, or at once on POST /release (classic sidecars, stopped together with the main "
     "container); immediate: release at once (native sidecars, stopped after it); off: never, "
     "rivals wait for the lease to expire.",
     "safe"},
    {"release-holdoff", "", "DURATION",
     "After POST /release without a signal, stay out of the election this long.", "30s"},
    {"http-address", "", "ADDR",
     "Where the local API listens: localhost:PORT (127.0.0.1 and ::1), IPV4:PORT, [IPV6]:PORT, "
     "or :PORT (all IPv4).",
     "localhost:4040"},
    {"max-watchers", "", "N",
     "Most GET /leader/watch streams open at once (0 to 10000); one more gets 503. Each open "
     "stream holds one listener thread. 0 turns the stream off.",
     "100"},
    {"status-file", "", "PATH",
     "Also write the /leader JSON to this file, on every change and on every renew while "
     "leading, atomically (a temporary file in the same directory, then rename). A reader must "
     "treat a validUntil in the past as \"not leader\".",
     ""},
    {"probe-address", "", "ADDR",
     "A second listener, e.g. :8081, that serves only /healthz, /readyz and /is-leader, for "
     "kubelet probes on the pod IP; the full API stays on --http-address. Same forms as "
     "--http-address.",
     "off"},
    {"leader-label", "", "KEY",
     "Label this pod KEY=leader or KEY=follower (e.g. leasehold.io/role) on every change of "
     "leadership and every 60s, and KEY=follower at shutdown, so that a Service can select the "
     "leader. A routing hint, not a lock. Needs $POD_NAME (and $POD_NAMESPACE when the pod is "
     "not in the lock's namespace) and get/patch on pods (deploy/rbac/leader-label).",
     ""},
    {"kubeconfig", "", "PATH", "kubeconfig file.",
     "$KUBECONFIG, else the in-cluster service account, else ~/.kube/config"},
    {"context", "", "NAME", "kubeconfig context.", "its current-context"},
    {"serviceaccount-dir", "", "DIR",
     "Directory holding the service account's token, ca.crt and namespace.",
     kDefaultServiceAccountDir},
    {"log-format", "", "text|json",
     "Log lines on stderr: text, or json (one object per line with ts, level, msg).", "text"},
    {"log-level", "", "trace|debug|info|warn|error", "Least severe level logged.", "info"},
};
// clang-format on

// Appends `text` word-wrapped to 100 columns, each line indented by `indent` spaces.
void Wrap(std::string& out, const std::string& text, size_t indent) {
  constexpr size_t kWidth = 100;
  std::istringstream words(text);
  std::string word;
  size_t col = 0;
  while (words >> word) {
    if (col > 0 && col + 1 + word.size() > kWidth) {
      out += '\n';
      col = 0;
    }
    if (col == 0) {
      out.append(indent, ' ');
      col = indent;
    } else {
      out += ' ';
      ++col;
    }
    out += word;
    col += word.size();
  }
  out += '\n';
}

std::string HelpText() {
  std::string out =
      "leasehold contends for a Kubernetes lock (Lease, ConfigMap or Endpoints) and tells the\n"
      "main container over localhost HTTP whether its pod leads.\n\n"
      "Usage: leasehold --lock-name=NAME [flags]\n\n"
      "Flags (each one can also be set with the environment variable shown; the flag wins, and\n"
      "an empty variable counts as unset; a flag given more than once keeps its last value, with\n"
      "a warning):\n";
  for (const FlagSpec& f : kFlags) {
    out += "  --" + std::string(f.name) + " " + f.arg;
    if (*f.alias) out += ", --" + std::string(f.alias) + " " + f.arg;
    out += '\n';
    Wrap(out, f.help, 6);
    if (*f.dflt) Wrap(out, std::string("Default: ") + f.dflt + ".", 6);
    out += "      Env: " + EnvVarFor(f.name) + ".\n";
  }
  out += "  -h, --help\n      Print this help and exit.\n";
  out += "  --version\n      Print \"leasehold <version>\" and exit.\n";
  return out + kHelpFooter + localapi::RoutesHelp() + kHelpTail;
}

cxxopts::Options MakeOptions() {
  cxxopts::Options o("leasehold");
  for (const FlagSpec& f : kFlags) {
    std::string names = f.name;
    if (*f.alias) names += std::string(",") + f.alias;
    o.add_option("", {names, f.help, cxxopts::value<std::string>(), f.arg});
  }
  o.add_options()("h,help", "Print this help and exit.")("version", "Print the version.");
  return o;
}

// Levenshtein distance, for "did you mean" on a mistyped variable.
size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

// A flag given more than once: on the command line several times and/or also in its variable.
// One warning per flag, naming the value that wins (the last on the command line, which beats
// the variable; the Helm chart's sidecar.extraArgs relies on the last one winning).
void WarnRepeatedFlags(const cxxopts::ParseResult& r, const Environment& env,
                       std::vector<std::string>* warnings) {
  for (const FlagSpec& f : kFlags) {
    const size_t times = r.count(f.name);
    if (times == 0) continue;
    const std::string var = EnvVarFor(f.name);
    const std::optional<std::string> in_env = env.getenv(var);
    const bool also_env = in_env && !in_env->empty();
    if (times < 2 && !also_env) continue;
    std::string where = "--" + std::string(f.name) + " is given ";
    where +=
        times >= 2 ? std::to_string(times) + " times on the command line" : "on the command line";
    if (also_env) where += " and in " + var;
    where += times >= 2 ? "; the last one on the command line wins: " : "; the command line wins: ";
    warnings->push_back(where + Quote(r[f.name].as<std::string>()));
  }
}

// An unknown LEASEHOLD_* variable is most likely a typo that silently does nothing.
void WarnUnknownVariables(const Environment& env, std::vector<std::string>* warnings) {
  if (!env.names) return;
  // Each known variable, and the one each alias would have (they have none: name the real one).
  std::vector<std::pair<std::string, std::string>> known;  // (candidate, suggested variable)
  for (const FlagSpec& f : kFlags) {
    known.emplace_back(EnvVarFor(f.name), EnvVarFor(f.name));
    if (*f.alias) known.emplace_back(EnvVarFor(f.alias), EnvVarFor(f.name));
  }
  std::vector<std::string> names = env.names();
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  for (const std::string& name : names) {
    if (name.rfind("LEASEHOLD_", 0) != 0 || IsReservedLeaseholdVariable(name)) continue;
    bool is_flag = false;
    for (const FlagSpec& f : kFlags) is_flag = is_flag || name == EnvVarFor(f.name);
    if (is_flag) continue;
    const std::pair<std::string, std::string>* best = nullptr;
    size_t best_distance = 0;
    for (const auto& k : known) {
      const size_t d = EditDistance(name, k.first);
      if (best == nullptr || d < best_distance) {
        best = &k;
        best_distance = d;
      }
    }
    std::string flag = best->second.substr(std::string("LEASEHOLD_").size());
    std::transform(flag.begin(), flag.end(), flag.begin(), [](char c) {
      return c == '_' ? '-' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    });
    warnings->push_back(OneLine(name) +
                        " is not a leasehold variable and is ignored; did you mean " +
                        best->second + " (--" + flag + ")?");
  }
}

}  // namespace

bool IsReservedLeaseholdVariable(const std::string& name) {
  static constexpr const char* kPrefixes[] = {
      "LEASEHOLD_GATE_",   // the `gate` subcommand's, set on the gated container
      "LEASEHOLD_E2E_",    // e2e/ harness
      "LEASEHOLD_SKIP_",   // .ci and scripts/test.sh switches
      "LEASEHOLD_FUZZ",    // fuzz/ (LEASEHOLD_FUZZ, LEASEHOLD_FUZZ_*)
      "LEASEHOLD_CHAOS_",  // e2e/chaos
      "LEASEHOLD_IMAGE",   // scripts/image.sh
      "LEASEHOLD_SETUP_",  // scripts
  };
  static constexpr const char* kNames[] = {
      "LEASEHOLD_BIN",          "LEASEHOLD_INTEROP_BIN",    "LEASEHOLD_SANITIZE",
      "LEASEHOLD_BUILD_TESTS",  "LEASEHOLD_VARIANT",        "LEASEHOLD_PID",
      "LEASEHOLD_SOAK_SECONDS", "LEASEHOLD_TEST_CERTS_DIR",
  };
  for (const char* p : kPrefixes) {
    if (name.rfind(p, 0) == 0) return true;
  }
  for (const char* n : kNames) {
    if (name == n) return true;
  }
  return false;
}

const char* LogFormatName(LogFormat format) { return format == LogFormat::kJson ? "json" : "text"; }

Result<LogFormat> ParseLogFormat(const std::string& text) {
  for (const LogFormat f : {LogFormat::kText, LogFormat::kJson}) {
    if (text == LogFormatName(f)) return f;
  }
  return Status(Code::kBadConfig, Quote(text) + " is not a log format (one of: text, json)");
}

Result<LogLevel> ParseLogLevel(const std::string& text) {
  for (const LogLevel l :
       {LogLevel::kTrace, LogLevel::kDebug, LogLevel::kInfo, LogLevel::kWarn, LogLevel::kError}) {
    if (text == LogLevelName(l)) return l;
  }
  return Status(Code::kBadConfig,
                Quote(text) + " is not a log level (one of: trace, debug, info, warn, error)");
}

const char* LogLevelName(LogLevel level) {
  switch (level) {
    case LogLevel::kTrace:
      return "trace";
    case LogLevel::kDebug:
      return "debug";
    case LogLevel::kInfo:
      return "info";
    case LogLevel::kWarn:
      return "warn";
    case LogLevel::kError:
      return "error";
  }
  return "info";
}

std::string EnvVarFor(const std::string& flag) {
  std::string out = "LEASEHOLD_";
  for (const char c : flag) {
    out += c == '-' ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  }
  return out;
}

Environment RealEnvironment() {
  Environment env;
  env.getenv = [](const std::string& name) -> std::optional<std::string> {
    const char* v = std::getenv(name.c_str());
    if (v == nullptr) return std::nullopt;
    return std::string(v);
  };
  env.names = [] {
    std::vector<std::string> out;
    for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
      const std::string_view kv(*e);
      out.emplace_back(kv.substr(0, kv.find('=')));
    }
    return out;
  };
  env.read_file = [](const std::string& path) {
    return ReadRegularFile(path, kMaxNamespaceFileBytes);
  };
  env.hostname = [] {
    char buf[256] = {};
    if (gethostname(buf, sizeof buf - 1) != 0) return std::string();
    return std::string(buf);
  };
  env.random_hex8 = [] {
    std::random_device rd;
    char buf[16];
    std::snprintf(buf, sizeof buf, "%08x", static_cast<unsigned>(rd()));
    return std::string(buf);
  };
  return env;
}

namespace {

// Where each flag's value comes from: the command line, else its LEASEHOLD_* variable.
class FlagReader {
 public:
  FlagReader(const cxxopts::ParseResult& r, const Environment& env) : r_(r), env_(env) {}

  Value get(const std::string& flag) const {
    Value v;
    v.origin = "--" + flag;
    if (r_.count(flag)) {
      v.set = true;
      v.text = r_[flag].as<std::string>();
      return v;
    }
    const std::string var = EnvVarFor(flag);
    if (auto e = env_.getenv(var); e && !e->empty()) {
      v.set = true;
      v.text = *e;
      v.origin = var + " (--" + flag + ")";
    }
    return v;
  }

  // A variable that is not a flag's (POD_NAME, POD_NAMESPACE); nullopt when unset or empty.
  std::optional<std::string> from_env(const std::string& var) const {
    auto e = env_.getenv(var);
    return e && !e->empty() ? e : std::nullopt;
  }

  const Environment& env() const { return env_; }

 private:
  const cxxopts::ParseResult& r_;
  const Environment& env_;
};

// The values read so far. Each step below reads its flags in the order --help lists them, so
// the first bad one is reported; AppConfig is built from a complete draft only.
struct Draft {
  Value lock_name, ns, identity;
  std::string ns_source, sa_dir;
  locks::LockType type = locks::LockType::kAuto;
  election::Timings timings;
  election::ReleaseMode mode = election::ReleaseMode::kSafe;
  Duration holdoff{};
  std::string http_address;
  int watchers = 100;
  Value status_file, probe, label;
  std::string pod_name, pod_namespace;
  Value kubeconfig, context;
  LogFormat format = LogFormat::kText;
  LogLevel level = LogLevel::kInfo;
};

// --namespace, else POD_NAMESPACE, else the service-account directory's namespace file, else
// "default" (which the kubeconfig context's namespace may replace later, see app.cpp).
Status ReadNamespace(const FlagReader& f, const Value& sa_dir_flag, Draft& d) {
  d.ns = f.get("namespace");
  d.ns_source = d.ns.origin;
  if (!d.ns.set) {
    if (auto pod_ns = f.from_env("POD_NAMESPACE")) {
      d.ns = {true, *pod_ns, "POD_NAMESPACE (--namespace)"};
      d.ns_source = "POD_NAMESPACE";
    } else if (Result<std::string> file = f.env().read_file(d.sa_dir + "/namespace");
               file.ok() && !Trim(*file).empty()) {
      d.ns = {true, Trim(*file), d.sa_dir + "/namespace (--namespace)"};
      d.ns_source = d.sa_dir + "/namespace";
    } else if (!file.ok() && file.code() != Code::kNotFound) {
      // A FIFO, a device, a huge file: falling back to "default" would contend in the wrong
      // namespace.
      return Invalid(sa_dir_flag, "the namespace file cannot be used: " + file.status().message() +
                                      " (set --namespace, or fix the file)");
    } else {
      d.ns = {true, "default", "--namespace"};
      d.ns_source = "default";
    }
  } else if (d.ns.origin != "--namespace") {
    d.ns_source = EnvVarFor("namespace");
  }
  if (!kube::IsDns1123Label(d.ns.text)) {
    return Invalid(d.ns, Quote(d.ns.text) +
                             " is not a valid namespace (lower-case letters, digits and '-', at "
                             "most 63 characters)");
  }
  return Status::Ok();
}

// What is contended for and by whom: --lock-name, the namespace, --identity, --lock-type.
Status ReadLock(const FlagReader& f, Draft& d) {
  d.lock_name = f.get("lock-name");
  if (!d.lock_name.set) {
    return Invalid(d.lock_name,
                   "required: the name of the lock object to contend for (e.g. "
                   "--lock-name=my-app; or set LEASEHOLD_LOCK_NAME)");
  }
  if (!kube::IsDns1123Subdomain(d.lock_name.text)) {
    return Invalid(d.lock_name, Quote(d.lock_name.text) +
                                    " is not a valid object name (lower-case letters, digits, "
                                    "'-' and '.', at most 253 characters)");
  }

  const Value sa_dir_flag = f.get("serviceaccount-dir");
  d.sa_dir = sa_dir_flag.set ? sa_dir_flag.text : kDefaultServiceAccountDir;
  if (d.sa_dir.empty()) return Invalid(sa_dir_flag, "must not be empty");
  if (Status st = ReadNamespace(f, sa_dir_flag, d); !st.ok()) return st;

  d.identity = f.get("identity");
  if (d.identity.set) {
    if (d.identity.text.empty()) {
      return Invalid(d.identity, "must not be empty (it names this replica in the lock)");
    }
    if (HasControl(d.identity.text)) {
      return Invalid(d.identity, Quote(d.identity.text) + " contains control characters");
    }
  } else {
    // A fresh suffix per start: a restarted container must not inherit its predecessor's
    // claim, and must wait for it to expire like any rival.
    std::string base;
    if (auto pod = f.from_env("POD_NAME")) base = *pod;
    if (base.empty()) base = f.env().hostname();
    if (base.empty()) base = "leasehold";
    d.identity.text = base + "_" + f.env().random_hex8();
  }

  const Value lock_type = f.get("lock-type");
  const std::optional<locks::LockType> type =
      lock_type.set ? locks::ParseLockType(lock_type.text) : locks::LockType::kAuto;
  if (!type) {
    return Invalid(lock_type, Quote(lock_type.text) +
                                  " is not a lock type (one of: " + locks::LockTypeNames() + ")");
  }
  d.type = *type;
  return Status::Ok();
}

// The three timings, --release-on-shutdown and --release-holdoff.
Status ReadTimings(const FlagReader& f, Draft& d) {
  for (auto [flag, field] : {std::pair{"lease-duration", &d.timings.lease_duration},
                             std::pair{"renew-deadline", &d.timings.renew_deadline},
                             std::pair{"retry-period", &d.timings.retry_period}}) {
    auto v = DurationFlag(f.get(flag), *field);
    if (!v.ok()) return v.status();
    *field = *v;
  }

  const Value release = f.get("release-on-shutdown");
  if (release.set) {
    if (release.text == "safe") {
      d.mode = election::ReleaseMode::kSafe;
    } else if (release.text == "immediate") {
      d.mode = election::ReleaseMode::kImmediate;
    } else if (release.text == "off") {
      d.mode = election::ReleaseMode::kOff;
    } else {
      return Invalid(release,
                     Quote(release.text) + " is not a release mode (one of: safe, immediate, off)");
    }
  }

  auto holdoff = DurationFlag(f.get("release-holdoff"), std::chrono::seconds(30));
  if (!holdoff.ok()) return holdoff.status();
  d.holdoff = *holdoff;
  return Status::Ok();
}

// What this agent serves: --http-address, --max-watchers, --status-file, --probe-address.
Status ReadListeners(const FlagReader& f, Draft& d) {
  const Value http = f.get("http-address");
  d.http_address = http.set ? http.text : "localhost:4040";
  if (auto a = ParseListenAddress(d.http_address); !a.ok()) {
    return Invalid(http, a.status().message());
  }

  const Value max_watchers = f.get("max-watchers");
  if (max_watchers.set) {
    const std::string& t = max_watchers.text;
    const bool digits =
        !t.empty() && t.size() <= 5 && t.find_first_not_of("0123456789") == std::string::npos;
    if (!digits || std::stoi(t) > 10000) {
      return Invalid(max_watchers, Quote(t) + " is not a number of watchers (0 to 10000)");
    }
    d.watchers = std::stoi(t);
  }

  d.status_file = f.get("status-file");
  if (d.status_file.set && HasControl(d.status_file.text)) {
    return Invalid(d.status_file, Quote(d.status_file.text) + " contains control characters");
  }

  d.probe = f.get("probe-address");
  if (d.probe.set) {
    auto a = ParseListenAddress(d.probe.text);
    if (!a.ok()) return Invalid(d.probe, a.status().message());
  }
  return Status::Ok();
}

// --leader-label and the pod it labels (POD_NAME, POD_NAMESPACE from the downward API).
Status ReadLeaderLabel(const FlagReader& f, Draft& d) {
  d.label = f.get("leader-label");
  if (!d.label.set) return Status::Ok();
  if (std::string why = kube::LabelKeyProblem(d.label.text); !why.empty()) {
    return Invalid(d.label, Quote(d.label.text) + " is not a label key: " + why +
                                " (example: leasehold.io/role)");
  }
  auto pod = f.from_env("POD_NAME");
  if (!pod) {
    return Invalid(d.label,
                   "needs POD_NAME, the name of this pod (set it from the downward API: "
                   "valueFrom.fieldRef.fieldPath: metadata.name)");
  }
  if (!kube::IsDns1123Subdomain(*pod)) {
    return Invalid(d.label, "POD_NAME " + Quote(*pod) + " is not a valid pod name");
  }
  d.pod_name = *pod;
  d.pod_namespace = f.from_env("POD_NAMESPACE").value_or("");
  if (!d.pod_namespace.empty() && !kube::IsDns1123Label(d.pod_namespace)) {
    return Invalid(d.label,
                   "POD_NAMESPACE " + Quote(d.pod_namespace) + " is not a valid namespace");
  }
  return Status::Ok();
}

// --kubeconfig, --context, --log-format, --log-level.
Status ReadClientAndLogging(const FlagReader& f, Draft& d) {
  d.kubeconfig = f.get("kubeconfig");
  d.context = f.get("context");

  const Value log_format = f.get("log-format");
  if (log_format.set) {
    Result<LogFormat> format = ParseLogFormat(log_format.text);
    if (!format.ok()) return Invalid(log_format, format.status().message());
    d.format = *format;
  }
  const Value log_level = f.get("log-level");
  if (log_level.set) {
    Result<LogLevel> level = ParseLogLevel(log_level.text);
    if (!level.ok()) return Invalid(log_level, level.status().message());
    d.level = *level;
  }
  return Status::Ok();
}

// The validated draft as an AppConfig; the timing rules live with the algorithm, and its
// messages name the flags.
Result<AppConfig> Assemble(Draft d) {
  auto election = election::ElectionConfig::Create(d.identity.text, d.timings, d.mode, d.holdoff);
  if (!election.ok()) return election.status();
  // The product's floors, here and not in ElectionConfig::Create (see election/config.h).
  if (Status floors = election::ElectionConfig::CheckFloors(d.timings); !floors.ok()) {
    return floors;
  }
  AppConfig config(std::move(election).value());
  config.lock_name = d.lock_name.text;
  config.name_space = d.ns.text;
  config.namespace_source = d.ns_source;
  config.lock_type = d.type;
  config.http_address = d.http_address;
  config.max_watchers = d.watchers;
  config.status_file = d.status_file.text;
  config.probe_address = d.probe.text;
  config.leader_label = d.label.text;
  config.pod_name = d.pod_name;
  config.pod_namespace = d.pod_namespace;
  config.kube.kubeconfig = d.kubeconfig.text;
  config.kube.context = d.context.text;
  config.kube.serviceaccount_dir = d.sa_dir;
  config.log_format = d.format;
  config.log_level = d.level;
  return config;
}

}  // namespace

Result<Command> ParseCommandLine(const std::vector<std::string>& args, const Environment& env) {
  cxxopts::Options options = MakeOptions();
  std::vector<const char*> argv = {"leasehold"};
  for (const std::string& a : args) argv.push_back(a.c_str());

  std::optional<cxxopts::ParseResult> parsed;
  try {
    parsed.emplace(options.parse(static_cast<int>(argv.size()), argv.data()));
  } catch (const cxxopts::exceptions::exception& e) {
    return Status(Code::kBadConfig, OneLine(PlainQuotes(e.what())) + " (see leasehold --help)");
  }
  const cxxopts::ParseResult& r = *parsed;
  if (!r.unmatched().empty()) {
    return Status(Code::kBadConfig, "unexpected argument " + Quote(r.unmatched().front()) +
                                        ": leasehold takes flags only (see leasehold --help)");
  }

  Command command;
  if (r.count("help")) {
    command.output = HelpText();
    return command;
  }
  if (r.count("version")) {
    command.output = std::string("leasehold ") + kVersion + "\n";
    return command;
  }

  const FlagReader flags(r, env);
  Draft draft;
  for (Status (*step)(const FlagReader&, Draft&) :
       {ReadLock, ReadTimings, ReadListeners, ReadLeaderLabel, ReadClientAndLogging}) {
    if (Status st = step(flags, draft); !st.ok()) return st;
  }
  Result<AppConfig> config = Assemble(std::move(draft));
  if (!config.ok()) return config.status();
  command.config.emplace(std::move(config).value());
  WarnRepeatedFlags(r, env, &command.warnings);
  WarnUnknownVariables(env, &command.warnings);
  return command;
}

}  // namespace leasehold::app
