#include <doctest/doctest.h>

#include <vector>

#include "lock_fixtures.h"

namespace leasehold::locks::testing {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

const std::string kWithLeases =
    R"({"kind":"APIResourceList","apiVersion":"v1","groupVersion":"coordination.k8s.io/v1",)"
    R"("resources":[{"name":"leases","singularName":"lease","namespaced":true,"kind":"Lease",)"
    R"("verbs":["create","delete","deletecollection","get","list","patch","update","watch"],)"
    R"("storageVersionHash":"gqkMMb/YqFM="}]})";
const std::string kWithoutLeases =
    R"({"kind":"APIResourceList","apiVersion":"v1","groupVersion":"coordination.k8s.io/v1",)"
    R"("resources":[{"name":"leasecandidates","kind":"LeaseCandidate"}]})";

TEST_CASE("auto lock: deciding") {
  const std::string cm_other = ConfigMapObject("7", AnnotationHeldBy(kOther));
  const std::string lease_other = LeaseObject("50", HeldSpec(kOther));
  const std::string lease_me = LeaseObject("50", kMySpec);
  const std::vector<LockCase> cases = {
      {"Lease API served, no ConfigMap: leases",
       "auto",
       {
           GetStep("get", {GET(kDiscoveryPath, Answer(kWithLeases)),
                           GET(kConfigMapPath, Error(Code::kNotFound)),
                           GET(kLeasePath, Answer(lease_other))})
               .Holder(kOther)
               .Raw(LeaseRawOf(lease_other))
               .Type("leases"),
           UpdateStep("update is the Lease's", {PUT(kLeasePath, JsonEq(LeaseObject("50", kMySpec)),
                                                    Answer(LeaseObject("51", kMySpec)))}),
           GetStep("no second discovery, no re-check yet", {GET(kLeasePath, Answer(lease_other))})
               .After(seconds(1)),
       }},
      {"Lease API served, Lease missing: create is the Lease's",
       "auto",
       {
           GetStep("get", {GET(kDiscoveryPath, Answer(kWithLeases)),
                           GET(kConfigMapPath, Error(Code::kNotFound)),
                           GET(kLeasePath, Error(Code::kNotFound))})
               .Want(Code::kNotFound)
               .Type("leases"),
           CreateStep("create", {POST(kLeasesPath, AnyBody(), Answer(lease_me, 201))}),
       }},
      {"discovery 404: configmaps, decided for good",
       "auto",
       {
           GetStep("get", {GET(kDiscoveryPath, Error(Code::kNotFound)),
                           GET(kConfigMapPath, Answer(cm_other))})
               .Holder(kOther)
               .Raw(AnnotationHeldBy(kOther))
               .Type("configmaps"),
           UpdateStep("update is the ConfigMap's",
                      {PUT(kConfigMapPath, JsonEq(ConfigMapObject("7", kMyAnnotation)),
                           Answer(ConfigMapObject("8", kMyAnnotation)))}),
           GetStep("later gets read only the ConfigMap", {GET(kConfigMapPath, Answer(cm_other))})
               .After(seconds(60))
               .Type("configmaps"),
       }},
      {"discovery 200 without leases: configmaps",
       "auto",
       {
           GetStep("get", {GET(kDiscoveryPath, Answer(kWithoutLeases)),
                           GET(kConfigMapPath, Error(Code::kNotFound))})
               .Want(Code::kNotFound)
               .Type("configmaps"),
           CreateStep("create is the ConfigMap's",
                      {POST(kConfigMapsPath, AnyBody(),
                            Answer(ConfigMapObject("1", kMyAnnotation), 201))}),
       }},
      {"discovery 503: undecided, retried on the next Get",
       "auto",
       {
           GetStep("get", {GET(kDiscoveryPath, Error(Code::kUnavailable))})
               .Want(Code::kUnavailable)
               .Type("auto"),
           CreateStep("create before deciding sends nothing", {}).Want(Code::kFailedPrecondition),
           UpdateStep("update before deciding sends nothing", {}).Want(Code::kFailedPrecondition),
           GetStep("retry", {GET(kDiscoveryPath, Answer(kWithLeases)),
                             GET(kConfigMapPath, Error(Code::kNotFound)),
                             GET(kLeasePath, Answer(lease_other))})
               .Holder(kOther)
               .Type("leases"),
       }},
      {"unreadable discovery answer: undecided",
       "auto",
       {
           GetStep("html", {GET(kDiscoveryPath, Answer("<html>proxy</html>"))})
               .Want(Code::kMalformed)
               .Type("auto"),
           GetStep("resources not a list",
                   {GET(kDiscoveryPath, Answer(R"({"resources":{"name":"leases"}})"))})
               .Want(Code::kMalformed)
               .Type("auto"),
           GetStep("retry", {GET(kDiscoveryPath, Error(Code::kNotFound)),
                             GET(kConfigMapPath, Answer(cm_other))})
               .Type("configmaps"),
       }},
      {"ConfigMap exists: configmapsleases, Lease written without a re-read",
       "auto",
       {
           GetStep("get",
                   {GET(kDiscoveryPath, Answer(kWithLeases)), GET(kConfigMapPath, Answer(cm_other)),
                    GET(kLeasePath, Answer(lease_other))})
               .Holder(kOther)
               .Raw(AnnotationHeldBy(kOther) + "," + LeaseRawOf(lease_other))
               .Type("configmapsleases"),
           UpdateStep("update PUTs both, each with the version the Get read",
                      {PUT(kConfigMapPath, JsonEq(ConfigMapObject("7", kMyAnnotation)),
                           Answer(ConfigMapObject("8", kMyAnnotation))),
                       PUT(kLeasePath, JsonEq(LeaseObject("50", kMySpec)),
                           Answer(LeaseObject("51", kMySpec)))}),
           UpdateStep("fast path: each PUT carries the last answer's version",
                      {PUT(kConfigMapPath, JsonEq(ConfigMapObject("8", kMyAnnotation)),
                           Answer(ConfigMapObject("9", kMyAnnotation))),
                       PUT(kLeasePath, JsonEq(LeaseObject("51", kMySpec)), Error(Code::kConflict))})
               .Want(Code::kConflict),
           GetStep("every Get re-reads the ConfigMap",
                   {GET(kConfigMapPath, Answer(ConfigMapObject("9", kMyAnnotation))),
                    GET(kLeasePath, Answer(lease_other))})
               .Holder(election::kUnknownLeader),
       }},
      {"ConfigMap exists, Lease missing: configmapsleases creates the Lease without a re-read",
       "auto",
       {
           GetStep("get",
                   {GET(kDiscoveryPath, Answer(kWithLeases)), GET(kConfigMapPath, Answer(cm_other)),
                    GET(kLeasePath, Error(Code::kNotFound))})
               .Holder(kOther)
               .Raw(AnnotationHeldBy(kOther))
               .Type("configmapsleases"),
           UpdateStep("update", {PUT(kConfigMapPath, JsonEq(ConfigMapObject("7", kMyAnnotation)),
                                     Answer(ConfigMapObject("8", kMyAnnotation))),
                                 POST(kLeasesPath, AnyBody(), Error(Code::kAlreadyExists))})
               .Want(Code::kAlreadyExists),
       }},
      {"ConfigMap check forbidden: fails closed, naming the permission",
       "auto",
       {
           GetStep("get", {GET(kDiscoveryPath, Answer(kWithLeases)),
                           GET(kConfigMapPath, Error(Code::kForbidden, "RBAC: access denied"))})
               .Want(Code::kForbidden)
               .Message("get configmaps \"lock\" in namespace \"ns\"")
               .Type("auto"),
           UpdateStep("nothing to update yet", {}).Want(Code::kFailedPrecondition),
           GetStep("next Get checks again, without discovery",
                   {GET(kConfigMapPath, Error(Code::kForbidden, "RBAC: access denied"))})
               .Want(Code::kForbidden)
               .Message("get configmaps \"lock\" in namespace \"ns\""),
           GetStep("granted", {GET(kConfigMapPath, Error(Code::kNotFound)),
                               GET(kLeasePath, Answer(lease_other))})
               .Type("leases"),
       }},
      {"ConfigMap check unavailable: the error, checked again next time",
       "auto",
       {
           GetStep("get", {GET(kDiscoveryPath, Answer(kWithLeases)),
                           GET(kConfigMapPath, Error(Code::kUnavailable))})
               .Want(Code::kUnavailable)
               .Type("auto"),
           GetStep("again", {GET(kConfigMapPath, Error(Code::kNotFound)),
                             GET(kLeasePath, Answer(lease_other))})
               .Type("leases"),
       }},
  };
  for (const LockCase& c : cases) {
    SUBCASE(c.name) { RunLockCase(c); }
  }
}

TEST_CASE("auto lock: any other discovery answer decides nothing") {
  const std::string lease_other = LeaseObject("50", HeldSpec(kOther));
  for (Code code : {Code::kUnavailable, Code::kDeadlineExceeded, Code::kForbidden,
                    Code::kUnauthorized, Code::kTooManyRequests, Code::kBadRequest}) {
    SUBCASE(CodeName(code)) {
      RunLockCase({CodeName(code),
                   "auto",
                   {
                       GetStep("get", {GET(kDiscoveryPath, Error(code))}).Want(code).Type("auto"),
                       GetStep("retry", {GET(kDiscoveryPath, Answer(kWithLeases)),
                                         GET(kConfigMapPath, Error(Code::kNotFound)),
                                         GET(kLeasePath, Answer(lease_other))})
                           .Type("leases"),
                   }});
    }
  }
}

TEST_CASE("auto lock: re-checking for the ConfigMap") {
  const std::string cm_other = ConfigMapObject("7", AnnotationHeldBy(kOther));
  const std::string lease_other = LeaseObject("50", HeldSpec(kOther));
  const Call lease_get = GET(kLeasePath, Answer(lease_other));
  const Call cm_missing = GET(kConfigMapPath, Error(Code::kNotFound));
  const std::vector<LockCase> cases = {
      {"Lease-only mode re-checks once a lease duration has passed, and not before",
       "auto",
       {
           GetStep("decide", {GET(kDiscoveryPath, Answer(kWithLeases)), cm_missing, lease_get})
               .Type("leases"),
           GetStep("14.999s later: Lease only", {lease_get}).After(milliseconds(14999)),
           GetStep("15s after the check: re-check", {cm_missing, lease_get}).After(milliseconds(1)),
           GetStep("10s later: Lease only", {lease_get}).After(seconds(10)),
           GetStep("15s after the last check: re-check", {cm_missing, lease_get})
               .After(seconds(5))
               .Type("leases"),
       }},
      {"a ConfigMap that appears switches to configmapsleases; its deletion switches back",
       "auto",
       {
           GetStep("decide", {GET(kDiscoveryPath, Answer(kWithLeases)), cm_missing, lease_get})
               .Type("leases"),
           GetStep("ConfigMap appeared", {GET(kConfigMapPath, Answer(cm_other)), lease_get})
               .After(seconds(15))
               .Holder(kOther)
               .Raw(AnnotationHeldBy(kOther) + "," + LeaseRawOf(lease_other))
               .Type("configmapsleases"),
           GetStep("multilock mode reads the ConfigMap on every Get",
                   {GET(kConfigMapPath, Answer(cm_other)), lease_get})
               .After(seconds(1))
               .Type("configmapsleases"),
           GetStep("ConfigMap deleted", {cm_missing, lease_get})
               .After(seconds(1))
               .Holder(kOther)
               .Raw(LeaseRawOf(lease_other))
               .Type("leases"),
           GetStep("back to Lease only until the next re-check", {lease_get})
               .After(seconds(14))
               .Type("leases"),
       }},
      {"a leader renewing Lease-only re-checks on Update once a lease duration has passed",
       "auto",
       {
           GetStep("decide", {GET(kDiscoveryPath, Answer(kWithLeases)), cm_missing,
                              GET(kLeasePath, Answer(LeaseObject("50", kMySpec)))})
               .Type("leases"),
           UpdateStep("14.999s later: the PUT alone",
                      {PUT(kLeasePath, JsonEq(LeaseObject("50", kMySpec)),
                           Answer(LeaseObject("51", kMySpec)))})
               .After(milliseconds(14999)),
           UpdateStep("15s after the check: re-check, then the PUT",
                      {cm_missing, PUT(kLeasePath, JsonEq(LeaseObject("51", kMySpec)),
                                       Answer(LeaseObject("52", kMySpec)))})
               .After(milliseconds(1))
               .Type("leases"),
           UpdateStep("re-check forbidden: no PUT, fails closed",
                      {GET(kConfigMapPath, Error(Code::kForbidden))})
               .After(seconds(15))
               .Want(Code::kForbidden)
               .Message("get configmaps \"lock\" in namespace \"ns\"")
               .Type("leases"),
           UpdateStep("re-check fails (503): no PUT",
                      {GET(kConfigMapPath, Error(Code::kUnavailable))})
               .Want(Code::kUnavailable)
               .Type("leases"),
           UpdateStep("a ConfigMap appeared: no PUT, Conflict",
                      {GET(kConfigMapPath, Answer(cm_other))})
               .Want(Code::kConflict)
               .Type("configmapsleases"),
           GetStep("the elector's Get then reads both and sees two holders",
                   {GET(kConfigMapPath, Answer(cm_other)),
                    GET(kLeasePath, Answer(LeaseObject("52", kMySpec)))})
               .Holder(election::kUnknownLeader)
               .Type("configmapsleases"),
       }},
      {"a failed re-check fails closed and is retried on the next Get",
       "auto",
       {
           GetStep("decide", {GET(kDiscoveryPath, Answer(kWithLeases)), cm_missing, lease_get}),
           GetStep("re-check times out", {GET(kConfigMapPath, Error(Code::kDeadlineExceeded))})
               .After(seconds(15))
               .Want(Code::kDeadlineExceeded)
               .Type("leases"),
           GetStep("re-check forbidden", {GET(kConfigMapPath, Error(Code::kForbidden))})
               .Want(Code::kForbidden)
               .Message("get configmaps \"lock\" in namespace \"ns\""),
           GetStep("re-check succeeds", {cm_missing, lease_get}),
           GetStep("then waits again", {lease_get}).After(seconds(14)),
       }},
  };
  for (const LockCase& c : cases) {
    SUBCASE(c.name) { RunLockCase(c); }
  }
}

}  // namespace
}  // namespace leasehold::locks::testing
