#include "election/config.h"

#include <doctest/doctest.h>

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

TEST_CASE("lease_duration_seconds truncates to whole seconds as the record stores them") {
  auto r = ElectionConfig::Create("me", {4s, 3s, 1s}, ReleaseMode::kOff, 0s);
  REQUIRE(r.ok());
  CHECK(r->lease_duration_seconds() == 4);
  CHECK(std::string(ReleaseModeName(r->release_mode())) == "off");
}

}  // namespace
}  // namespace leasehold::election
