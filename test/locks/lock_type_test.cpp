#include "locks/lock_type.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

namespace leasehold::locks {
namespace {

TEST_CASE("lock type names parse back to their type; nothing else parses") {
  for (const election::LockType t : election::kAllLockTypes) {
    CAPTURE(std::string(election::LockTypeName(t)));
    CHECK(election::ParseLockType(election::LockTypeName(t)) == t);
  }
  for (const char* bad : {"", "Leases", "lease", "auto ", "leases ", "configmap", "endpointsLeases",
                          "endpointleases", "zookeeper"}) {
    CAPTURE(bad);
    CHECK_FALSE(election::ParseLockType(bad).has_value());
  }
  CHECK(LockTypeNames() ==
        "auto, leases, configmaps, endpoints, configmapsleases, endpointsleases, none");
}

TEST_CASE("LockObjects: the objects each lock type keeps its record in") {
  struct Want {
    std::string api_version, kind, resource;
  };
  const Want lease{"coordination.k8s.io/v1", "Lease", "leases"};
  const Want cm{"v1", "ConfigMap", "configmaps"};
  const Want ep{"v1", "Endpoints", "endpoints"};
  struct Case {
    election::LockType type;
    std::vector<Want> want;
    bool single;  // watched as one object
  };
  const std::vector<Case> cases = {
      {election::LockType::kLeases, {lease}, true},
      {election::LockType::kAuto, {lease}, false},
      {election::LockType::kConfigMaps, {cm}, true},
      {election::LockType::kEndpoints, {ep}, true},
      {election::LockType::kConfigMapsLeases, {cm, lease}, false},
      {election::LockType::kEndpointsLeases, {ep, lease}, false},
      {election::LockType::kNone, {}, false},
  };
  for (const Case& c : cases) {
    CAPTURE(std::string(election::LockTypeName(c.type)));
    const std::vector<const LockObjectKind*> got = LockObjects(c.type);
    REQUIRE(got.size() == c.want.size());
    for (size_t i = 0; i < got.size(); ++i) {
      CHECK(got[i]->ApiVersion() == c.want[i].api_version);
      CHECK(got[i]->kind == c.want[i].kind);
      CHECK(got[i]->resource == c.want[i].resource);
    }
    const LockObjectKind* single = SingleLockObject(c.type);
    CHECK((single != nullptr) == c.single);
    if (single != nullptr) CHECK(single == got.front());
  }
}

TEST_CASE("LockObjectKind::Ref builds the object's paths") {
  CHECK(kLeaseObject.Ref("ns", "my-lock").Path() ==
        "/apis/coordination.k8s.io/v1/namespaces/ns/leases/my-lock");
  CHECK(kConfigMapObject.Ref("ns", "my-lock").CollectionPath() ==
        "/api/v1/namespaces/ns/configmaps");
  CHECK(kEndpointsObject.Ref("a b", "x/y").Path() == "/api/v1/namespaces/a%20b/endpoints/x%2Fy");
}

}  // namespace
}  // namespace leasehold::locks
