// The scripted ApiClient itself: a fake that cannot fail would let every test that uses it pass.
// Each misuse below must fail its test case (doctest::should_fail counts that as a pass), so the
// output shows those failures, and the binary still exits 0.
#include "fakes/scripted_api_client.h"

#include <doctest/doctest.h>

#include <chrono>
#include <string>
#include <vector>

#include "fakes/fake_clock.h"

namespace leasehold::testing {
namespace {

using std::chrono::seconds;

const MonoTime kDeadline = MonoTime(std::chrono::hours(7));
const std::string kPath = "/api/v1/namespaces/ns/configmaps/lock";

kube::Request Req(std::string method, std::string path, std::string body = "",
                  std::string content_type = "application/json") {
  kube::Request r;
  r.method = std::move(method);
  r.path = std::move(path);
  r.body = std::move(body);
  r.content_type = std::move(content_type);
  return r;
}

TEST_CASE("scripted requests are answered in order, and every request is recorded") {
  FakeClock clock;
  ScriptedApiClient api(clock, seconds(5));
  int during = 0;
  Call put = PUT(kPath, JsonEq(R"({"a":1,"b":[2]})"), Error(Code::kConflict));
  put.during = [&] { ++during; };
  api.Expect({GET(kPath, Answer("{}")), std::move(put)});
  CHECK(api.pending() == 2);

  const MonoTime first = clock.MonotonicNow() + seconds(1);
  CHECK(api.Do(Req("GET", kPath), first)->body == "{}");
  const MonoTime second = clock.MonotonicNow() + seconds(5);
  CHECK(api.Do(Req("PUT", kPath, R"({"b":[2],"a":1})"), second).code() == Code::kConflict);
  CHECK(during == 1);
  CHECK(api.pending() == 0);
  CHECK(api.sent() == std::vector<std::string>{"GET " + kPath, "PUT " + kPath});
  CHECK(api.deadlines() == std::vector<MonoTime>{first, second});
}

TEST_CASE("a request with an empty script fails" * doctest::should_fail()) {
  ScriptedApiClient api(kDeadline);
  CHECK(api.Do(Req("GET", kPath), kDeadline).code() == Code::kUnavailable);
}

TEST_CASE("a request other than the next scripted one fails" * doctest::should_fail()) {
  ScriptedApiClient api(kDeadline);
  api.Expect(GET(kPath, Answer("{}")));
  CHECK(api.Do(Req("GET", kPath + "x"), kDeadline).code() == Code::kUnavailable);
}

TEST_CASE("a scripted request never sent fails" * doctest::should_fail()) {
  ScriptedApiClient api(kDeadline);
  api.Expect(GET(kPath, Answer("{}")));
}

TEST_CASE("a deadline other than the caller's fails" * doctest::should_fail()) {
  ScriptedApiClient api(kDeadline);
  api.Expect(GET(kPath, Answer("{}")));
  // The fake fails the test on this call (should_fail); its answer is beside the point.
  (void)api.Do(Req("GET", kPath), kDeadline + seconds(1));
}

TEST_CASE("a deadline beyond the allowed timeout fails" * doctest::should_fail()) {
  FakeClock clock;
  ScriptedApiClient api(clock, seconds(5));
  api.Expect(GET(kPath, Answer("{}")));
  // The fake fails the test on this call (should_fail); its answer is beside the point.
  (void)api.Do(Req("GET", kPath), clock.MonotonicNow() + seconds(6));
}

TEST_CASE("a deadline already passed fails" * doctest::should_fail()) {
  FakeClock clock;
  ScriptedApiClient api(clock, seconds(5));
  api.Expect(GET(kPath, Answer("{}")));
  // The fake fails the test on this call (should_fail); its answer is beside the point.
  (void)api.Do(Req("GET", kPath), clock.MonotonicNow());
}

TEST_CASE("a body that is not the expected JSON fails" * doctest::should_fail()) {
  ScriptedApiClient api(kDeadline);
  api.Expect(PUT(kPath, JsonEq(R"({"a":1})"), Answer("{}")));
  // The fake fails the test on this call (should_fail); its answer is beside the point.
  (void)api.Do(Req("PUT", kPath, R"({"a":2})"), kDeadline);
}

TEST_CASE("a body on a request scripted without one fails" * doctest::should_fail()) {
  ScriptedApiClient api(kDeadline);
  api.Expect(GET(kPath, Answer("{}")));
  // The fake fails the test on this call (should_fail); its answer is beside the point.
  (void)api.Do(Req("GET", kPath, "{}"), kDeadline);
}

TEST_CASE("a content type other than the scripted one fails" * doctest::should_fail()) {
  ScriptedApiClient api(kDeadline);
  api.Expect(PATCH(kPath, AnyBody(), Answer("{}")));
  // The fake fails the test on this call (should_fail); its answer is beside the point.
  (void)api.Do(Req("PATCH", kPath, "{}", "application/json"), kDeadline);
}

}  // namespace
}  // namespace leasehold::testing
