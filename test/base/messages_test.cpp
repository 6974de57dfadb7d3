// The user-facing messages of base/messages.h (one home for each message). Pins their
// wording, checks the RBAC verbs against the Role the project ships, and fails when a message's
// text is written out again anywhere under src/ instead of using its constant.
#include "base/messages.h"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "test_paths.h"  // LEASEHOLD_SOURCE_DIR: deploy/rbac and src/ are read

namespace leasehold {
namespace {

std::string Slurp(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

const std::filesystem::path kRoot = LEASEHOLD_SOURCE_DIR;

TEST_CASE("messages: the wording") {
  CHECK(std::string(kCredentialsRefused) ==
        "the API server does not accept this agent's credentials");
  CHECK(std::string(kLockRbacRefused) ==
        "the API server refuses this agent (its ServiceAccount needs get, create, update and "
        "watch on the lock; the Role in deploy/rbac grants them)");
}

// The verbs the message names are exactly the verbs deploy/rbac grants on the Lease (the Role
// leasehold on the named lock, plus leasehold-create), which are the agent's calls: GET, POST,
// PUT and the watch (locks/lease_lock.cpp, locks/annotation_lock.cpp, cluster/lock_watcher.cpp).
TEST_CASE("messages: the RBAC verbs are the Role's") {
  const std::string role = Slurp(kRoot / "deploy/rbac/role.yaml");
  REQUIRE_FALSE(role.empty());
  struct Case {
    const char* verb;
    bool granted;
  };
  const Case cases[] = {
      {"get", true},   {"create", true}, {"update", true},  {"watch", true},
      {"list", false}, {"patch", false}, {"delete", false},
  };
  const std::string message = kLockRbacRefused;
  for (const Case& c : cases) {
    CAPTURE(c.verb);
    const std::string quoted = std::string("\"") + c.verb + "\"";
    CHECK((role.find(quoted) != std::string::npos) == c.granted);
    const std::string word = std::string(" ") + c.verb;
    const bool named = message.find(word + ",") != std::string::npos ||
                       message.find(word + " ") != std::string::npos;
    CHECK(named == c.granted);
  }
}

// Each message, and each fragment that once had copies (handler.cpp and elector.cpp disagreed on
// the verbs; "expired, revoked or invalid" was written three times), occurs in exactly one file
// under src/.
TEST_CASE("messages: one home each under src/") {
  struct Case {
    const char* name;
    std::string text;
    const char* home;
  };
  const std::vector<Case> cases = {
      {"credentials refused", kCredentialsRefused, "src/base/messages.h"},
      {"RBAC refused", "needs get, create, update and watch", "src/base/messages.h"},
      {"token cause", "expired, revoked or invalid", "src/kube/status_error.h"},
      {"any other verb list", "get, create and update", ""},
      {"log format", "is not a log format", "src/app/flags.cpp"},
      {"log level", "is not a log level", "src/app/flags.cpp"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    std::vector<std::string> found;
    for (const auto& e : std::filesystem::recursive_directory_iterator(kRoot / "src")) {
      if (!e.is_regular_file()) continue;
      // The text may be wrapped across string literals: compare with the literals joined.
      std::string body = Slurp(e.path());
      std::string joined;
      for (size_t i = 0; i < body.size(); ++i) {
        if (body[i] == '"') {
          size_t j = i + 1;
          while (j < body.size() && (body[j] == ' ' || body[j] == '\n')) ++j;
          if (j < body.size() && body[j] == '"') {
            i = j;
            continue;
          }
        }
        joined += body[i];
      }
      if (joined.find(c.text) != std::string::npos) {
        found.push_back(std::filesystem::relative(e.path(), kRoot).string());
      }
    }
    std::string where;
    for (const std::string& f : found) where += f + " ";
    const std::string info = std::string(c.name) + " found in: " + where;
    INFO(info);
    if (std::string(c.home).empty()) {
      CHECK(found.empty());
    } else {
      CHECK(found == std::vector<std::string>{c.home});
    }
  }
}

}  // namespace
}  // namespace leasehold
