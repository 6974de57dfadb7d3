#include "app/flags.h"

#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "base/duration.h"
#include "base/version.h"
#include "fakes/fake_environment.h"
#include "fakes/golden.h"

namespace leasehold::app {
namespace {

using Strings = std::vector<std::string>;
using Map = std::map<std::string, std::string>;

using testing::FakeEnvironment;

// Every field on one line, so a table row can state the whole expected config.
std::string Summary(const AppConfig& c) {
  const election::ElectionConfig& e = c.election;
  return "lock=" + std::string(election::LockTypeName(c.lock.type)) + ":" + c.lock.name_space +
         "/" + c.lock.name + " ns-from=" + c.lock.namespace_source + " id=" + e.identity() +
         " lease=" + FormatGoDuration(e.lease_duration()) +
         " renew=" + FormatGoDuration(e.renew_deadline()) +
         " retry=" + FormatGoDuration(e.retry_period()) +
         " release=" + election::ReleaseModeName(e.release_mode()) +
         " holdoff=" + FormatGoDuration(e.release_holdoff()) + " http=" + c.local_api.http_address +
         " kubeconfig=" + c.kube.kubeconfig + " context=" + c.kube.context +
         " sa=" + c.kube.serviceaccount_dir + " log=" + LogFormatName(c.log.format) + "/" +
         LogLevelName(c.log.level);
}

constexpr const char* kSa = "/var/run/secrets/kubernetes.io/serviceaccount";
const std::string kDefaults =
    " lease=15s renew=10s retry=2s release=safe holdoff=30s http=localhost:4040 kubeconfig= "
    "context= sa=/var/run/secrets/kubernetes.io/serviceaccount log=text/info";

TEST_CASE("ParseCommandLine: defaults, aliases, environment") {
  struct Case {
    const char* name;
    Strings args;
    Map vars;
    Map files;
    std::string want;
  };
  const std::vector<Case> cases = {
      {"defaults",
       {"--lock-name=my-app"},
       {},
       {},
       "lock=auto:default/my-app ns-from=default id=node-host_0badcafe" + kDefaults},
      {"value as the next argument",
       {"--lock-name", "my-app"},
       {},
       {},
       "lock=auto:default/my-app ns-from=default id=node-host_0badcafe" + kDefaults},
      {"--election is --lock-name (classic image)",
       {"--election=my-app"},
       {},
       {},
       "lock=auto:default/my-app ns-from=default id=node-host_0badcafe" + kDefaults},
      {"lock name from the environment",
       {},
       {{"LEASEHOLD_LOCK_NAME", "env-app"}},
       {},
       "lock=auto:default/env-app ns-from=default id=node-host_0badcafe" + kDefaults},
      {"the flag wins over the environment",
       {"--lock-name=flag-app"},
       {{"LEASEHOLD_LOCK_NAME", "env-app"}},
       {},
       "lock=auto:default/flag-app ns-from=default id=node-host_0badcafe" + kDefaults},
      {"an empty variable is unset",
       {"--lock-name=a"},
       {{"LEASEHOLD_LEASE_DURATION", ""}, {"LEASEHOLD_NAMESPACE", ""}},
       {},
       "lock=auto:default/a ns-from=default id=node-host_0badcafe" + kDefaults},
      {"identity from POD_NAME plus a random suffix",
       {"--lock-name=a"},
       {{"POD_NAME", "web-0"}},
       {},
       "lock=auto:default/a ns-from=default id=web-0_0badcafe" + kDefaults},
      {"--identity is used as given",
       {"--lock-name=a", "--identity=me"},
       {{"POD_NAME", "web-0"}},
       {},
       "lock=auto:default/a ns-from=default id=me" + kDefaults},
      {"--id is --identity (classic image)",
       {"--lock-name=a", "--id", "me"},
       {},
       {},
       "lock=auto:default/a ns-from=default id=me" + kDefaults},
      {"LEASEHOLD_IDENTITY",
       {"--lock-name=a"},
       {{"LEASEHOLD_IDENTITY", "env-me"}},
       {},
       "lock=auto:default/a ns-from=default id=env-me" + kDefaults},
      {"namespace from POD_NAMESPACE",
       {"--lock-name=a"},
       {{"POD_NAMESPACE", "team"}},
       {{std::string(kSa) + "/namespace", "other"}},
       "lock=auto:team/a ns-from=POD_NAMESPACE id=node-host_0badcafe" + kDefaults},
      {"namespace from the service-account file, trimmed",
       {"--lock-name=a"},
       {},
       {{std::string(kSa) + "/namespace", "kube-system\n"}},
       "lock=auto:kube-system/a ns-from=" + std::string(kSa) + "/namespace id=node-host_0badcafe" +
           kDefaults},
      {"an empty service-account file is ignored",
       {"--lock-name=a"},
       {},
       {{std::string(kSa) + "/namespace", " \n"}},
       "lock=auto:default/a ns-from=default id=node-host_0badcafe" + kDefaults},
      {"--serviceaccount-dir moves the namespace file",
       {"--lock-name=a", "--serviceaccount-dir=/sa"},
       {},
       {{"/sa/namespace", "x"}, {std::string(kSa) + "/namespace", "y"}},
       "lock=auto:x/a ns-from=/sa/namespace id=node-host_0badcafe lease=15s renew=10s retry=2s "
       "release=safe holdoff=30s http=localhost:4040 kubeconfig= context= sa=/sa log=text/info"},
      {"--namespace wins over POD_NAMESPACE",
       {"--lock-name=a", "--namespace=mine"},
       {{"POD_NAMESPACE", "team"}},
       {},
       "lock=auto:mine/a ns-from=--namespace id=node-host_0badcafe" + kDefaults},
      {"LEASEHOLD_NAMESPACE wins over POD_NAMESPACE",
       {"--lock-name=a"},
       {{"POD_NAMESPACE", "team"}, {"LEASEHOLD_NAMESPACE", "mine"}},
       {},
       "lock=auto:mine/a ns-from=LEASEHOLD_NAMESPACE id=node-host_0badcafe" + kDefaults},
      {"every flag",
       {"--lock-name=db.primary", "--namespace=prod", "--identity=db-0", "--lock-type=leases",
        "--lease-duration=1m", "--renew-deadline=45s", "--retry-period=5s",
        "--release-on-shutdown=immediate", "--release-holdoff=1m30s",
        "--http-address=127.0.0.1:9000", "--kubeconfig=/k/config", "--context=ctx",
        "--serviceaccount-dir=/sa", "--log-format=json", "--log-level=debug"},
       {},
       {},
       "lock=leases:prod/db.primary ns-from=--namespace id=db-0 lease=1m0s renew=45s retry=5s "
       "release=immediate holdoff=1m30s http=127.0.0.1:9000 kubeconfig=/k/config context=ctx "
       "sa=/sa log=json/debug"},
      {"every variable",
       {},
       {{"LEASEHOLD_LOCK_NAME", "db"},
        {"LEASEHOLD_NAMESPACE", "prod"},
        {"LEASEHOLD_IDENTITY", "db-0"},
        {"LEASEHOLD_LOCK_TYPE", "configmapsleases"},
        {"LEASEHOLD_LEASE_DURATION", "20s"},
        {"LEASEHOLD_RENEW_DEADLINE", "15s"},
        {"LEASEHOLD_RETRY_PERIOD", "2.5s"},
        {"LEASEHOLD_RELEASE_ON_SHUTDOWN", "off"},
        {"LEASEHOLD_RELEASE_HOLDOFF", "0"},
        {"LEASEHOLD_HTTP_ADDRESS", ":8080"},
        {"LEASEHOLD_KUBECONFIG", "/k"},
        {"LEASEHOLD_CONTEXT", "c"},
        {"LEASEHOLD_SERVICEACCOUNT_DIR", "/sa"},
        {"LEASEHOLD_LOG_FORMAT", "json"},
        {"LEASEHOLD_LOG_LEVEL", "warn"}},
       {},
       "lock=configmapsleases:prod/db ns-from=LEASEHOLD_NAMESPACE id=db-0 lease=20s renew=15s "
       "retry=2.5s release=off holdoff=0s http=:8080 kubeconfig=/k context=c sa=/sa "
       "log=json/warn"},
      {"the last of a repeated flag wins",
       {"--lock-name=a", "--lock-name=b"},
       {},
       {},
       "lock=auto:default/b ns-from=default id=node-host_0badcafe" + kDefaults},
  };
  for (const Case& c : cases) {
    SUBCASE(c.name) {
      auto r = ParseCommandLine(c.args, FakeEnvironment(c.vars, c.files));
      REQUIRE_MESSAGE(r.ok(), r.status().message());
      REQUIRE(r->config.has_value());
      CHECK(r->output.empty());
      CHECK(Summary(*r->config) == c.want);
    }
  }
}

// The message ElectionConfig::Create gives for these timings: the app passes it through.
std::string ElectionMessage(Duration lease, Duration renew, Duration retry) {
  auto r = election::ElectionConfig::Create("x", {lease, renew, retry},
                                            election::ReleaseMode::kSafe, std::chrono::seconds(30));
  REQUIRE_FALSE(r.ok());
  return r.status().message();
}

TEST_CASE("ParseCommandLine: each bad value gives one line naming the flag") {
  using std::chrono::milliseconds;
  using std::chrono::seconds;
  const std::string examples = " (examples: 15s, 1m30s, 500ms)";
  struct Case {
    const char* name;
    Strings args;
    Map vars;
    std::string want;
  };
  const std::vector<Case> cases = {
      {"no lock name",
       {},
       {},
       "--lock-name: required: the name of the lock object to contend for (e.g. "
       "--lock-name=my-app; or set LEASEHOLD_LOCK_NAME)"},
      {"bad lock name",
       {"--lock-name=My_App"},
       {},
       "--lock-name: \"My_App\" is not a valid object name (lower-case letters, digits, '-' and "
       "'.', at most 253 characters)"},
      {"empty lock name",
       {"--lock-name="},
       {},
       "--lock-name: \"\" is not a valid object name (lower-case letters, digits, '-' and '.', at "
       "most 253 characters)"},
      {"bad lock name from the environment",
       {},
       {{"LEASEHOLD_LOCK_NAME", "a b"}},
       "LEASEHOLD_LOCK_NAME (--lock-name): \"a b\" is not a valid object name (lower-case "
       "letters, digits, '-' and '.', at most 253 characters)"},
      {"bad namespace",
       {"--lock-name=a", "--namespace=Kube_System"},
       {},
       "--namespace: \"Kube_System\" is not a valid namespace (lower-case letters, digits and "
       "'-', at most 63 characters)"},
      {"bad POD_NAMESPACE",
       {"--lock-name=a"},
       {{"POD_NAMESPACE", "a.b"}},
       "POD_NAMESPACE (--namespace): \"a.b\" is not a valid namespace (lower-case letters, "
       "digits and '-', at most 63 characters)"},
      {"empty identity",
       {"--lock-name=a", "--identity="},
       {},
       "--identity: must not be empty (it names this replica in the lock)"},
      {"identity with a newline",
       {"--lock-name=a"},
       {{"LEASEHOLD_IDENTITY", "a\nb"}},
       "LEASEHOLD_IDENTITY (--identity): \"a\\x0ab\" contains control characters"},
      {"a newline in a flag value stays on one line",
       {"--lock-name=a", "--id=a\nb"},
       {},
       "--identity: \"a\\x0ab\" contains control characters"},
      {"bad lock type",
       {"--lock-name=a", "--lock-type=lease"},
       {},
       "--lock-type: \"lease\" is not a lock type (one of: auto, leases, configmaps, endpoints, "
       "configmapsleases, endpointsleases, none)"},
      {"garbage duration",
       {"--lock-name=a", "--lease-duration=15x"},
       {},
       "--lease-duration: \"15x\" is not a duration" + examples},
      {"garbage duration from the environment",
       {"--lock-name=a"},
       {{"LEASEHOLD_LEASE_DURATION", "15x"}},
       "LEASEHOLD_LEASE_DURATION (--lease-duration): \"15x\" is not a duration" + examples},
      {"negative duration",
       {"--lock-name=a", "--renew-deadline=-1s"},
       {},
       "--renew-deadline: \"-1s\" is negative" + examples},
      {"duration without unit",
       {"--lock-name=a", "--retry-period=2"},
       {},
       "--retry-period: \"2\" has no unit" + examples},
      {"duration too large",
       {"--lock-name=a", "--release-holdoff=9999999h"},
       {},
       "--release-holdoff: \"9999999h\" is too large" + examples},
      {"empty duration",
       {"--lock-name=a", "--lease-duration="},
       {},
       "--lease-duration: \"\" is not a duration" + examples},
      {"fractional lease duration (ElectionConfig)",
       {"--lock-name=a", "--lease-duration=15.5s"},
       {},
       ElectionMessage(milliseconds(15500), seconds(10), seconds(2))},
      {"renew-deadline not below lease-duration (ElectionConfig)",
       {"--lock-name=a", "--renew-deadline=15s"},
       {},
       ElectionMessage(seconds(15), seconds(15), seconds(2))},
      {"retry-period too long (ElectionConfig)",
       {"--lock-name=a", "--retry-period=9s"},
       {},
       ElectionMessage(seconds(15), seconds(10), seconds(9))},
      {"zero retry-period (ElectionConfig)",
       {"--lock-name=a", "--retry-period=0"},
       {},
       ElectionMessage(seconds(15), seconds(10), seconds(0))},
      {"zero renew-interval",
       {"--lock-name=a", "--renew-interval=0s"},
       {},
       "--renew-interval: must be greater than 0, auto or retry-period"},
      {"garbage renew-interval from the environment",
       {"--lock-name=a"},
       {{"LEASEHOLD_RENEW_INTERVAL", "often"}},
       "LEASEHOLD_RENEW_INTERVAL (--renew-interval): \"often\" is not a duration" + examples},
      {"renew-interval too long for a hung renew and a retry (ElectionConfig)",
       {"--lock-name=a", "--renew-interval=7s"},
       {},
       "--renew-interval (7s) must be at most --renew-deadline - --retry-period - 2s (6s) or "
       "equal to --retry-period (2s): a renew that hangs and one retry must fit before the claim "
       "ends"},
      {"renew-interval below retry-period (ElectionConfig)",
       {"--lock-name=a", "--renew-interval=1s"},
       {},
       "--renew-interval (1s) must be at least --retry-period (2s)"},
      {"bad release mode",
       {"--lock-name=a", "--release-on-shutdown=never"},
       {},
       "--release-on-shutdown: \"never\" is not a release mode (one of: safe, immediate, off)"},
      {"bad preferred-holder rule",
       {"--lock-name=a", "--preferred-holder=defer"},
       {},
       "--preferred-holder: \"defer\" is not a rule (one of: keep, yield)"},
      {"bad http address",
       {"--lock-name=a", "--http-address=example.com:80"},
       {},
       "--http-address: \"example.com:80\" is not a listen address: the host must be localhost, "
       "an IPv4 address or a bracketed IPv6 address (examples: localhost:4040, 127.0.0.1:4040, "
       "[::1]:4040, :4040)"},
      {"http address without port",
       {"--lock-name=a"},
       {{"LEASEHOLD_HTTP_ADDRESS", "localhost"}},
       "LEASEHOLD_HTTP_ADDRESS (--http-address): \"localhost\" is not a listen address: missing "
       ":port (examples: localhost:4040, 127.0.0.1:4040, [::1]:4040, :4040)"},
      {"max-watchers not a number",
       {"--lock-name=a", "--max-watchers=lots"},
       {},
       "--max-watchers: \"lots\" is not a number of watchers (0 to 10000)"},
      {"max-watchers negative",
       {"--lock-name=a", "--max-watchers=-1"},
       {},
       "--max-watchers: \"-1\" is not a number of watchers (0 to 10000)"},
      {"max-watchers too many, from the environment",
       {"--lock-name=a"},
       {{"LEASEHOLD_MAX_WATCHERS", "10001"}},
       "LEASEHOLD_MAX_WATCHERS (--max-watchers): \"10001\" is not a number of watchers (0 to "
       "10000)"},
      {"status file with a newline",
       {"--lock-name=a", "--status-file=/tmp/a\nb"},
       {},
       "--status-file: \"/tmp/a\\x0ab\" contains control characters"},
      {"status file with a newline, from the environment",
       {"--lock-name=a"},
       {{"LEASEHOLD_STATUS_FILE", "/tmp/a\nb"}},
       "LEASEHOLD_STATUS_FILE (--status-file): \"/tmp/a\\x0ab\" contains control characters"},
      {"bad probe address",
       {"--lock-name=a", "--probe-address=8081"},
       {},
       "--probe-address: \"8081\" is not a listen address: missing :port (examples: "
       "localhost:4040, 127.0.0.1:4040, [::1]:4040, :4040)"},
      {"leader label with a bad prefix",
       {"--lock-name=a", "--leader-label=Leasehold.IO/role"},
       {{"POD_NAME", "web-0"}},
       "--leader-label: \"Leasehold.IO/role\" is not a label key: the prefix \"Leasehold.IO\" "
       "is not a DNS subdomain (lower-case letters, digits, '-' and '.') (example: "
       "leasehold.io/role)"},
      {"leader label with an empty name",
       {"--lock-name=a", "--leader-label=leasehold.io/"},
       {{"POD_NAME", "web-0"}},
       "--leader-label: \"leasehold.io/\" is not a label key: the name part is empty (example: "
       "leasehold.io/role)"},
      {"leader label with a bad character",
       {"--lock-name=a"},
       {{"LEASEHOLD_LEADER_LABEL", "role!"}, {"POD_NAME", "web-0"}},
       "LEASEHOLD_LEADER_LABEL (--leader-label): \"role!\" is not a label key: the name part "
       "may hold only letters, digits, '-', '_' and '.' (example: leasehold.io/role)"},
      {"leader label name too long",
       {"--lock-name=a", "--leader-label=" + std::string(64, 'a')},
       {{"POD_NAME", "web-0"}},
       "--leader-label: \"" + std::string(64, 'a') +
           "\" is not a label key: the name part is longer than 63 characters (example: "
           "leasehold.io/role)"},
      {"leader label name ends badly",
       {"--lock-name=a", "--leader-label=x/role-"},
       {{"POD_NAME", "web-0"}},
       "--leader-label: \"x/role-\" is not a label key: the name part must begin and end with "
       "a letter or digit (example: leasehold.io/role)"},
      {"leader label without POD_NAME",
       {"--lock-name=a", "--leader-label=leasehold.io/role"},
       {},
       "--leader-label: needs POD_NAME, the name of this pod (set it from the downward API: "
       "valueFrom.fieldRef.fieldPath: metadata.name)"},
      {"leader label with a bad POD_NAME",
       {"--lock-name=a", "--leader-label=leasehold.io/role"},
       {{"POD_NAME", "Web_0"}},
       "--leader-label: POD_NAME \"Web_0\" is not a valid pod name"},
      {"deletion cost zero",
       {"--lock-name=a", "--deletion-cost=0"},
       {{"POD_NAME", "web-0"}},
       "--deletion-cost: \"0\" is not a deletion cost (1 to 2147483647): the leader's pod must "
       "cost more than a follower's, which has none"},
      {"deletion cost beyond int32, from the environment",
       {"--lock-name=a"},
       {{"LEASEHOLD_DELETION_COST", "2147483648"}, {"POD_NAME", "web-0"}},
       "LEASEHOLD_DELETION_COST (--deletion-cost): \"2147483648\" is not a deletion cost (1 to "
       "2147483647): the leader's pod must cost more than a follower's, which has none"},
      {"deletion cost negative",
       {"--lock-name=a", "--deletion-cost=-5"},
       {{"POD_NAME", "web-0"}},
       "--deletion-cost: \"-5\" is not a deletion cost (1 to 2147483647): the leader's pod must "
       "cost more than a follower's, which has none"},
      {"deletion cost without POD_NAME",
       {"--lock-name=a", "--deletion-cost=10000"},
       {},
       "--deletion-cost: needs POD_NAME, the name of this pod (set it from the downward API: "
       "valueFrom.fieldRef.fieldPath: metadata.name)"},
      {"empty service-account dir",
       {"--lock-name=a", "--serviceaccount-dir="},
       {},
       "--serviceaccount-dir: must not be empty"},
      {"bad log format",
       {"--lock-name=a", "--log-format=xml"},
       {},
       "--log-format: \"xml\" is not a log format (one of: text, json)"},
      {"bad log level",
       {"--lock-name=a", "--log-level=verbose"},
       {},
       "--log-level: \"verbose\" is not a log level (one of: trace, debug, info, warn, error)"},
      {"unknown flag",
       {"--lock-name=a", "--frobnicate=1"},
       {},
       "unknown flag \"--frobnicate\" (see leasehold --help)"},
      {"flag without its value",
       {"--lock-name"},
       {},
       "--lock-name: needs a value (see leasehold --help)"},
      {"positional argument",
       {"--lock-name=a", "extra"},
       {},
       "unexpected argument \"extra\": leasehold takes flags only (see leasehold --help)"},
      // --agent-mode observe: what could match two pods, or cannot be observed safely.
      {"bad mode",
       {"--lock-name=a", "--agent-mode=watch"},
       {{"POD_NAME", "p"}},
       "--agent-mode: \"watch\" is not a mode (one of: elect, observe)"},
      {"bad rule",
       {"--lock-name=a", "--agent-mode=observe", "--observe-identity=prefix"},
       {{"POD_NAME", "p"}},
       "--observe-identity: \"prefix\" is not a rule (one of: pod, exact)"},
      {"pod rule without a pod name (the empty name matches every holder's prefix)",
       {"--lock-name=a", "--agent-mode=observe"},
       {},
       "--observe-identity: needs this pod's name in POD_NAME (from the downward API: "
       "valueFrom.fieldRef.fieldPath: metadata.name)"},
      {"pod rule with a name no pod can have",
       {"--lock-name=a", "--agent-mode=observe"},
       {{"POD_NAME", "a_b"}},
       "--observe-identity: POD_NAME \"a_b\" is not a valid pod name"},
      {"pod rule with the pod in another namespace than the lock",
       {"--lock-name=a", "--agent-mode=observe", "--namespace=ops"},
       {{"POD_NAME", "p"}, {"POD_NAMESPACE", "web"}},
       "--observe-identity: pod matches pod names, unique only within a namespace, but this pod "
       "(POD_NAMESPACE \"web\") is not in the lock's namespace \"ops\" (use exact with "
       "--identity)"},
      {"exact rule without --identity (the default identity is random)",
       {"--lock-name=a", "--agent-mode=observe", "--observe-identity=exact"},
       {{"POD_NAME", "p"}},
       "--observe-identity: needs --identity, the holder identity that is this pod"},
      {"no lock to observe",
       {"--lock-name=a", "--agent-mode=observe", "--lock-type=none"},
       {{"POD_NAME", "p"}},
       "--agent-mode: observe needs a lock to read (not --lock-type none)"},
      {"a margin below the observer's",
       {"--lock-name=a", "--agent-mode=observe", "--lease-duration=15s", "--renew-deadline=14s"},
       {{"POD_NAME", "p"}},
       "--renew-deadline: must be at least 2s below --lease-duration in observe mode (clock "
       "drift, and a rival's whole-second view of the record)"},
  };
  for (const Case& c : cases) {
    SUBCASE(c.name) {
      auto r = ParseCommandLine(c.args, FakeEnvironment(c.vars, {}));
      REQUIRE_FALSE(r.ok());
      CHECK(r.code() == Code::kBadConfig);
      CHECK(r.status().message() == c.want);
      CHECK(r.status().message().find('\n') == std::string::npos);
    }
  }
}

TEST_CASE("--version and --help print and do not run") {
  auto v = ParseCommandLine({"--version"}, FakeEnvironment({}, {}));
  REQUIRE(v.ok());
  CHECK_FALSE(v->config.has_value());
  CHECK(v->output == std::string("leasehold ") + kVersion + "\n");

  // --help needs no --lock-name and wins over bad values.
  for (const Strings& args :
       {Strings{"--help"}, Strings{"-h"}, Strings{"--lease-duration=x", "-h"}}) {
    auto h = ParseCommandLine(args, FakeEnvironment({}, {}));
    REQUIRE(h.ok());
    CHECK_FALSE(h->config.has_value());
    // Words only: the help text is wrapped, so a phrase may span lines.
    std::string text;
    for (const char c : h->output) {
      const bool space = c == ' ' || c == '\n';
      if (!space || (!text.empty() && text.back() != ' ')) text += space ? ' ' : c;
    }
    struct Flag {
      const char* name;
      const char* dflt;  // "" when it has none worth checking
    };
    const std::vector<Flag> flags = {
        {"lock-name", ""},
        {"namespace", "$POD_NAMESPACE"},
        {"identity", "$POD_NAME"},
        {"lock-type", "auto"},
        {"lease-duration", "15s"},
        {"renew-deadline", "10s"},
        {"retry-period", "2s"},
        {"release-on-shutdown", "safe"},
        {"release-holdoff", "30s"},
        {"http-address", "localhost:4040"},
        {"max-watchers", "100"},
        {"status-file", ""},
        {"probe-address", "off"},
        {"leader-label", ""},
        {"kubeconfig", "$KUBECONFIG"},
        {"context", "its current-context"},
        {"serviceaccount-dir", "/var/run/secrets/kubernetes.io/serviceaccount"},
        {"log-format", "text"},
        {"log-level", "info"},
    };
    for (const Flag& f : flags) {
      CAPTURE(f.name);
      CHECK(text.find(std::string("--") + f.name) != std::string::npos);
      CHECK(text.find("Env: " + EnvVarFor(f.name) + ".") != std::string::npos);
      if (*f.dflt) CHECK(text.find(std::string("Default: ") + f.dflt) != std::string::npos);
    }
    CHECK(text.find("--election") != std::string::npos);
    CHECK(text.find("--id ") != std::string::npos);
    CHECK(text.find("both believe they lead") != std::string::npos);
    CHECK(text.find("--version") != std::string::npos);
    CHECK(text.find("/leader/watch") != std::string::npos);
    CHECK(text.find("/metrics") != std::string::npos);
    CHECK(text.find("leasehold probe [--leader] [--address ADDR]") != std::string::npos);
  }
}

TEST_CASE("ParseCommandLine: announcement flags") {
  struct Case {
    const char* name;
    Strings args;
    Map vars;
    std::string want;
  };
  auto summary = [](const AppConfig& c) {
    return "watchers=" + std::to_string(c.local_api.max_watchers) +
           " status=" + c.local_api.status_file + " probe=" + c.local_api.probe_address +
           " label=" + c.leader_pod.label + " cost=" +
           (c.leader_pod.deletion_cost ? std::to_string(*c.leader_pod.deletion_cost) : "") +
           " pod=" + c.leader_pod.pod_namespace + "/" + c.leader_pod.pod_name;
  };
  const std::vector<Case> cases = {
      {"defaults: all off, 100 watchers",
       {"--lock-name=a"},
       {{"POD_NAME", "web-0"}},
       "watchers=100 status= probe= label= cost= pod=/"},
      {"every flag",
       {"--lock-name=a", "--max-watchers=0", "--status-file=/run/leader.json",
        "--probe-address=:8081", "--leader-label=leasehold.io/role", "--deletion-cost=10000"},
       {{"POD_NAME", "web-0"}},
       "watchers=0 status=/run/leader.json probe=:8081 label=leasehold.io/role cost=10000 "
       "pod=/web-0"},
      {"every flag from the environment",
       {"--lock-name=a"},
       {{"LEASEHOLD_MAX_WATCHERS", "10000"},
        {"LEASEHOLD_STATUS_FILE", "leader.json"},
        {"LEASEHOLD_PROBE_ADDRESS", "[::]:8081"},
        {"LEASEHOLD_LEADER_LABEL", "role"},
        {"LEASEHOLD_DELETION_COST", "2147483647"},
        {"POD_NAME", "web-0"},
        {"POD_NAMESPACE", "team"}},
       "watchers=10000 status=leader.json probe=[::]:8081 label=role cost=2147483647 "
       "pod=team/web-0"},
      {"the cost alone marks the pod",
       {"--lock-name=a", "--deletion-cost=1"},
       {{"POD_NAME", "web-0"}},
       "watchers=100 status= probe= label= cost=1 pod=/web-0"},
      {"the label's pod namespace is POD_NAMESPACE even when the lock is elsewhere",
       {"--lock-name=a", "--namespace=locks", "--leader-label=x.io/leader_role.v1"},
       {{"POD_NAME", "web-0"}, {"POD_NAMESPACE", "team"}},
       "watchers=100 status= probe= label=x.io/leader_role.v1 cost= pod=team/web-0"},
  };
  for (const Case& c : cases) {
    SUBCASE(c.name) {
      auto r = ParseCommandLine(c.args, FakeEnvironment(c.vars, {}));
      REQUIRE_MESSAGE(r.ok(), r.status().message());
      REQUIRE(r->config.has_value());
      CHECK(summary(*r->config) == c.want);
    }
  }
}

TEST_CASE("ParseCommandLine: the renew interval in use, by each form of the flag") {
  using namespace std::chrono_literals;
  struct Case {
    const char* name;
    std::vector<std::string> args;
    Duration want;
  };
  const std::vector<Case> cases = {
      {"auto at the default timings", {"--lock-name=a"}, 5500ms},
      {"retry-period follows --retry-period",
       {"--lock-name=a", "--renew-interval=retry-period", "--retry-period=3s"},
       3s},
      {"retry-period given before the retry period",
       {"--lock-name=a", "--retry-period=1s", "--renew-interval=retry-period"},
       1s},
      {"a duration", {"--lock-name=a", "--renew-interval=4s"}, 4s},
  };
  for (const Case& c : cases) {
    SUBCASE(c.name) {
      auto r = ParseCommandLine(c.args, FakeEnvironment({}, {}));
      REQUIRE_MESSAGE(r.ok(), r.status().message());
      REQUIRE(r->config.has_value());
      CHECK(r->config->election.renew_interval() == c.want);
    }
  }
}

TEST_CASE("ParseCommandLine: the preferred-holder rule, by flag and by variable") {
  using election::PreferredHolderRule;
  struct Case {
    const char* name;
    std::vector<std::string> args;
    std::map<std::string, std::string> vars;
    PreferredHolderRule want;
  };
  const std::vector<Case> cases = {
      {"keep by default", {"--lock-name=a"}, {}, PreferredHolderRule::kKeep},
      {"yield by flag",
       {"--lock-name=a", "--preferred-holder=yield"},
       {},
       PreferredHolderRule::kYield},
      {"yield by variable",
       {"--lock-name=a"},
       {{"LEASEHOLD_PREFERRED_HOLDER", "yield"}},
       PreferredHolderRule::kYield},
      {"the flag wins",
       {"--lock-name=a", "--preferred-holder=keep"},
       {{"LEASEHOLD_PREFERRED_HOLDER", "yield"}},
       PreferredHolderRule::kKeep},
  };
  for (const Case& c : cases) {
    SUBCASE(c.name) {
      auto r = ParseCommandLine(c.args, FakeEnvironment(c.vars, {}));
      REQUIRE_MESSAGE(r.ok(), r.status().message());
      REQUIRE(r->config.has_value());
      CHECK(r->config->election.preferred_holder_rule() == c.want);
    }
  }
}

TEST_CASE("ParseCommandLine: timings below the product's floors, with the reason") {
  const std::string retry_why =
      ": records and client-go keep whole seconds, so renews less than a second apart can look "
      "the same to rivals, which then keep the older observation";
  const std::string renew_why =
      ": two renew attempts with the shortest request timeout (1s) must fit, so one lost request "
      "does not make the leader step down";
  struct Case {
    const char* name;
    Strings args;
    Map vars;
    std::string want;  // "" = accepted
  };
  const std::vector<Case> cases = {
      {"the issue's --retry-period 1ns",
       {"--lock-name=a", "--retry-period=1ns"},
       {},
       "--retry-period (1ns) must be at least 1s" + retry_why},
      {"retry-period 999ms",
       {"--lock-name=a", "--retry-period=999ms"},
       {},
       "--retry-period (999ms) must be at least 1s" + retry_why},
      {"retry-period from the environment",
       {"--lock-name=a"},
       {{"LEASEHOLD_RETRY_PERIOD", "500ms"}},
       "--retry-period (500ms) must be at least 1s" + retry_why},
      {"renew-deadline 1.5s",
       {"--lock-name=a", "--lease-duration=3s", "--renew-deadline=1500ms", "--retry-period=1s"},
       {},
       "--renew-deadline (1.5s) must be at least 2s" + renew_why},
      {"the smallest accepted: 3s / 2s / 1s",
       {"--lock-name=a", "--lease-duration=3s", "--renew-deadline=2s", "--retry-period=1s"},
       {},
       ""},
      {"e2e timings 4s / 3s / 1s",
       {"--lock-name=a", "--lease-duration=4s", "--renew-deadline=3s", "--retry-period=1s"},
       {},
       ""},
  };
  for (const Case& c : cases) {
    SUBCASE(c.name) {
      auto r = ParseCommandLine(c.args, FakeEnvironment(c.vars, {}));
      if (c.want.empty()) {
        CHECK_MESSAGE(r.ok(), r.status().message());
      } else {
        REQUIRE_FALSE(r.ok());
        CHECK(r.code() == Code::kBadConfig);
        CHECK(r.status().message() == c.want);
      }
    }
  }
}

TEST_CASE("ElectionConfig::CheckFloors: each floor on its own") {
  using std::chrono::milliseconds;
  using std::chrono::seconds;
  struct Case {
    const char* name;
    Timings t;
    std::string want_prefix;  // "" = OK
  };
  const std::vector<Case> cases = {
      {"at the floors", {seconds(3), seconds(2), seconds(1)}, ""},
      {"retry-period",
       {seconds(15), seconds(10), milliseconds(999)},
       "--retry-period (999ms) must be at least 1s: "},
      {"renew-deadline",
       {seconds(15), milliseconds(1999), seconds(1)},
       // Go's Duration.String(): the old formatter rounded to three digits ("(2s) must be at
       // least 2s").
       "--renew-deadline (1.999s) must be at least 2s: "},
      {"lease-duration",
       {seconds(2), seconds(2), seconds(1)},
       "--lease-duration (2s) must be at least 3s: "},
  };
  for (const Case& c : cases) {
    SUBCASE(c.name) {
      const Status s = election::ElectionConfig::CheckFloors(c.t);
      if (c.want_prefix.empty()) {
        CHECK(s.ok());
      } else {
        CHECK(s.code() == Code::kBadConfig);
        CHECK(s.message().rfind(c.want_prefix, 0) == 0);
      }
    }
  }
}

TEST_CASE("ParseCommandLine: a flag given twice warns once, naming the value that wins") {
  struct Case {
    const char* name;
    Strings args;
    Map vars;
    std::string want_lease;  // the lease-duration in effect
    std::vector<std::string> want;
  };
  const std::vector<Case> cases = {
      {"once: no warning", {"--lock-name=a", "--lease-duration=20s"}, {}, "20s", {}},
      {"only the variable: no warning",
       {"--lock-name=a"},
       {{"LEASEHOLD_LEASE_DURATION", "20s"}},
       "20s",
       {}},
      {"an empty variable counts as unset",
       {"--lock-name=a", "--lease-duration=20s"},
       {{"LEASEHOLD_LEASE_DURATION", ""}},
       "20s",
       {}},
      {"twice on the command line: the last wins (Helm's sidecar.extraArgs)",
       {"--lock-name=a", "--lease-duration=15s", "--lease-duration=30s"},
       {},
       "30s",
       {"--lease-duration is given 2 times on the command line; the last one on the command "
        "line wins: \"30s\""}},
      {"flag and variable: the flag wins",
       {"--lock-name=a", "--lease-duration=30s"},
       {{"LEASEHOLD_LEASE_DURATION", "20s"}},
       "30s",
       {"--lease-duration is given on the command line and in LEASEHOLD_LEASE_DURATION; the "
        "command line wins: \"30s\""}},
      {"three times and the variable: still one warning",
       {"--lock-name=a", "--lease-duration=15s", "--lease-duration=16s", "--lease-duration=17s"},
       {{"LEASEHOLD_LEASE_DURATION", "20s"}},
       "17s",
       {"--lease-duration is given 3 times on the command line and in LEASEHOLD_LEASE_DURATION; "
        "the last one on the command line wins: \"17s\""}},
      {"an alias counts as the flag",
       {"--election=first", "--lock-name=a"},
       {},
       "15s",
       {"--lock-name is given 2 times on the command line; the last one on the command line "
        "wins: \"a\""}},
      {"the value is quoted, control characters escaped",
       {"--lock-name=a", "--context=x", "--context=y\tz\\"},
       {},
       "15s",
       {"--context is given 2 times on the command line; the last one on the command line "
        "wins: \"y\\x09z\\\\\""}},
      {"two flags: one warning each, in --help order",
       {"--lock-name=a", "--retry-period=2s", "--lease-duration=15s", "--retry-period=1s",
        "--lease-duration=16s"},
       {},
       "16s",
       {"--lease-duration is given 2 times on the command line; the last one on the command line "
        "wins: \"16s\"",
        "--retry-period is given 2 times on the command line; the last one on the command line "
        "wins: \"1s\""}},
  };
  for (const Case& c : cases) {
    SUBCASE(c.name) {
      auto r = ParseCommandLine(c.args, FakeEnvironment(c.vars, {}));
      REQUIRE_MESSAGE(r.ok(), r.status().message());
      CHECK(FormatGoDuration(r->config->election.lease_duration()) == c.want_lease);
      CHECK(r->warnings == c.want);
    }
  }
}

TEST_CASE("ParseCommandLine: a near miss of a LEASEHOLD_* variable warns, naming the setting") {
  struct Case {
    const char* name;
    Map vars;
    std::vector<std::string> want;
  };
  const std::vector<Case> cases = {
      {"known variables and others: nothing",
       {{"LEASEHOLD_LEASE_DURATION", "15s"},
        {"POD_NAME", "p"},
        {"HOME", "/root"},
        {"KUBERNETES_SERVICE_HOST", "10.0.0.1"}},
       {}},
      {"a transposition",
       {{"LEASEHOLD_LEASE_DURATOIN", "15s"}},
       {"LEASEHOLD_LEASE_DURATOIN is not a leasehold variable and is ignored; did you mean "
        "LEASEHOLD_LEASE_DURATION (--lease-duration)?"}},
      {"a missing letter",
       {{"LEASEHOLD_RETRY_PERIO", "1s"}},
       {"LEASEHOLD_RETRY_PERIO is not a leasehold variable and is ignored; did you mean "
        "LEASEHOLD_RETRY_PERIOD (--retry-period)?"}},
      {"an alias has no variable: the flag's is named",
       {{"LEASEHOLD_ELECTION", "x"}},
       {"LEASEHOLD_ELECTION is not a leasehold variable and is ignored; did you mean "
        "LEASEHOLD_LOCK_NAME (--lock-name)?"}},
      {"set but empty still warns",
       {{"LEASEHOLD_NAMESPCE", ""}},
       {"LEASEHOLD_NAMESPCE is not a leasehold variable and is ignored; did you mean "
        "LEASEHOLD_NAMESPACE (--namespace)?"}},
      {"two: one warning each, sorted",
       {{"LEASEHOLD_LOG_LEVL", "x"}, {"LEASEHOLD_KUBECONFG", "x"}},
       {"LEASEHOLD_KUBECONFG is not a leasehold variable and is ignored; did you mean "
        "LEASEHOLD_KUBECONFIG (--kubeconfig)?",
        "LEASEHOLD_LOG_LEVL is not a leasehold variable and is ignored; did you mean "
        "LEASEHOLD_LOG_LEVEL (--log-level)?"}},
      {"two edits at most: three is someone else's variable (the near-miss rule)",
       {{"LEASEHOLD_ZZ_LOG_LEVEL", "x"}, {"LEASEHOLD_LEASE_DURATION_XYZ", "x"}},
       {}},
      {"and at most a quarter of the name: LEASEHOLD_PID is 1 edit from --id's would-be variable",
       {{"LEASEHOLD_PID", "1"}, {"LEASEHOLD_I", "1"}},
       {}},
      {"a variable of another command: silent when exact, named with its command when near",
       {{"LEASEHOLD_GATE_STOP_GRACE", "1s"}, {"LEASEHOLD_GATE_STOP_GRAEC", "1s"}},
       {"LEASEHOLD_GATE_STOP_GRAEC is not a leasehold variable and is ignored; did you mean "
        "LEASEHOLD_GATE_STOP_GRACE (leasehold gate --stop-grace)?"}},
  };
  for (const Case& c : cases) {
    SUBCASE(c.name) {
      auto r = ParseCommandLine({"--lock-name=a"}, FakeEnvironment(c.vars, {}));
      REQUIRE_MESSAGE(r.ok(), r.status().message());
      CHECK(r->warnings == c.want);
    }
  }
}

TEST_CASE("ParseCommandLine: a namespace file that is not a small regular file is an error") {
  char dir[] = "/tmp/leasehold-flags-XXXXXX";
  REQUIRE(mkdtemp(dir) != nullptr);
  const std::string sa = dir;
  REQUIRE(mkfifo((sa + "/namespace").c_str(), 0600) == 0);
  Environment env = RealEnvironment();
  env.getenv = [](const std::string&) { return std::optional<std::string>(); };
  const auto start = std::chrono::steady_clock::now();
  auto r = ParseCommandLine({"--lock-name=a", "--serviceaccount-dir=" + sa}, env);
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(1));
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().message() == "--serviceaccount-dir: the namespace file cannot be used: " + sa +
                                    "/namespace is a FIFO, not a regular file (set --namespace, "
                                    "or fix the file)");
  // --namespace given: the file is not read at all.
  CHECK(ParseCommandLine({"--lock-name=a", "--namespace=ns", "--serviceaccount-dir=" + sa}, env)
            .ok());
  std::remove((sa + "/namespace").c_str());
  // Missing: "default", as before.
  auto missing = ParseCommandLine({"--lock-name=a", "--serviceaccount-dir=" + sa}, env);
  REQUIRE(missing.ok());
  CHECK(missing->config->lock.name_space == "default");
  rmdir(dir);
}

TEST_CASE("EnvVarFor") {
  CHECK(EnvVarFor("lock-name") == "LEASEHOLD_LOCK_NAME");
  CHECK(EnvVarFor("serviceaccount-dir") == "LEASEHOLD_SERVICEACCOUNT_DIR");
  CHECK(EnvVarFor("context") == "LEASEHOLD_CONTEXT");
}

// The whole --help text is pinned byte for byte (test/golden/help/), the local API's part (derived
// from its route table) included.
// One jitter constant: the help's words for it are pinned byte for byte, so they are
// checked against election::kJitterFactor instead of being derived from it.
TEST_CASE("--help states election::kJitterFactor") {
  auto h = ParseCommandLine({"--help"}, FakeEnvironment({}, {}));
  REQUIRE(h.ok());
  char factor[64], percent[64];
  std::snprintf(factor, sizeof factor, "above %g x --retry-period", election::kJitterFactor);
  std::snprintf(percent, sizeof percent, "up to %d%% jitter",
                static_cast<int>(election::kJitterFactor * 100 + 0.5));
  CHECK(h->output.find(factor) != std::string::npos);
  CHECK(h->output.find(percent) != std::string::npos);
}

TEST_CASE("golden: leasehold --help") {
  auto h = ParseCommandLine({"--help"}, FakeEnvironment({}, {}));
  REQUIRE(h.ok());
  CheckGolden("help/leasehold.txt", h->output);
}

}  // namespace
}  // namespace leasehold::app
