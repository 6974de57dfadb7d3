#include "election/config.h"

#include <doctest/doctest.h>

#include "base/duration.h"

namespace leasehold::election {
namespace {

using namespace std::chrono_literals;

TEST_CASE("ElectionConfig::Create validates timings as a table") {
  struct Case {
    const char* name;
    Timings t;
    std::string identity;
    Duration holdoff;
    const char* error_fragment;  // nullptr = valid
  };
  const Case cases[] = {
      {"defaults", {15s, 10s, 2s}, "me", 30s, nullptr},
      {"e2e timings", {4s, 3s, 1s}, "me", 30s, nullptr},
      {"margin exactly one second", {11s, 10s, 2s}, "me", 30s, nullptr},
      {"margin below one second", {10s, 9500ms, 2s}, "me", 30s, "by at least 1s"},
      {"lease not whole seconds", {15500ms, 10s, 2s}, "me", 30s, "whole number of seconds"},
      {"lease below one second", {500ms, 200ms, 100ms}, "me", 30s, "at least 1s"},
      {"lease equal renew", {10s, 10s, 2s}, "me", 30s, "greater than --renew-deadline"},
      {"lease below renew", {5s, 10s, 2s}, "me", 30s, "greater than --renew-deadline"},
      {"renew equal 1.2 retry", {15s, 12s, 10s}, "me", 30s, "1.2 x --retry-period"},
      {"renew below retry", {15s, 2s, 5s}, "me", 30s, "1.2 x --retry-period"},
      {"zero retry", {15s, 10s, 0s}, "me", 30s, "--retry-period must be greater than 0"},
      {"negative retry", {15s, 10s, -1s}, "me", 30s, "--retry-period"},
      {"zero renew", {15s, 0s, 2s}, "me", 30s, "--renew-deadline must be greater than 0"},
      {"empty identity", {15s, 10s, 2s}, "", 30s, "--identity"},
      {"negative holdoff", {15s, 10s, 2s}, "me", -1s, "--release-holdoff"},
      {"zero holdoff allowed", {15s, 10s, 2s}, "me", 0s, nullptr},
      {"interval equal to retry-period", {15s, 10s, 2s, 2s}, "me", 30s, nullptr},
      {"interval at its most", {15s, 10s, 2s, 6s}, "me", 30s, nullptr},
      {"interval equal to retry-period, no room", {4s, 3s, 1s, 1s}, "me", 30s, nullptr},
      {"interval below retry-period",
       {15s, 10s, 2s, 1s},
       "me",
       30s,
       "--renew-interval (1s) must be at least --retry-period (2s)"},
      {"interval too long for a hung renew and a retry",
       {15s, 10s, 2s, 6001ms},
       "me",
       30s,
       "--renew-interval (6.001s) must be at most --renew-deadline - --retry-period - 2s (6s) or "
       "equal to --retry-period (2s): a renew that hangs and one retry must fit before the claim "
       "ends"},
      {"interval longer than retry-period, no room",
       {4s, 3s, 1s, 2s},
       "me",
       30s,
       "must be at most --renew-deadline - --retry-period - 2s (0s) or equal to"},
      {"negative interval", {15s, 10s, 2s, -1s}, "me", 30s, "--renew-interval must not be"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.name);
    auto r = ElectionConfig::Create(c.identity, c.t, ReleaseMode::kSafe, c.holdoff);
    if (c.error_fragment == nullptr) {
      REQUIRE(r.ok());
      CHECK(r->lease_duration() == c.t.lease_duration);
      CHECK(r->identity() == c.identity);
    } else {
      REQUIRE_FALSE(r.ok());
      CHECK(r.code() == Code::kBadConfig);
      CHECK_MESSAGE(r.status().message().find(c.error_fragment) != std::string::npos,
                    r.status().message());
    }
  }
}

TEST_CASE("renew-interval auto: 3 x retry-period, within the room, never below retry-period") {
  struct Case {
    Timings t;
    Duration want;
  };
  const Case cases[] = {
      {{15s, 10s, 2s}, 5500ms},                      // the defaults: the room (10 - 2 - 2.5) binds
      {{60s, 40s, 2s}, 6s},                          // 3 x retry-period binds
      {{15s, 10s, 1s}, 3s},     {{4s, 3s, 1s}, 1s},  // no room: retry-period, as before
      {{2s, 1s, 300ms}, 300ms},
  };
  for (const Case& c : cases) {
    CAPTURE(FormatGoDuration(c.t.renew_deadline));
    CAPTURE(FormatGoDuration(c.t.retry_period));
    auto r = ElectionConfig::Create("me", c.t, ReleaseMode::kSafe, 30s);
    REQUIRE(r.ok());
    CHECK(r->renew_interval() == c.want);
    CHECK(AutoRenewInterval(c.t.renew_deadline, c.t.retry_period) == c.want);
  }
}

TEST_CASE("lease_duration_seconds truncates to whole seconds as the record stores them") {
  auto r = ElectionConfig::Create("me", {4s, 3s, 1s}, ReleaseMode::kOff, 0s);
  REQUIRE(r.ok());
  CHECK(r->lease_duration_seconds() == 4);
  CHECK(std::string(ReleaseModeName(r->release_mode())) == "off");
}

}  // namespace
}  // namespace leasehold::election
