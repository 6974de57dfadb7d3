// --agent-mode observe and --observe-identity: what is accepted, and each configuration that
// could match two pods (or cannot be observed safely) refused with one line naming the flag.
#include <doctest/doctest.h>

#include <map>
#include <string>
#include <vector>

#include "app/flags.h"
#include "fakes/fake_environment.h"

namespace leasehold::app {
namespace {

using Strings = std::vector<std::string>;
using Map = std::map<std::string, std::string>;
using testing::FakeEnvironment;

TEST_CASE("ParseCommandLine: observe mode's holder match") {
  struct Case {
    const char* name;
    Strings args;
    Map vars;
    election::MatchRule rule;
    std::string match_name;
  };
  const std::vector<Case> cases = {
      {"pod rule from POD_NAME",
       {"--lock-name=a", "--agent-mode=observe"},
       {{"POD_NAME", "op-7d9f-x2"}},
       election::MatchRule::kPod,
       "op-7d9f-x2"},
      {"pod rule with the lock in the pod's namespace",
       {"--lock-name=a", "--agent-mode=observe", "--namespace=ops"},
       {{"POD_NAME", "op-0"}, {"POD_NAMESPACE", "ops"}},
       election::MatchRule::kPod,
       "op-0"},
      {"exact rule from --identity",
       {"--lock-name=a", "--agent-mode=observe", "--observe-identity=exact", "--identity=x_1"},
       {},
       election::MatchRule::kExact,
       "x_1"},
      {"from the environment",
       {"--lock-name=a"},
       {{"LEASEHOLD_AGENT_MODE", "observe"}, {"POD_NAME", "p"}},
       election::MatchRule::kPod,
       "p"},
  };
  for (const Case& c : cases) {
    SUBCASE(c.name) {
      auto r = ParseCommandLine(c.args, FakeEnvironment(c.vars, {}));
      REQUIRE_MESSAGE(r.ok(), r.status().message());
      REQUIRE(r->config);
      CHECK(r->config->mode == AgentMode::kObserve);
      CHECK(r->config->observe_match.rule == c.rule);
      CHECK(r->config->observe_match.name == c.match_name);
    }
  }
  SUBCASE("elect mode is the default and reads no POD_NAME") {
    auto r = ParseCommandLine({"--lock-name=a"}, FakeEnvironment({}, {}));
    REQUIRE(r.ok());
    CHECK(r->config->mode == AgentMode::kElect);
  }
}

TEST_CASE("ParseCommandLine: observe mode refuses what could match two pods, in one line") {
  struct Case {
    const char* name;
    Strings args;
    Map vars;
    std::string want;
  };
  const std::vector<Case> cases = {
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

}  // namespace
}  // namespace leasehold::app
