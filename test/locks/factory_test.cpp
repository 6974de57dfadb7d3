#include "locks/factory.h"

#include <doctest/doctest.h>

#include <vector>

#include "fakes/fake_clock.h"
#include "fakes/scripted_api_client.h"

namespace leasehold::locks {
namespace {

using ::leasehold::testing::ScriptedApiClient;

TEST_CASE("NewLock") {
  struct Case {
    const char* name;
    LockOptions options;
    Code want;
    const char* want_type;  // Describe().type before any request
  };
  auto opts = [](const char* type, const char* ns, const char* name, const char* identity) {
    LockOptions o;
    o.type = election::ParseLockType(type).value();
    o.name_space = ns;
    o.name = name;
    o.identity = identity;
    return o;
  };
  const std::vector<Case> cases = {
      {"auto", opts("auto", "ns", "lock", "me"), Code::kOk, "auto"},
      {"leases", opts("leases", "ns", "lock", "me"), Code::kOk, "leases"},
      {"configmaps", opts("configmaps", "ns", "lock", "me"), Code::kOk, "configmaps"},
      {"endpoints", opts("endpoints", "ns", "lock", "me"), Code::kOk, "endpoints"},
      {"configmapsleases", opts("configmapsleases", "ns", "lock", "me"), Code::kOk,
       "configmapsleases"},
      {"endpointsleases", opts("endpointsleases", "ns", "lock", "me"), Code::kOk,
       "endpointsleases"},
      {"none: election off, a local lock", opts("none", "ns", "lock", "me"), Code::kOk, "none"},
      {"empty namespace", opts("leases", "", "lock", "me"), Code::kBadConfig, ""},
      {"empty name", opts("leases", "ns", "", "me"), Code::kBadConfig, ""},
      {"empty identity", opts("leases", "ns", "lock", ""), Code::kBadConfig, ""},
  };
  for (const Case& c : cases) {
    SUBCASE(c.name) {
      FakeClock clock;
      ScriptedApiClient api(MonoTime{});
      auto lock = NewLock(c.options, api, clock);
      REQUIRE(lock.code() == c.want);
      if (lock.ok()) {
        const election::LockDescription d = (*lock)->Describe();
        CHECK(election::LockTypeName(d.type) == c.want_type);
        CHECK(d.name_space == "ns");
        CHECK(d.name == "lock");
      }
    }
  }
}

}  // namespace
}  // namespace leasehold::locks
