#include "locks/annotation_lock.h"

#include <doctest/doctest.h>

#include <vector>

#include "lock_fixtures.h"
#include "locks/go_json.h"

namespace leasehold::locks::testing {
namespace {

std::string CreateBody(const std::string& kind) {
  return R"({"apiVersion":"v1","kind":")" + kind +
         R"(","metadata":{"name":"lock","namespace":"ns","annotations":{)"
         R"("control-plane.alpha.kubernetes.io/leader":)" +
         GoJsonQuote(kMyAnnotation) + "}}}";
}

TEST_CASE("configmaps and endpoints locks: exact requests and cache handling") {
  const std::string held = ConfigMapObject("7", AnnotationHeldBy(kOther));
  const std::vector<LockCase> cases = {
      {"get reads the annotation; update sets it and PUTs the whole object",
       "configmaps",
       {
           GetStep("get", {GET(kConfigMapPath, Answer(held))})
               .Holder(kOther)
               .Raw(AnnotationHeldBy(kOther))
               .Type("configmaps"),
           UpdateStep("update", {PUT(kConfigMapPath, JsonEq(ConfigMapObject("7", kMyAnnotation)),
                                     Answer(ConfigMapObject("8", kMyAnnotation)))}),
           UpdateStep("fast-path update uses the server's answer",
                      {PUT(kConfigMapPath, JsonEq(ConfigMapObject("8", kMyAnnotation)),
                           Answer(ConfigMapObject("9", kMyAnnotation)))}),
       }},
      {"a missing annotation reads as the zero record with empty raw",
       "configmaps",
       {
           GetStep("get", {GET(kConfigMapPath, Answer(ConfigMapObject("7", std::nullopt)))})
               .Holder("")
               .Raw(""),
           UpdateStep("update adds it beside the other annotations",
                      {PUT(kConfigMapPath, JsonEq(ConfigMapObject("7", kMyAnnotation)),
                           Answer(ConfigMapObject("8", kMyAnnotation)))}),
       }},
      {"no annotations map at all",
       "configmaps",
       {
           GetStep("get",
                   {GET(kConfigMapPath, Answer(R"({"kind":"ConfigMap","metadata":{"name":"lock",)"
                                               R"("resourceVersion":"3"},"data":{"a":"b"}})"))})
               .Holder("")
               .Raw(""),
           UpdateStep("update creates the map",
                      {PUT(kConfigMapPath,
                           JsonEq(R"({"kind":"ConfigMap","metadata":{"name":"lock",)"
                                  R"("resourceVersion":"3","annotations":{)"
                                  R"("control-plane.alpha.kubernetes.io/leader":)" +
                                  GoJsonQuote(kMyAnnotation) + R"(}},"data":{"a":"b"}})"),
                           Answer(ConfigMapObject("4", kMyAnnotation)))}),
       }},
      {"null annotations read as none",
       "configmaps",
       {
           GetStep("get", {GET(kConfigMapPath,
                               Answer(R"({"metadata":{"name":"lock","annotations":null}})"))})
               .Holder("")
               .Raw(""),
       }},
      {"create sends the record as client-go does, byte for byte",
       "configmaps",
       {
           GetStep("get", {GET(kConfigMapPath, Error(Code::kNotFound))}).Want(Code::kNotFound),
           CreateStep("create", {POST(kConfigMapsPath, BytesEq(CreateBody("ConfigMap")),
                                      Answer(ConfigMapObject("1", kMyAnnotation), 201))}),
           UpdateStep("update uses the created object",
                      {PUT(kConfigMapPath, JsonEq(ConfigMapObject("1", kMyAnnotation)),
                           Answer(ConfigMapObject("2", kMyAnnotation)))}),
       }},
      {"a failed update keeps the old cache",
       "configmaps",
       {
           GetStep("get", {GET(kConfigMapPath, Answer(held))}),
           UpdateStep("conflict", {PUT(kConfigMapPath, JsonEq(ConfigMapObject("7", kMyAnnotation)),
                                       Error(Code::kConflict))})
               .Want(Code::kConflict),
           UpdateStep("retry", {PUT(kConfigMapPath, JsonEq(ConfigMapObject("7", kMyAnnotation)),
                                    Answer(ConfigMapObject("8", kMyAnnotation)))}),
       }},
      {"update without a cache sends nothing",
       "configmaps",
       {UpdateStep("update", {}).Want(Code::kFailedPrecondition)}},
      {"an unreadable annotation is an opaque holder, cached for a takeover",
       "configmaps",
       {
           GetStep("not JSON", {GET(kConfigMapPath, Answer(ConfigMapObject("7", "garbage")))})
               .Holder("")
               .Raw("opaque:7"),
           GetStep("empty", {GET(kConfigMapPath, Answer(ConfigMapObject("8", "")))})
               .Holder("")
               .Raw("opaque:8"),
           GetStep("mistyped field",
                   {GET(kConfigMapPath,
                        Answer(ConfigMapObject("9", R"({"leaseDurationSeconds":true})")))})
               .Holder("")
               .Raw("opaque:9"),
           GetStep(
               "annotation is a number",
               {GET(kConfigMapPath, Answer(R"({"metadata":{"resourceVersion":"10","annotations":{)"
                                           R"("control-plane.alpha.kubernetes.io/leader":5}}})"))})
               .Holder("")
               .Raw("opaque:10"),
           GetStep("a numeric string duration reads",
                   {GET(kConfigMapPath,
                        Answer(ConfigMapObject("11", R"({"leaseDurationSeconds":"15"})")))})
               .Raw(R"({"leaseDurationSeconds":"15"})"),
           GetStep("garbage again", {GET(kConfigMapPath, Answer(ConfigMapObject("12", "x")))})
               .Raw("opaque:12"),
           UpdateStep("the takeover PUTs on the opaque object's version",
                      {PUT(kConfigMapPath, JsonEq(ConfigMapObject("12", kMyAnnotation)),
                           Answer(ConfigMapObject("13", kMyAnnotation)))}),
       }},
      {"a malformed object is Malformed and caches nothing",
       "configmaps",
       {
           GetStep("annotations is a list",
                   {GET(kConfigMapPath, Answer(R"({"metadata":{"annotations":[]}})"))})
               .Want(Code::kMalformed),
           UpdateStep("nothing was cached", {}).Want(Code::kFailedPrecondition),
       }},
      {"endpoints use their own path and kind",
       "endpoints",
       {
           GetStep("get", {GET(kEndpointsPath, Error(Code::kNotFound))})
               .Want(Code::kNotFound)
               .Type("endpoints"),
           CreateStep("create",
                      {POST(kEndpointsCollectionPath, BytesEq(CreateBody("Endpoints")),
                            Answer(AnnotatedObject("Endpoints", "1", kMyAnnotation), 201))}),
           UpdateStep("update",
                      {PUT(kEndpointsPath, JsonEq(AnnotatedObject("Endpoints", "1", kMyAnnotation)),
                           Answer(AnnotatedObject("Endpoints", "2", kMyAnnotation)))}),
           GetStep("get", {GET(kEndpointsPath, Answer(AnnotatedObject("Endpoints", "3",
                                                                      AnnotationHeldBy(kOther))))})
               .Holder(kOther)
               .Raw(AnnotationHeldBy(kOther)),
       }},
  };
  for (const LockCase& c : cases) {
    SUBCASE(c.name) { RunLockCase(c); }
  }
}

TEST_CASE("AnnotationObservation reads a watch event's object as Get reads a GET answer") {
  struct Case {
    const char* name;
    std::string object;
    Code want;
    std::string holder;
  };
  const std::vector<Case> cases = {
      {"held", AnnotatedObject("ConfigMap", "3", AnnotationHeldBy(kOther)), Code::kOk, kOther},
      {"no annotations", R"({"metadata":{"name":"lock"}})", Code::kOk, ""},
      {"annotations not an object", R"({"metadata":{"annotations":[]}})", Code::kMalformed, ""},
      {"not JSON", "{", Code::kMalformed, ""},
      {"an unreadable record: opaque, never a holder",
       AnnotatedObject("ConfigMap", "4", R"({"holderIdentity":"x","leaseDurationSeconds":[]})"),
       Code::kOk, ""},
  };
  for (const Case& c : cases) {
    SUBCASE(c.name) {
      auto o = AnnotationObservation(c.object);
      REQUIRE(o.code() == c.want);
      if (o.ok()) CHECK(o->record.holder_identity == c.holder);
      if (o.ok() && o->opaque) {
        CHECK(o->raw == "opaque:4");
        CHECK(o->unreadable.find("leaseDurationSeconds") != std::string::npos);
      }
    }
  }
}

}  // namespace
}  // namespace leasehold::locks::testing
