#include <doctest/doctest.h>

#include <vector>

#include "lock_fixtures.h"

namespace leasehold::locks::testing {
namespace {

// client-go's MultiLock (configmapsleases and endpointsleases), fenced where client-go would
// overwrite (multi_lock.h): no re-GET of the Lease before writing it.
TEST_CASE("multilocks: client-go's sequence, fenced") {
  const std::string cm_other = ConfigMapObject("7", AnnotationHeldBy(kOther));
  const std::string cm_me = ConfigMapObject("7", kMyAnnotation);
  const std::string lease_other = LeaseObject("50", HeldSpec(kOther));
  const std::string lease_me = LeaseObject("50", kMySpec);
  const std::string lease_me51 = LeaseObject("51", kMySpec);
  const std::vector<LockCase> cases = {
      {"both held by the same holder",
       "configmapsleases",
       {
           GetStep("get",
                   {GET(kConfigMapPath, Answer(cm_other)), GET(kLeasePath, Answer(lease_other))})
               .Holder(kOther)
               .Raw(AnnotationHeldBy(kOther) + "," + LeaseRawOf(lease_other))
               .Type("configmapsleases"),
       }},
      {"holders differ: unknown leader",
       "configmapsleases",
       {
           GetStep("get",
                   {GET(kConfigMapPath, Answer(cm_other)), GET(kLeasePath, Answer(lease_me))})
               .Holder(election::kUnknownLeader)
               .Raw(AnnotationHeldBy(kOther) + "," + LeaseRawOf(lease_me)),
       }},
      {"Lease missing, ConfigMap held by an old client: its record",
       "configmapsleases",
       {
           GetStep("get",
                   {GET(kConfigMapPath, Answer(cm_other)), GET(kLeasePath, Error(Code::kNotFound))})
               .Holder(kOther)
               .Raw(AnnotationHeldBy(kOther)),
           // The takeover: PUT the ConfigMap, create the Lease the Get found missing (client-go
           // GETs it once more first).
           UpdateStep("update creates the missing Lease",
                      {PUT(kConfigMapPath, JsonEq(ConfigMapObject("7", kMyAnnotation)),
                           Answer(ConfigMapObject("8", kMyAnnotation))),
                       POST(kLeasesPath,
                            JsonEq(R"({"apiVersion":"coordination.k8s.io/v1","kind":"Lease",)"
                                   R"("metadata":{"name":"lock","namespace":"ns"},"spec":)" +
                                   kMySpec + "}"),
                            Answer(LeaseObject("1", kMySpec), 201))}),
       }},
      {"Lease missing, ConfigMap held by me: its record; the renew PUTs it and creates the Lease",
       "configmapsleases",
       {
           // client-go returns NotFound here and POSTs the ConfigMap again, ignoring
           // AlreadyExists; that write is not conditional and restarts the term at 0.
           GetStep("get",
                   {GET(kConfigMapPath, Answer(cm_me)), GET(kLeasePath, Error(Code::kNotFound))})
               .Holder(kMe),
           UpdateStep("renew", {PUT(kConfigMapPath, JsonEq(cm_me),
                                    Answer(ConfigMapObject("8", kMyAnnotation))),
                                POST(kLeasesPath,
                                     JsonEq(R"({"apiVersion":"coordination.k8s.io/v1",)"
                                            R"("kind":"Lease","metadata":{"name":"lock",)"
                                            R"("namespace":"ns"},"spec":)" +
                                            kMySpec + "}"),
                                     Answer(LeaseObject("1", kMySpec), 201))}),
       }},
      {"Lease missing, ConfigMap taken by an old client since the Get: no Lease written",
       "configmapsleases",
       {
           GetStep("get",
                   {GET(kConfigMapPath, Answer(cm_me)), GET(kLeasePath, Error(Code::kNotFound))})
               .Holder(kMe),
           UpdateStep("renew", {PUT(kConfigMapPath, JsonEq(cm_me), Error(Code::kConflict))})
               .Want(Code::kConflict),
       }},
      {"ConfigMap missing: NotFound without reading the Lease; create both",
       "configmapsleases",
       {
           GetStep("get", {GET(kConfigMapPath, Error(Code::kNotFound))}).Want(Code::kNotFound),
           CreateStep("create", {POST(kConfigMapsPath, AnyBody(), Answer(cm_me, 201)),
                                 POST(kLeasesPath, AnyBody(), Answer(lease_me, 201))}),
           UpdateStep(
               "update: each PUT carries the version its create answered",
               {PUT(kConfigMapPath, JsonEq(cm_me), Answer(ConfigMapObject("8", kMyAnnotation))),
                PUT(kLeasePath, JsonEq(lease_me), Answer(lease_me51))}),
       }},
      {"ConfigMap missing, then created by an old client before our POST: no Lease, no lead",
       "configmapsleases",
       {
           GetStep("get", {GET(kConfigMapPath, Error(Code::kNotFound))}).Want(Code::kNotFound),
           // client-go ignores this AlreadyExists, creates the Lease and leads beside the old
           // client, which never reads the Lease.
           CreateStep("create", {POST(kConfigMapsPath, AnyBody(), Error(Code::kAlreadyExists))})
               .Want(Code::kAlreadyExists),
       }},
      {"create stops at a ConfigMap error other than AlreadyExists",
       "configmapsleases",
       {
           CreateStep("create", {POST(kConfigMapsPath, AnyBody(), Error(Code::kForbidden))})
               .Want(Code::kForbidden),
       }},
      {"errors",
       "configmapsleases",
       {
           GetStep("ConfigMap unavailable", {GET(kConfigMapPath, Error(Code::kUnavailable))})
               .Want(Code::kUnavailable),
           GetStep("Lease unavailable", {GET(kConfigMapPath, Answer(cm_other)),
                                         GET(kLeasePath, Error(Code::kUnavailable))})
               .Want(Code::kUnavailable),
           GetStep("Lease forbidden",
                   {GET(kConfigMapPath, Answer(cm_me)), GET(kLeasePath, Error(Code::kForbidden))})
               .Want(Code::kForbidden),
       }},
      {"update: the Lease is written with the version the Get read, not re-read",
       "configmapsleases",
       {
           GetStep("get", {GET(kConfigMapPath, Answer(cm_me)), GET(kLeasePath, Answer(lease_me))})
               .Holder(kMe),
           UpdateStep("update", {PUT(kConfigMapPath, JsonEq(cm_me),
                                     Answer(ConfigMapObject("8", kMyAnnotation))),
                                 PUT(kLeasePath, JsonEq(lease_me), Answer(lease_me51))}),
           UpdateStep("ConfigMap conflict stops the update",
                      {PUT(kConfigMapPath, JsonEq(ConfigMapObject("8", kMyAnnotation)),
                           Error(Code::kConflict))})
               .Want(Code::kConflict),
           UpdateStep("renew: each PUT carries the version of our last write",
                      {PUT(kConfigMapPath, JsonEq(ConfigMapObject("8", kMyAnnotation)),
                           Answer(ConfigMapObject("9", kMyAnnotation))),
                       PUT(kLeasePath, JsonEq(lease_me51), Answer(LeaseObject("52", kMySpec)))}),
       }},
      {"a Lease taken by a Lease-only replica since the Get is not overwritten",
       "configmapsleases",
       {
           GetStep("get: both expired, held by another",
                   {GET(kConfigMapPath, Answer(cm_other)), GET(kLeasePath, Answer(lease_other))})
               .Holder(kOther),
           // Meanwhile a Lease-only replica takes the Lease (version 51). client-go's re-GET
           // would fetch 51 and overwrite it; the PUT of version 50 fails instead.
           UpdateStep("takeover",
                      {PUT(kConfigMapPath, JsonEq(ConfigMapObject("7", kMyAnnotation)),
                           Answer(ConfigMapObject("8", kMyAnnotation))),
                       PUT(kLeasePath, JsonEq(LeaseObject("50", kMySpec)), Error(Code::kConflict))})
               .Want(Code::kConflict),
       }},
      {"endpointsleases uses the Endpoints object",
       "endpointsleases",
       {
           GetStep("get", {GET(kEndpointsPath,
                               Answer(AnnotatedObject("Endpoints", "7", AnnotationHeldBy(kOther)))),
                           GET(kLeasePath, Answer(lease_other))})
               .Holder(kOther)
               .Type("endpointsleases"),
           UpdateStep("update",
                      {PUT(kEndpointsPath, JsonEq(AnnotatedObject("Endpoints", "7", kMyAnnotation)),
                           Answer(AnnotatedObject("Endpoints", "8", kMyAnnotation))),
                       PUT(kLeasePath, JsonEq(LeaseObject("50", kMySpec)), Answer(lease_me51))}),
       }},
  };
  for (const LockCase& c : cases) {
    SUBCASE(c.name) { RunLockCase(c); }
  }
}

}  // namespace
}  // namespace leasehold::locks::testing
