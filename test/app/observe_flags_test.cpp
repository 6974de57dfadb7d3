// --agent-mode observe and --observe-identity: what is accepted (what is refused is in
// flags_test.cpp's table of bad values).
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

}  // namespace
}  // namespace leasehold::app
