#include <doctest/doctest.h>

#include <vector>

#include "lock_fixtures.h"

namespace leasehold::locks::testing {
namespace {

TEST_CASE("leases lock: exact requests and cache handling") {
  const std::string held = LeaseObject("100", HeldSpec(kOther));
  const std::string mine101 = LeaseObject("101", kMySpec);
  std::string renewed = held;
  renewed.replace(renewed.find("10.000002Z"), 10, "10.000003Z");
  REQUIRE(LeaseRawOf(renewed) != LeaseRawOf(held));
  const std::vector<LockCase> cases = {
      {"get caches the whole object; update PUTs it back with only spec replaced",
       "leases",
       {
           GetStep("get", {GET(kLeasePath, Answer(held))}).Holder(kOther).Raw(LeaseRawOf(held)),
           // strategy/preferredHolder are gone: a record without them clears them (what the
           // elector keeps of them: "Coordinated leader election" in elector.cpp).
           UpdateStep("update",
                      {PUT(kLeasePath, JsonEq(LeaseObject("100", kMySpec)), Answer(mine101))}),
           UpdateStep("fast-path update uses the server's answer",
                      {PUT(kLeasePath, JsonEq(mine101), Answer(LeaseObject("102", kMySpec)))}),
       }},
      {"a record's strategy and preferredHolder are written, and read back the same",
       "leases",
       {
           GetStep("get", {GET(kLeasePath, Answer(held))}),
           UpdateStep("update", {PUT(kLeasePath, JsonEq(LeaseObject("100", kMyCoordinatedSpec)),
                                     Answer(LeaseObject("101", kMyCoordinatedSpec)))})
               .Writing(MyCoordinatedRecord()),
           GetStep("get", {GET(kLeasePath, Answer(LeaseObject("101", kMyCoordinatedSpec)))})
               .Holder(kMe)
               .Raw(LeaseRawRecord(MyCoordinatedRecord())),
       }},
      {"update without a cache sends nothing",
       "leases",
       {UpdateStep("update", {}).Want(Code::kFailedPrecondition)}},
      {"NotFound, then create caches the server's answer",
       "leases",
       {
           GetStep("get", {GET(kLeasePath, Error(Code::kNotFound))}).Want(Code::kNotFound),
           CreateStep("create",
                      {POST(kLeasesPath,
                            BytesEq(R"({"apiVersion":"coordination.k8s.io/v1","kind":"Lease",)"
                                    R"("metadata":{"name":"lock","namespace":"ns"},"spec":)" +
                                    kMySpec + "}"),
                            Answer(LeaseObject("1", kMySpec), 201))}),
           UpdateStep("update",
                      {PUT(kLeasePath, JsonEq(LeaseObject("1", kMySpec)), Answer(mine101))}),
       }},
      {"a failed update keeps the old cache",
       "leases",
       {
           GetStep("get", {GET(kLeasePath, Answer(held))}),
           UpdateStep("conflict", {PUT(kLeasePath, JsonEq(LeaseObject("100", kMySpec)),
                                       Error(Code::kConflict))})
               .Want(Code::kConflict),
           UpdateStep("timeout", {PUT(kLeasePath, JsonEq(LeaseObject("100", kMySpec)),
                                      Error(Code::kDeadlineExceeded))})
               .Want(Code::kDeadlineExceeded),
           UpdateStep("retry sends the same resourceVersion",
                      {PUT(kLeasePath, JsonEq(LeaseObject("100", kMySpec)), Answer(mine101))}),
       }},
      {"a failed create caches nothing",
       "leases",
       {
           CreateStep("create", {POST(kLeasesPath,
                                      JsonEq(R"({"apiVersion":"coordination.k8s.io/v1",)"
                                             R"("kind":"Lease","metadata":{"name":)"
                                             R"("lock","namespace":"ns"},"spec":)" +
                                             kMySpec + "}"),
                                      Error(Code::kAlreadyExists))})
               .Want(Code::kAlreadyExists),
           UpdateStep("update", {}).Want(Code::kFailedPrecondition),
       }},
      {"NotFound drops the cache",
       "leases",
       {
           GetStep("get", {GET(kLeasePath, Answer(held))}),
           GetStep("deleted", {GET(kLeasePath, Error(Code::kNotFound))}).Want(Code::kNotFound),
           UpdateStep("update", {}).Want(Code::kFailedPrecondition),
       }},
      {"other get errors pass through and keep the cache",
       "leases",
       {
           GetStep("get", {GET(kLeasePath, Answer(held))}),
           GetStep("unavailable", {GET(kLeasePath, Error(Code::kUnavailable))})
               .Want(Code::kUnavailable),
           GetStep("forbidden", {GET(kLeasePath, Error(Code::kForbidden))}).Want(Code::kForbidden),
           UpdateStep("update",
                      {PUT(kLeasePath, JsonEq(LeaseObject("100", kMySpec)), Answer(mine101))}),
       }},
      {"an unreadable body is Malformed and caches nothing",
       "leases",
       {
           GetStep("html", {GET(kLeasePath, Answer("<html>bad gateway</html>"))})
               .Want(Code::kMalformed),
           UpdateStep("nothing was cached", {}).Want(Code::kFailedPrecondition),
       }},
      {"a mistyped spec is an opaque holder, cached for a takeover",
       "leases",
       {
           GetStep("mistyped spec",
                   {GET(kLeasePath, Answer(LeaseObject("100", R"({"holderIdentity":5})")))})
               .Holder("")
               .Raw("opaque:100"),
           UpdateStep("the takeover PUTs on the opaque object's version",
                      {PUT(kLeasePath, JsonEq(LeaseObject("100", kMySpec)), Answer(mine101))}),
       }},
      {"an update whose answer is unreadable succeeds but drops the stale cache",
       "leases",
       {
           GetStep("get", {GET(kLeasePath, Answer(held))}),
           UpdateStep("update",
                      {PUT(kLeasePath, JsonEq(LeaseObject("100", kMySpec)), Answer("not json"))}),
           UpdateStep("next update needs a Get", {}).Want(Code::kFailedPrecondition),
       }},
      {"an empty spec reads as the zero record",
       "leases",
       {
           GetStep("get", {GET(kLeasePath, Answer(LeaseObject("5", "{}")))})
               .Holder("")
               .Raw(
                   R"({"holderIdentity":"","leaseDurationSeconds":0,"acquireTime":null,)"
                   R"("renewTime":null,"leaderTransitions":0,"strategy":"","preferredHolder":""})"),
       }},
      {"raw changes when only the microseconds of renewTime change",
       "leases",
       {
           GetStep("first", {GET(kLeasePath, Answer(held))}).Raw(LeaseRawOf(held)),
           GetStep("renewed 1us later", {GET(kLeasePath, Answer(renewed))})
               .Raw(LeaseRawOf(renewed)),
       }},
  };
  for (const LockCase& c : cases) {
    SUBCASE(c.name) { RunLockCase(c); }
  }
}

TEST_CASE("leases lock: describe") {
  FakeClock clock;
  ScriptedApiClient api(kDeadline);
  auto lock =
      NewLock({election::LockType::kLeases, kNs, kName, kMe, std::chrono::seconds(15)}, api, clock);
  REQUIRE(lock.ok());
  const election::LockDescription d = (*lock)->Describe();
  CHECK(d.type == election::LockType::kLeases);
  CHECK(election::LockTypeName(d.type) == "leases");
  CHECK(d.name_space == kNs);
  CHECK(d.name == kName);
}

}  // namespace
}  // namespace leasehold::locks::testing
