#include "app/flags.h"

#include <cstdint>
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

// Every setting of the agent as given: AppConfig's own parts (AppSettings, each default in the
// struct where its meaning lives), and the inputs of the rules that span settings, which
// Resolver and Assemble apply: the namespace (else POD_NAMESPACE, else --serviceaccount-dir's
// namespace file), the identity (else POD_NAME or the host name), and the timings, release mode
// and hold-off (ElectionConfig::Create, then the product's floors).
struct Draft : AppSettings {
  std::optional<std::string> ns;
  std::optional<std::string> identity;
  Timings timings;
  election::ReleaseMode mode = election::ReleaseMode::kSafe;
  AgentMode agent_mode = AgentMode::kElect;
  election::MatchRule observe_rule = election::MatchRule::kPod;
  Duration holdoff = election::kDefaultReleaseHoldoff;
  election::PreferredHolderRule preferred = election::PreferredHolderRule::kKeep;
  // --renew-interval retry-period: the interval is --retry-period, whatever that is set to.
  bool renew_at_retry = false;
};
using Row = Option<Draft>;

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

// The row of one of the timings: the draft's `timings.*field`.
template <Duration Timings::*field>
Row TimingRow(const char* flag) {
  return Row(flag, "DURATION",
             [](const std::string& t, Draft& d) {
               Result<Duration> v = ParseDuration(t);
               if (v.ok()) d.timings.*field = *v;
               return v.status();
             })
      .Default([](const Draft& d) { return FormatGoDuration(d.timings.*field); });
}

// The row of a setting with a closed set of names, parsed into the draft's `field`: the names
// are `name(v)` of `values`, in that order; anything else is refused as
// "<text> is not a <what> (one of: a, b, ...)".
template <typename E, E Draft::*field, const char* (*name)(E), const char* what, E... values>
Row ChoiceRow(const char* flag, const char* arg) {
  return Row(flag, arg,
             [](const std::string& t, Draft& d) {
               std::string all;
               for (const E v : {values...}) {
                 if (t == name(v)) {
                   d.*field = v;
                   return Status::Ok();
                 }
                 all += (all.empty() ? "" : ", ") + std::string(name(v));
               }
               return Bad(Quote(t) + " is not a " + what + " (one of: " + all + ")");
             })
      .Default([](const Draft& d) { return std::string(name(d.*field)); });
}
constexpr char kModeWhat[] = "mode";
constexpr char kRuleWhat[] = "rule";
constexpr char kReleaseModeWhat[] = "release mode";

// `text` as a whole number from `min` to `max` (>= 0), in decimal digits only (no sign, no
// space) and no more of them than `max` has; else kBadConfig:
// "<text> is not a <what> (<min> to <max>)<why>".
Result<int64_t> ParseWhole(const std::string& text, int64_t min, int64_t max, const char* what,
                           const char* why = "") {
  if (!text.empty() && text.size() <= std::to_string(max).size() &&
      text.find_first_not_of("0123456789") == std::string::npos) {
    const int64_t n = std::stoll(text);
    if (n >= min && n <= max) return n;
  }
  return Bad(Quote(text) + " is not a " + what + " (" + std::to_string(min) + " to " +
             std::to_string(max) + ")" + why);
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

// --probe-address's help names what the probe listener serves, from the route table.
const char* ProbeAddressHelp() {
  static const std::string text =
      "A second listener, e.g. :8081, that serves only " + localapi::ProbeEndpoints() +
      ", for kubelet probes and Prometheus on the pod IP; the full API stays on --http-address. "
      "Same forms as --http-address.";
  return text.c_str();
}

// The agent's settings, in --help order (the order they are read in, so the first bad one is
// the error). Help texts are wrapped to 100 columns by HelpText.
const OptionTable<Draft>& AgentTable() {
  static const OptionTable<Draft> table{
      "leasehold",
      kVariablePrefix,
      {
          Row("lock-name", "NAME",
              [](const std::string& t, Draft& d) {
                if (!kube::IsDns1123Subdomain(t)) {
                  return Bad(Quote(t) +
                             " is not a valid object name (lower-case letters, digits, '-' and "
                             "'.', at most 253 characters)");
                }
                d.lock.name = t;
                return Status::Ok();
              })
              .Alias("election")
              .Required(
                  "the name of the lock object to contend for (e.g. --lock-name=my-app; or set "
                  "{env})")
              .Help("Name of the lock object to contend for; every replica names the same one. "
                    "Required."),
          Row("namespace", "NS",
              [](const std::string& t, Draft& d) {
                d.ns = t;
                return CheckNamespace(t);
              })
              .Default([](const Draft&) -> std::string {
                return "$POD_NAMESPACE, else the service-account directory's namespace file, else "
                       "the kubeconfig context's namespace, else \"default\"";
              })
              .Help("Namespace of the lock object."),
          Row("identity", "ID",
              [](const std::string& t, Draft& d) {
                if (t.empty()) return Bad("must not be empty (it names this replica in the lock)");
                if (HasControl(t)) return Bad(Quote(t) + " contains control characters");
                d.identity = t;
                return Status::Ok();
              })
              .Alias("id")
              .Default([](const Draft&) -> std::string {
                return "$POD_NAME (else the host name) followed by \"_\" and 8 random hex digits, "
                       "new at every start as client-go does, so a restarted container waits out "
                       "its predecessor's lease";
              })
              .Help("This replica's name in the lock. It must be unique: two processes with one "
                    "identity would both believe they lead, since each sees its own name as the "
                    "holder."),
          Row("lock-type", "TYPE",
              [](const std::string& t, Draft& d) {
                const std::optional<election::LockType> type = election::ParseLockType(t);
                if (!type) {
                  return Bad(Quote(t) + " is not a lock type (one of: " + locks::LockTypeNames() +
                             ")");
                }
                d.lock.type = *type;
                return Status::Ok();
              })
              .Default(
                  [](const Draft& d) { return std::string(election::LockTypeName(d.lock.type)); })
              .Help("Kind of lock object: auto, leases, configmaps, endpoints, configmapsleases, "
                    "endpointsleases or none. auto uses the Lease where the cluster serves Leases, "
                    "the ConfigMap where it does not, and both while an older ConfigMap lock of "
                    "the same name exists (so replicas still using it see the same leader during "
                    "an upgrade). none switches leader election off: this replica always leads and "
                    "makes no API call (no RBAC, no token); more than one replica would each act "
                    "as leader."),
          ChoiceRow<AgentMode, &Draft::agent_mode, AgentModeName, kModeWhat, AgentMode::kElect,
                    AgentMode::kObserve>("agent-mode", "elect|observe")
              .Help("elect: contend for the lock. observe: never write it; read and watch a lock "
                    "that another program in this pod elects with (a controller-runtime or "
                    "client-go operator), and report whether this pod holds it (see "
                    "--observe-identity). A \"yes\" then ends at most --renew-deadline after the "
                    "send of the last read that showed an older version of the record "
                    "(docs/safety.md, \"Observe mode\"); safe only beside electors that do not "
                    "release the lock on shutdown (controller-runtime's default).")
              .Summary("`elect` contends for the lock; `observe` only reads a lock another "
                       "program elects with"),
          ChoiceRow<election::MatchRule, &Draft::observe_rule, election::MatchRuleName, kRuleWhat,
                    election::MatchRule::kPod, election::MatchRule::kExact>("observe-identity",
                                                                            "pod|exact")
              .Help("With --agent-mode observe, which holder is this pod. pod: the holder is "
                    "$POD_NAME or starts with $POD_NAME and \"_\" (controller-runtime's "
                    "<hostname>_<uuid>; pod names cannot contain \"_\", so one holder names at "
                    "most one pod of a namespace). exact: the holder is --identity.")
              .Summary("with `--agent-mode observe`: `pod` (holder is `POD_NAME` or "
                       "`POD_NAME_…`) or `exact` (`--identity`)"),
          TimingRow<&Timings::lease_duration>("lease-duration")
              .Help("How long rivals wait, after they last saw the record change, before taking "
                    "the lock. Whole seconds, at least 3s."),
          TimingRow<&Timings::renew_deadline>("renew-deadline")
              .Help("How long the leader keeps answering \"yes\" after sending its last "
                    "successful renewal. At least 2s, 1s or more below --lease-duration, and "
                    "above 1.2 x --retry-period."),
          TimingRow<&Timings::retry_period>("retry-period")
              .Help("Pause between attempts (plus up to 120% jitter while acquiring). At least "
                    "1s: records keep whole seconds."),
          Row("renew-interval", "DURATION|auto|retry-period",
              [](const std::string& t, Draft& d) {
                d.renew_at_retry = t == "retry-period";
                if (t == "auto" || d.renew_at_retry) {
                  d.timings.renew_interval = Duration::zero();
                  return Status::Ok();
                }
                Result<Duration> v = ParseDuration(t);
                if (!v.ok()) return v.status();
                if (*v <= Duration::zero()) {
                  return Bad("must be greater than 0, auto or retry-period");
                }
                d.timings.renew_interval = *v;
                return Status::Ok();
              })
              .Default([](const Draft& d) -> std::string {
                if (d.timings.renew_interval > Duration::zero()) {
                  return FormatGoDuration(d.timings.renew_interval);
                }
                return "auto: 3 x --retry-period, at most --renew-deadline - --retry-period - " +
                       FormatGoDuration(election::kAutoRenewAttemptRoom +
                                        election::kRenewAttemptRoom) +
                       ", at least --retry-period (" +
                       FormatGoDuration(election::AutoRenewInterval(d.timings.renew_deadline,
                                                                    d.timings.retry_period)) +
                       " at the default timings)";
              })
              .Help("Pause after a successful renewal before the next one; after a failed one the "
                    "leader retries every --retry-period until renew-deadline. Equal to "
                    "--retry-period renews as client-go does; longer means fewer writes. When "
                    "longer, at most --renew-deadline - --retry-period - 2s, so a renew that "
                    "hangs and one retry fit before the claim ends. retry-period: equal to "
                    "--retry-period, whatever it is set to (the gate's manifests: a gated program "
                    "is stopped stop-grace before validUntil, so it needs the headroom of "
                    "frequent renews)."),
          ChoiceRow<election::ReleaseMode, &Draft::mode, election::ReleaseModeName,
                    kReleaseModeWhat, election::ReleaseMode::kSafe,
                    election::ReleaseMode::kImmediate, election::ReleaseMode::kOff>(
              "release-on-shutdown", "safe|immediate|off")
              .Help(
                  "What SIGTERM/SIGINT does to a held lock. safe: release once every \"yes\" "
                  "already given has expired, or at once on POST /release (classic sidecars, "
                  "stopped together with the main container); immediate: release at once (native "
                  "sidecars, stopped after it); off: never, rivals wait for the lease to expire."),
          Row("release-holdoff", "DURATION", Store<Draft, Duration, &Draft::holdoff, ParseDuration>)
              .Default([](const Draft& d) { return FormatGoDuration(d.holdoff); })
              .Help("After POST /release without a signal, stay out of the election this long."),
          ChoiceRow<election::PreferredHolderRule, &Draft::preferred,
                    election::PreferredHolderRuleName, kRuleWhat,
                    election::PreferredHolderRule::kKeep, election::PreferredHolderRule::kYield>(
              "preferred-holder", "keep|yield")
              .Help("What a Lease's spec.preferredHolder (coordinated leader election, "
                    "Kubernetes 1.33+ with the CoordinatedLeaderElection gate) naming another "
                    "candidate does. Either way renewals keep spec.strategy and "
                    "spec.preferredHolder as they found them. keep: nothing more; this replica "
                    "elects as client-go's plain elector does. yield: as client-go's coordinated "
                    "elector, the leader stops renewing, so its term ends with its last \"yes\" "
                    "(at most --renew-deadline later) and the lease expires; a candidate that is "
                    "not the preferred holder waits one --lease-duration longer before it takes "
                    "the lease, so the preferred one takes it first (docs/safety.md, "
                    "\"Coordinated leader election\").")
              .Summary("`keep` renews as usual; `yield` ends the leader's term when the Lease "
                       "names another preferred holder"),
          Row("http-address", "ADDR",
              [](const std::string& t, Draft& d) {
                d.local_api.http_address = t;
                return CheckListenAddress(t);
              })
              .Default([](const Draft& d) { return d.local_api.http_address; })
              .Help("Where the local API listens: localhost:PORT (127.0.0.1 and ::1), IPV4:PORT, "
                    "[IPV6]:PORT, or :PORT (all IPv4)."),
          Row("max-watchers", "N",
              [](const std::string& t, Draft& d) {
                Result<int64_t> n = ParseWhole(t, 0, kMaxWatchers, "number of watchers");
                if (n.ok()) d.local_api.max_watchers = static_cast<int>(*n);
                return n.status();
              })
              .Default([](const Draft& d) { return std::to_string(d.local_api.max_watchers); })
              .Help("Most GET /leader/watch streams open at once (0 to 10000); one more gets 503. "
                    "Each open stream holds one listener thread. 0 turns the stream off.")
              .Summary(
                  "most `GET /leader/watch` streams at once (0–10000; 0 turns the stream off)"),
          Row("status-file", "PATH",
              [](const std::string& t, Draft& d) {
                if (HasControl(t)) return Bad(Quote(t) + " contains control characters");
                d.local_api.status_file = t;
                return Status::Ok();
              })
              .Help("Also write the /leader JSON to this file, on every change and on every "
                    "renew while leading, atomically (a temporary file in the same directory, "
                    "then rename). A reader must treat a validUntil in the past as \"not "
                    "leader\"."),
          Row("probe-address", "ADDR",
              [](const std::string& t, Draft& d) {
                d.local_api.probe_address = t;
                return CheckListenAddress(t);
              })
              .Default([](const Draft& d) {
                return d.local_api.probe_address.empty() ? std::string("off")
                                                         : d.local_api.probe_address;
              })
              .Help(ProbeAddressHelp())
              .Summary("a probe-only listener, e.g. `:8081` (same forms as `--http-address`)"),
          Row("leader-label", "KEY",
              [](const std::string& t, Draft& d) {
                if (std::string why = kube::LabelKeyProblem(t); !why.empty()) {
                  return Bad(Quote(t) + " is not a label key: " + why +
                             " (example: leasehold.io/role)");
                }
                d.leader_pod.label = t;
                return Status::Ok();
              })
              .Help(
                  "Label this pod KEY=leader or KEY=follower (e.g. leasehold.io/role) on every "
                  "change of leadership and every 60s, and KEY=follower at shutdown, so that a "
                  "Service can select the leader. A routing hint, not a lock. Needs $POD_NAME "
                  "(and $POD_NAMESPACE when the pod is not in the lock's namespace) and get/patch "
                  "on pods (deploy/rbac/leader-label).")
              .Summary("label this pod `KEY=leader`/`follower`, e.g. `leasehold.io/role`; needs "
                       "`POD_NAME`"),
          Row("deletion-cost", "COST",
              [](const std::string& t, Draft& d) {
                Result<int64_t> cost = ParseWhole(
                    t, 1, INT32_MAX, "deletion cost",
                    ": the leader's pod must cost more than a follower's, which has none");
                if (cost.ok()) d.leader_pod.deletion_cost = static_cast<int32_t>(*cost);
                return cost.status();
              })
              .Help("While this pod leads, annotate it controller.kubernetes.io/pod-deletion-cost="
                    "COST, and remove the annotation when it stops, so that a scale-down keeps the "
                    "leader and a rollout deletes the leader's pod last (one handover). leasehold "
                    "then owns that annotation on this pod. Same needs as --leader-label: "
                    "$POD_NAME and get/patch on pods.")
              .Summary(
                  "annotate the leader's pod `controller.kubernetes.io/pod-deletion-cost=COST` "
                  "(scale-downs keep it, rollouts delete it last); needs `POD_NAME`"),
          Row("kubeconfig", "PATH",
              [](const std::string& t, Draft& d) {
                d.kube.kubeconfig = t;
                return Status::Ok();
              })
              .Default([](const Draft&) -> std::string {
                return "$KUBECONFIG, else the in-cluster service account, else ~/.kube/config";
              })
              .Help("kubeconfig file."),
          Row("context", "NAME",
              [](const std::string& t, Draft& d) {
                d.kube.context = t;
                return Status::Ok();
              })
              .Default([](const Draft&) -> std::string { return "its current-context"; })
              .Help("kubeconfig context."),
          Row("serviceaccount-dir", "DIR",
              [](const std::string& t, Draft& d) {
                if (t.empty()) return Bad("must not be empty");
                d.kube.serviceaccount_dir = t;
                return Status::Ok();
              })
              .Default([](const Draft& d) { return d.kube.serviceaccount_dir; })
              .Help("Directory holding the service account's token, ca.crt and namespace."),
          LogFormatOption<Draft>(
              "text|json",
              "Log lines on stderr: text, or json (one object per line with ts, level, msg)."),
          LogLevelOption<Draft>("trace|debug|info|warn|error", "Least severe level logged."),
      }};
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
void WarnRepeatedFlags(const Arguments& args, const Environment& env,
                       std::vector<std::string>* warnings) {
  for (const SettingDoc& s : Describe(AgentTable())) {
    const size_t times = args.Count(s.flag);
    if (times == 0) continue;
    const std::optional<std::string> in_env = env.getenv(s.env);
    const bool also_env = in_env && !in_env->empty();
    if (times < 2 && !also_env) continue;
    std::string where = "--" + s.flag + " is given ";
    where +=
        times >= 2 ? std::to_string(times) + " times on the command line" : "on the command line";
    if (also_env) where += " and in " + s.env;
    where += times >= 2 ? "; the last one on the command line wins: " : "; the command line wins: ";
    warnings->push_back(where + Quote(*args.Last(s.flag)));
  }
}

// What the settings alone do not say, in this order, written into the draft's AppSettings: the
// namespace when none was given (POD_NAMESPACE, else the service-account directory's namespace
// file, else "default", which the kubeconfig context's namespace may replace later, see
// app.cpp), the identity when none was given, and the pod a --leader-label labels.
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

  Status Namespace(Draft& d) const {
    LockSettings& out = d.lock;
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
  // each is refused: election/observer.h, docs/safety.md "Observe mode"). After Namespace.
  Status Observe(const Draft& d, election::HolderMatch& out) const {
    if (d.agent_mode != AgentMode::kObserve) return Status::Ok();
    const Given mode = GivenFor("agent-mode");
    if (d.lock.type == election::LockType::kNone) {
      return BadValue(mode, "observe needs a lock to read (not --lock-type none)");
    }
    if (d.timings.lease_duration - d.timings.renew_deadline < election::kObserveMargin) {
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
      const std::string pod_ns = FromEnv("POD_NAMESPACE").value_or(d.lock.name_space);
      if (pod_ns != d.lock.name_space) {
        return BadValue(rule,
                        "pod matches pod names, unique only within a namespace, but this "
                        "pod (POD_NAMESPACE " +
                            Quote(pod_ns) + ") is not in the lock's namespace " +
                            Quote(d.lock.name_space) + " (use exact with --identity)");
      }
    }
    if (Status st = election::CheckHolderMatch(out); !st.ok()) return BadValue(rule, st.message());
    return Status::Ok();
  }

  // The pod that --leader-label and --deletion-cost mark (POD_NAME, POD_NAMESPACE from the
  // downward API).
  Status LabelledPod(Draft& d) const {
    LeaderPodSettings& out = d.leader_pod;
    if (out.label.empty() && !out.deletion_cost) return Status::Ok();
    const Given label = GivenFor(out.label.empty() ? "deletion-cost" : "leader-label");
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
Result<AppConfig> Assemble(Draft d, std::string identity) {
  if (d.renew_at_retry) d.timings.renew_interval = d.timings.retry_period;
  auto election =
      election::ElectionConfig::Create(std::move(identity), d.timings, d.mode, d.holdoff);
  if (!election.ok()) return election.status();
  election->set_preferred_holder_rule(d.preferred);
  // The product's floors, here and not in ElectionConfig::Create (see election/config.h).
  if (Status floors = election::ElectionConfig::CheckFloors(d.timings); !floors.ok()) {
    return floors;
  }
  return AppConfig(std::move(election).value(), std::move(d));
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
  const Result<Arguments> scanned =
      ScanArguments(AgentSettings(), args, ScanRules("leasehold", false, {"version"}));
  if (!scanned.ok()) return scanned.status();
  const Arguments& given = *scanned;
  Command command;
  if (given.help) {
    command.output = HelpText();
    return command;
  }
  if (given.Count("version") > 0) {
    command.output = std::string("leasehold ") + kVersion + "\n";
    return command;
  }
  const CommandLineValue command_line = given.LastValues();
  Draft draft;
  if (Status st = ReadOptions(AgentTable(), command_line, env, draft); !st.ok()) return st;
  const Resolver resolve(command_line, env);
  if (Status st = resolve.Namespace(draft); !st.ok()) return st;
  if (Status st = resolve.LabelledPod(draft); !st.ok()) return st;
  election::HolderMatch observe_match;
  if (Status st = resolve.Observe(draft, observe_match); !st.ok()) return st;
  const AgentMode mode = draft.agent_mode;
  std::string identity = resolve.Identity(draft);
  Result<AppConfig> config = Assemble(std::move(draft), std::move(identity));
  if (!config.ok()) return config.status();
  config->observe_match = std::move(observe_match);
  config->mode = mode;
  command.config.emplace(std::move(config).value());
  WarnRepeatedFlags(given, env, &command.warnings);
  for (std::string& w : UnknownVariableWarnings(env, AllSettings(), "leasehold")) {
    command.warnings.push_back(std::move(w));
  }
  return command;
}

}  // namespace leasehold::app
