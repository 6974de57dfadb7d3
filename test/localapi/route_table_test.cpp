// The route table (localapi/routes.h) and what is derived from it: the 404 bodies' endpoint
// lists and the "Local API" lines of --help (all of --help: test/golden/help, app_test). What
// each route decides per listener, method and peer: routes_test.cpp.
#include <doctest/doctest.h>

#include <set>
#include <string>

#include "localapi/routes.h"

namespace leasehold::localapi {
namespace {

TEST_CASE("route table: every path once, found by its exact path only") {
  std::set<std::string> paths;
  for (const Route& route : Routes()) {
    CAPTURE(std::string(route.path));
    CHECK(paths.insert(route.path).second);
    CHECK(FindRoute(route.path) == &route);
    CHECK((route.handler != nullptr));
    // A route the probe listener shows never streams: the hub is the main listener's.
    if (route.on_probe) CHECK(route.promise != Promise::kStream);
  }
  for (const char* path : {"", "/leader/", "/LEADER", "/is-leader/x", "//", "/release?x"}) {
    CAPTURE(std::string(path));
    CHECK(FindRoute(path) == nullptr);
  }
}

TEST_CASE("route table: the 404 bodies list the routes in table order, aliases left out") {
  CHECK(EndpointList(false) ==
        "/leader, /is-leader, /leader/watch, /release, /healthz, /readyz, /metrics");
  CHECK(EndpointList(true) == "/is-leader, /healthz, /readyz, /metrics");
}

TEST_CASE("route table: the help lines, POST noted, aliases after a comma, shared lines") {
  const std::string help = RoutesHelp();
  CHECK(help.rfind("  /leader, /        JSON: ", 0) == 0);
  CHECK(help.find("\n                    renewTime, ") != std::string::npos);
  CHECK(help.find("\n  POST /release     the main container") != std::string::npos);
  CHECK(help.find("\n  /healthz /readyz  liveness and readiness probes\n") != std::string::npos);
  const std::string last = "  /metrics          Prometheus text format\n";
  REQUIRE(help.size() > last.size());
  CHECK(help.compare(help.size() - last.size(), last.size(), last) == 0);
}

}  // namespace
}  // namespace leasehold::localapi
