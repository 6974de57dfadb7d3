#include "app/flags.h"

// GCC 12 with -fsanitize=address reports a false -Wmaybe-uninitialized inside <regex>, which
// cxxopts uses; the instantiation lands at the end of this file, so the whole file is covered.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include <cxxopts.hpp>
#include <sstream>

#include "app/settings.h"
#include "base/duration.h"
#include "base/listen_address.h"
#include "base/text.h"
#include "base/version.h"
#include "kube/names.h"
#include "localapi/routes.h"
#include "localapi/watch_hub.h"
#include "locks/lock_type.h"

namespace leasehold::app {
namespace {

constexpr const char* kDurationExamples = "(examples: 15s, 1m30s, 500ms)";
// --max-watchers' bound: each stream holds a socket and an eventfd.
constexpr int kMaxWatchers = 10000;

// Every setting of the agent as given, each default from the struct where its meaning lives;
// Assemble turns a complete draft into an AppConfig.
struct Draft {
  std::string lock_name;  // required
  std::optional<std::string> ns;
  std::optional<std::string> identity;
  locks::LockType type = locks::LockType::kAuto;
  Duration lease = election::Timings{}.lease_duration;
  Duration renew = election::Timings{}.renew_deadline;
  Duration retry = election::Timings{}.retry_period;
  election::ReleaseMode mode = election::ReleaseMode::kSafe;
  AgentMode agent_mode = AgentMode::kElect;
  election::MatchRule observe_rule = election::MatchRule::kPod;
  Duration holdoff = election::kDefaultReleaseHoldoff;
  std::string http_address = kDefaultHttpAddress;
  int watchers = localapi::WatchHubOptions{}.max_watchers;
  std::string status_file;
  std::string probe_address;
  std::string leader_label;
  kube::LoadOptions kube;  // --kubeconfig, --context, --serviceaccount-dir
  LogFormat format = LogFormat::kText;
  LogLevel level = LogLevel::kInfo;
};

bool HasControl(const std::string& s) {
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (c < 0x20 || c == 0x7f) return true;
  }
  return false;
}

Status Bad(const std::string& message) { return Status(Code::kBadConfig, message); }

Result<Duration> ParseDuration(const std::string& text) {
  auto d = ParseGoDuration(text);
  if (!d.ok()) return Bad(d.status().message() + " " + kDurationExamples);
  return d;
}

// A namespace from anywhere (--namespace, POD_NAMESPACE, the service-account file).
Status CheckNamespace(const std::string& ns) {
  if (kube::IsDns1123Label(ns)) return Status::Ok();
  return Bad(Quote(ns) +
             " is not a valid namespace (lower-case letters, digits and '-', at most 63 "
             "characters)");
}

Status CheckListenAddress(const std::string& text) {
  auto a = ParseListenAddress(text);
  return a.ok() ? Status::Ok() : Bad(a.status().message());
}

// The agent's settings, in --help order (the order they are read in, so the first bad one is
// the error). Help texts are wrapped to 100 columns by HelpText.
const OptionTable<Draft>& AgentTable() {
  // clang-format off
  static const OptionTable<Draft> table{"leasehold", kVariablePrefix, {
    {"lock-name", "election", "NAME", kOwnVariable, "",
     "the name of the lock object to contend for (e.g. --lock-name=my-app; or set {env})", nullptr,
     [](const std::string& t, Draft& d) {
       if (!kube::IsDns1123Subdomain(t)) {
         return Bad(Quote(t) + " is not a valid object name (lower-case letters, digits, '-' and "
                               "'.', at most 253 characters)");
       }
       d.lock_name = t;
       return Status::Ok();
     },
     "Name of the lock object to contend for; every replica names the same one. Required.", ""},
    {"namespace", "", "NS", kOwnVariable, "", "",
     [](const Draft&) -> std::string {
       return "$POD_NAMESPACE, else the service-account directory's namespace file, else the "
              "kubeconfig context's namespace, else \"default\"";
     },
     [](const std::string& t, Draft& d) {
       d.ns = t;
       return CheckNamespace(t);
     },
     "Namespace of the lock object.", ""},
    {"identity", "id", "ID", kOwnVariable, "", "",
     [](const Draft&) -> std::string {
       return "$POD_NAME (else the host name) followed by \"_\" and 8 random hex digits, new at "
              "every start as client-go does, so a restarted container waits out its "
              "predecessor's lease";
     },
     [](const std::string& t, Draft& d) {
       if (t.empty()) return Bad("must not be empty (it names this replica in the lock)");
       if (HasControl(t)) return Bad(Quote(t) + " contains control characters");
       d.identity = t;
       return Status::Ok();
     },
     "This replica's name in the lock. It must be unique: two processes with one identity would "
     "both believe they lead, since each sees its own name as the holder.", ""},
    {"lock-type", "", "TYPE", kOwnVariable, "", "",
     [](const Draft& d) { return std::string(locks::LockTypeName(d.type)); },
     [](const std::string& t, Draft& d) {
       const std::optional<locks::LockType> type = locks::ParseLockType(t);
       if (!type) return Bad(Quote(t) + " is not a lock type (one of: " + locks::LockTypeNames() + ")");
       d.type = *type;
       return Status::Ok();
     },
     "Kind of lock object: auto, leases, configmaps, endpoints, configmapsleases, "
     "endpointsleases or none. auto uses the Lease where the cluster serves Leases, the ConfigMap "
     "where it does not, and both while an older ConfigMap lock of the same name exists (so "
     "replicas still using it see the same leader during an upgrade). none switches leader "
     "election off: this replica always leads and makes no API call (no RBAC, no token); more "
     "than one replica would each act as leader.", ""},
    {"agent-mode", "", "elect|observe", kOwnVariable, "", "",
     [](const Draft& d) { return std::string(AgentModeName(d.agent_mode)); },
     [](const std::string& t, Draft& d) {
       for (const AgentMode m : {AgentMode::kElect, AgentMode::kObserve}) {
         if (t == AgentModeName(m)) {
           d.agent_mode = m;
           return Status::Ok();
         }
       }
       return Bad(Quote(t) + " is not a mode (one of: elect, observe)");
     },
     "elect: contend for the lock. observe: never write it; read and watch a lock that another "
     "program in this pod elects with (a controller-runtime or client-go operator), and report "
     "whether this pod holds it (see --observe-identity). A \"yes\" then ends at most "
     "--renew-deadline after the send of the last read that showed an older version of the "
     "record (docs/safety.md, \"Observe mode\"); safe only beside electors that do not release "
     "the lock on shutdown (controller-runtime's default).",
     "`elect` contends for the lock; `observe` only reads a lock another program elects with"},
    {"observe-identity", "", "pod|exact", kOwnVariable, "", "",
     [](const Draft& d) { return std::string(election::MatchRuleName(d.observe_rule)); },
     [](const std::string& t, Draft& d) {
       for (const election::MatchRule r : {election::MatchRule::kPod, election::MatchRule::kExact}) {
         if (t == election::MatchRuleName(r)) {
           d.observe_rule = r;
           return Status::Ok();
         }
       }
       return Bad(Quote(t) + " is not a rule (one of: pod, exact)");
     },
     "With --agent-mode observe, which holder is this pod. pod: the holder is $POD_NAME or starts with "
     "$POD_NAME and \"_\" (controller-runtime's <hostname>_<uuid>; pod names cannot contain "
     "\"_\", so one holder names at most one pod of a namespace). exact: the holder is --identity.",
     "with `--agent-mode observe`: `pod` (holder is `POD_NAME` or `POD_NAME_…`) or `exact` (`--identity`)"},
    {"lease-duration", "", "DURATION", kOwnVariable, "", "",
     [](const Draft& d) { return FormatGoDuration(d.lease); },
     Store<Draft, Duration, &Draft::lease, ParseDuration>,
     "How long rivals wait, after they last saw the record change, before taking the lock. Whole "
     "seconds, at least 3s.", ""},
    {"renew-deadline", "", "DURATION", kOwnVariable, "", "",
     [](const Draft& d) { return FormatGoDuration(d.renew); },
     Store<Draft, Duration, &Draft::renew, ParseDuration>,
     "How long the leader keeps answering \"yes\" after sending its last successful renewal. At "
     "least 2s, 1s or more below --lease-duration, and above 1.2 x --retry-period.", ""},
    {"retry-period", "", "DURATION", kOwnVariable, "", "",
     [](const Draft& d) { return FormatGoDuration(d.retry); },
     Store<Draft, Duration, &Draft::retry, ParseDuration>,
     "Pause between attempts (plus up to 120% jitter while acquiring). At least 1s: records "
     "keep whole seconds.", ""},
    {"release-on-shutdown", "", "safe|immediate|off", kOwnVariable, "", "",
     [](const Draft& d) { return std::string(election::ReleaseModeName(d.mode)); },
     [](const std::string& t, Draft& d) {
       for (const election::ReleaseMode m : {election::ReleaseMode::kSafe,
                                             election::ReleaseMode::kImmediate,
                                             election::ReleaseMode::kOff}) {
         if (t == election::ReleaseModeName(m)) {
           d.mode = m;
           return Status::Ok();
         }
       }
       return Bad(Quote(t) + " is not a release mode (one of: safe, immediate, off)");
     },
     "What SIGTERM/SIGINT does to a held lock. safe: release once every \"yes\" already given "
     "has expired, or at once on POST /release (classic sidecars, stopped together with the main "
     "container); immediate: release at once (native sidecars, stopped after it); off: never, "
     "rivals wait for the lease to expire.", ""},
    {"release-holdoff", "", "DURATION", kOwnVariable, "", "",
     [](const Draft& d) { return FormatGoDuration(d.holdoff); },
     Store<Draft, Duration, &Draft::holdoff, ParseDuration>,
     "After POST /release without a signal, stay out of the election this long.", ""},
    {"http-address", "", "ADDR", kOwnVariable, "", "",
     [](const Draft& d) { return d.http_address; },
     [](const std::string& t, Draft& d) {
       d.http_address = t;
       return CheckListenAddress(t);
     },
     "Where the local API listens: localhost:PORT (127.0.0.1 and ::1), IPV4:PORT, [IPV6]:PORT, "
     "or :PORT (all IPv4).", ""},
    {"max-watchers", "", "N", kOwnVariable, "", "",
     [](const Draft& d) { return std::to_string(d.watchers); },
     [](const std::string& t, Draft& d) {
       const bool digits =
           !t.empty() && t.size() <= 5 && t.find_first_not_of("0123456789") == std::string::npos;
       if (!digits || std::stoi(t) > kMaxWatchers) {
         return Bad(Quote(t) + " is not a number of watchers (0 to " +
                    std::to_string(kMaxWatchers) + ")");
       }
       d.watchers = std::stoi(t);
       return Status::Ok();
     },
     "Most GET /leader/watch streams open at once (0 to 10000); one more gets 503. Each open "
     "stream holds one listener thread. 0 turns the stream off.",
     "most `GET /leader/watch` streams at once (0–10000; 0 turns the stream off)"},
    {"status-file", "", "PATH", kOwnVariable, "", "", nullptr,
     [](const std::string& t, Draft& d) {
       if (HasControl(t)) return Bad(Quote(t) + " contains control characters");
       d.status_file = t;
       return Status::Ok();
     },
     "Also write the /leader JSON to this file, on every change and on every renew while "
     "leading, atomically (a temporary file in the same directory, then rename). A reader must "
     "treat a validUntil in the past as \"not leader\".",
     ""},
    {"probe-address", "", "ADDR", kOwnVariable, "", "",
     [](const Draft& d) { return d.probe_address.empty() ? std::string("off") : d.probe_address; },
     [](const std::string& t, Draft& d) {
       d.probe_address = t;
       return CheckListenAddress(t);
     },
     "A second listener, e.g. :8081, that serves only /healthz, /readyz and /is-leader, for "
     "kubelet probes on the pod IP; the full API stays on --http-address. Same forms as "
     "--http-address.",
     "a probe-only listener, e.g. `:8081` (same forms as `--http-address`)"},
    {"leader-label", "", "KEY", kOwnVariable, "", "", nullptr,
     [](const std::string& t, Draft& d) {
       if (std::string why = kube::LabelKeyProblem(t); !why.empty()) {
         return Bad(Quote(t) + " is not a label key: " + why + " (example: leasehold.io/role)");
       }
       d.leader_label = t;
       return Status::Ok();
     },
     "Label this pod KEY=leader or KEY=follower (e.g. leasehold.io/role) on every change of "
     "leadership and every 60s, and KEY=follower at shutdown, so that a Service can select the "
     "leader. A routing hint, not a lock. Needs $POD_NAME (and $POD_NAMESPACE when the pod is "
     "not in the lock's namespace) and get/patch on pods (deploy/rbac/leader-label).",
     "label this pod `KEY=leader`/`follower`, e.g. `leasehold.io/role`; needs `POD_NAME`"},
    {"kubeconfig", "", "PATH", kOwnVariable, "", "",
     [](const Draft&) -> std::string {
       return "$KUBECONFIG, else the in-cluster service account, else ~/.kube/config";
     },
     [](const std::string& t, Draft& d) {
       d.kube.kubeconfig = t;
       return Status::Ok();
     },
     "kubeconfig file.", ""},
    {"context", "", "NAME", kOwnVariable, "", "",
     [](const Draft&) -> std::string { return "its current-context"; },
     [](const std::string& t, Draft& d) {
       d.kube.context = t;
       return Status::Ok();
     },
     "kubeconfig context.", ""},
    {"serviceaccount-dir", "", "DIR", kOwnVariable, "", "",
     [](const Draft& d) { return d.kube.serviceaccount_dir; },
     [](const std::string& t, Draft& d) {
       if (t.empty()) return Bad("must not be empty");
       d.kube.serviceaccount_dir = t;
       return Status::Ok();
     },
     "Directory holding the service account's token, ca.crt and namespace.", ""},
    {"log-format", "", "text|json", kOwnVariable, "", "",
     [](const Draft& d) { return std::string(LogFormatName(d.format)); },
     Store<Draft, LogFormat, &Draft::format, ParseLogFormat>,
     "Log lines on stderr: text, or json (one object per line with ts, level, msg).", ""},
    {"log-level", "", "trace|debug|info|warn|error", kOwnVariable, "", "",
     [](const Draft& d) { return std::string(LogLevelName(d.level)); },
     Store<Draft, LogLevel, &Draft::level, ParseLogLevel>,
     "Least severe level logged.", ""},
  }};
  // clang-format on
  return table;
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
  for (const SettingDoc& s : Describe(AgentTable())) {
    out += "  --" + s.flag + " " + s.arg;
    if (!s.alias.empty()) out += ", --" + s.alias + " " + s.arg;
    out += '\n';
    Wrap(out, s.help, 6);
    if (!s.default_text.empty()) Wrap(out, "Default: " + s.default_text + ".", 6);
    out += "      Env: " + s.env + ".\n";
  }
  out += "  -h, --help\n      Print this help and exit.\n";
  out += "  --version\n      Print \"leasehold <version>\" and exit.\n";
  return out + kHelpFooter + localapi::RoutesHelp() + kHelpTail;
}

cxxopts::Options MakeOptions() {
  cxxopts::Options o("leasehold");
  for (const SettingDoc& s : Describe(AgentTable())) {
    const std::string names = s.flag + (s.alias.empty() ? "" : "," + s.alias);
    o.add_option("", {names, s.help, cxxopts::value<std::string>(), s.arg});
  }
  o.add_options()("h,help", "Print this help and exit.")("version", "Print the version.");
  return o;
}

// cxxopts quotes names with typographic quotes; messages here use plain ones.
std::string PlainQuotes(std::string s) {
  for (const char* q : {"\xe2\x80\x98", "\xe2\x80\x99"}) {
    for (size_t at = s.find(q); at != std::string::npos; at = s.find(q)) s.replace(at, 3, "\"");
  }
  return s;
}

std::string Trim(std::string s) {
  const char* ws = " \t\r\n";
  s.erase(0, s.find_first_not_of(ws));
  const size_t end = s.find_last_not_of(ws);
  s.erase(end == std::string::npos ? 0 : end + 1);
  return s;
}

// A flag given more than once: on the command line several times and/or also in its variable.
// One warning per flag, naming the value that wins (the last on the command line, which beats
// the variable; the Helm chart's sidecar.extraArgs relies on the last one winning).
void WarnRepeatedFlags(const cxxopts::ParseResult& r, const Environment& env,
                       std::vector<std::string>* warnings) {
  for (const SettingDoc& s : Describe(AgentTable())) {
    const size_t times = r.count(s.flag);
    if (times == 0) continue;
    const std::optional<std::string> in_env = env.getenv(s.env);
    const bool also_env = in_env && !in_env->empty();
    if (times < 2 && !also_env) continue;
    std::string where = "--" + s.flag + " is given ";
    where +=
        times >= 2 ? std::to_string(times) + " times on the command line" : "on the command line";
    if (also_env) where += " and in " + s.env;
    where += times >= 2 ? "; the last one on the command line wins: " : "; the command line wins: ";
    warnings->push_back(where + Quote(r[s.flag].as<std::string>()));
  }
}

// What the settings alone do not say, in this order: the namespace when none was given
// (POD_NAMESPACE, else the service-account directory's namespace file, else "default", which
// the kubeconfig context's namespace may replace later, see app.cpp), the identity when none was
// given, and the pod a --leader-label labels.
struct Resolved {
  std::string name_space, namespace_source;  // see AppConfig
  std::string pod_name, pod_namespace;
};

class Resolver {
 public:
  Resolver(const CommandLineValue& command_line, const Environment& env)
      : command_line_(command_line), env_(env) {}

  // Where the setting `flag` came from (for messages).
  Given GivenFor(const std::string& flag) const {
    for (const SettingDoc& s : Describe(AgentTable())) {
      if (s.flag == flag) return Lookup(s, command_line_, env_);
    }
    return Given{};
  }

  // A variable that is not a setting's (POD_NAME, POD_NAMESPACE); nullopt when unset or empty.
  std::optional<std::string> FromEnv(const std::string& var) const {
    auto e = env_.getenv(var);
    return e && !e->empty() ? e : std::nullopt;
  }

  Status Namespace(const Draft& d, Resolved& out) const {
    if (d.ns) {
      out.name_space = *d.ns;
      out.namespace_source = GivenFor("namespace").origin == "--namespace"
                                 ? "--namespace"
                                 : VariableName(kVariablePrefix, "namespace");
      return Status::Ok();
    }
    Given ns;
    const std::string file_path = d.kube.serviceaccount_dir + "/namespace";
    if (auto pod_ns = FromEnv("POD_NAMESPACE")) {
      ns = {true, *pod_ns, "POD_NAMESPACE (--namespace)"};
      out.namespace_source = "POD_NAMESPACE";
    } else if (Result<std::string> file = env_.read_file(file_path);
               file.ok() && !Trim(*file).empty()) {
      ns = {true, Trim(*file), file_path + " (--namespace)"};
      out.namespace_source = file_path;
    } else if (!file.ok() && file.code() != Code::kNotFound) {
      // A FIFO, a device, a huge file: falling back to "default" would contend in the wrong
      // namespace.
      return BadValue(GivenFor("serviceaccount-dir"),
                      "the namespace file cannot be used: " + file.status().message() +
                          " (set --namespace, or fix the file)");
    } else {
      ns = {true, "default", "--namespace"};
      out.namespace_source = "default";
    }
    if (Status st = CheckNamespace(ns.text); !st.ok()) return BadValue(ns, st.message());
    out.name_space = ns.text;
    return Status::Ok();
  }

  // A fresh suffix per start: a restarted container must not inherit its predecessor's claim,
  // and must wait for it to expire like any rival.
  std::string Identity(const Draft& d) const {
    if (d.identity) return *d.identity;
    std::string base = FromEnv("POD_NAME").value_or("");
    if (base.empty()) base = env_.hostname();
    if (base.empty()) base = "leasehold";
    return base + "_" + env_.random_hex8();
  }

  // --agent-mode observe: who this pod is in the lock, and the settings observe mode needs (why
  // each is refused: election/observer.h, docs/safety.md "Observe mode").
  Status Observe(const Draft& d, const Resolved& resolved, election::HolderMatch& out) const {
    if (d.agent_mode != AgentMode::kObserve) return Status::Ok();
    const Given mode = GivenFor("agent-mode");
    if (d.type == locks::LockType::kNone) {
      return BadValue(mode, "observe needs a lock to read (not --lock-type none)");
    }
    if (d.lease - d.renew < election::kObserveMargin) {
      return BadValue(GivenFor("renew-deadline"),
                      "must be at least " + FormatGoDuration(election::kObserveMargin) +
                          " below --lease-duration in observe mode (clock drift, and a rival's "
                          "whole-second view of the record)");
    }
    const Given rule = GivenFor("observe-identity");
    out.rule = d.observe_rule;
    if (d.observe_rule == election::MatchRule::kExact) {
      out.name = d.identity.value_or("");
    } else {
      out.name = FromEnv("POD_NAME").value_or("");
      if (!out.name.empty() && !kube::IsDns1123Subdomain(out.name)) {
        return BadValue(rule, "POD_NAME " + Quote(out.name) + " is not a valid pod name");
      }
      // Pod names are unique in a namespace only: pods of two namespaces reading one lock
      // could share a name.
      const std::string pod_ns = FromEnv("POD_NAMESPACE").value_or(resolved.name_space);
      if (pod_ns != resolved.name_space) {
        return BadValue(rule,
                        "pod matches pod names, unique only within a namespace, but this "
                        "pod (POD_NAMESPACE " +
                            Quote(pod_ns) + ") is not in the lock's namespace " +
                            Quote(resolved.name_space) + " (use exact with --identity)");
      }
    }
    if (Status st = election::CheckHolderMatch(out); !st.ok()) return BadValue(rule, st.message());
    return Status::Ok();
  }

  // --leader-label's pod (POD_NAME, POD_NAMESPACE from the downward API).
  Status LabelledPod(const Draft& d, Resolved& out) const {
    if (d.leader_label.empty()) return Status::Ok();
    const Given label = GivenFor("leader-label");
    auto pod = FromEnv("POD_NAME");
    if (!pod) {
      return BadValue(label,
                      "needs POD_NAME, the name of this pod (set it from the downward API: "
                      "valueFrom.fieldRef.fieldPath: metadata.name)");
    }
    if (!kube::IsDns1123Subdomain(*pod)) {
      return BadValue(label, "POD_NAME " + Quote(*pod) + " is not a valid pod name");
    }
    out.pod_name = *pod;
    out.pod_namespace = FromEnv("POD_NAMESPACE").value_or("");
    if (!out.pod_namespace.empty() && !kube::IsDns1123Label(out.pod_namespace)) {
      return BadValue(label,
                      "POD_NAMESPACE " + Quote(out.pod_namespace) + " is not a valid namespace");
    }
    return Status::Ok();
  }

 private:
  const CommandLineValue& command_line_;
  const Environment& env_;
};

// The draft as an AppConfig; the timing rules live with the algorithm, and its messages name the
// flags.
Result<AppConfig> Assemble(const Draft& d, const Resolved& resolved, std::string identity) {
  const election::Timings timings{d.lease, d.renew, d.retry};
  auto election = election::ElectionConfig::Create(std::move(identity), timings, d.mode, d.holdoff);
  if (!election.ok()) return election.status();
  // The product's floors, here and not in ElectionConfig::Create (see election/config.h).
  if (Status floors = election::ElectionConfig::CheckFloors(timings); !floors.ok()) {
    return floors;
  }
  std::optional<AppConfig> config;
  config.emplace(std::move(election).value());
  config->name_space = resolved.name_space;
  config->namespace_source = resolved.namespace_source;
  config->pod_name = resolved.pod_name;
  config->pod_namespace = resolved.pod_namespace;
  config->lock_name = d.lock_name;
  config->lock_type = d.type;
  config->http_address = d.http_address;
  config->max_watchers = d.watchers;
  config->status_file = d.status_file;
  config->probe_address = d.probe_address;
  config->leader_label = d.leader_label;
  config->kube = d.kube;
  config->log_format = d.format;
  config->log_level = d.level;
  return std::move(*config);
}

}  // namespace

std::vector<SettingDoc> AgentSettings() { return Describe(AgentTable()); }

const char* AgentModeName(AgentMode mode) {
  return mode == AgentMode::kObserve ? "observe" : "elect";
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

std::string EnvVarFor(const std::string& flag) { return VariableName(kVariablePrefix, flag); }

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

  const CommandLineValue command_line =
      [&r](const std::string& flag) -> std::optional<std::string> {
    if (r.count(flag) == 0) return std::nullopt;
    return r[flag].as<std::string>();
  };
  Draft draft;
  if (Status st = ReadOptions(AgentTable(), command_line, env, draft); !st.ok()) return st;
  const Resolver resolve(command_line, env);
  Resolved resolved;
  if (Status st = resolve.Namespace(draft, resolved); !st.ok()) return st;
  if (Status st = resolve.LabelledPod(draft, resolved); !st.ok()) return st;
  Result<AppConfig> config = Assemble(draft, resolved, resolve.Identity(draft));
  if (!config.ok()) return config.status();
  if (Status st = resolve.Observe(draft, resolved, config->observe_match); !st.ok()) return st;
  config->mode = draft.agent_mode;
  command.config.emplace(std::move(config).value());
  WarnRepeatedFlags(r, env, &command.warnings);
  for (std::string& w : UnknownVariableWarnings(env, AllSettings(), "leasehold")) {
    command.warnings.push_back(std::move(w));
  }
  return command;
}

}  // namespace leasehold::app
