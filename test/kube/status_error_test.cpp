#include "kube/status_error.h"

#include <doctest/doctest.h>

#include <random>
#include <string>

#include "kube/watch.h"

namespace leasehold::kube {
namespace {

std::string StatusBody(const std::string& reason, const std::string& message, int code) {
  return R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":")" +
         message + R"(","reason":")" + reason + R"(","code":)" + std::to_string(code) + "}";
}

// Only a 401 (kUnauthorized) gets words of our own in front of the server's.
std::string Prefix(Code code) { return code == Code::kUnauthorized ? kUnauthorizedPrefix : ""; }

TEST_CASE("a 401 is an authentication failure, not a missing permission") {
  struct Case {
    const char* name;
    long http;
    std::string body;
    std::string want;
  };
  // The words in front say it is about the credentials, so nobody goes looking in the Role.
  const std::string auth = kUnauthorizedPrefix;
  CHECK(auth.find("authentication failed") == 0);
  CHECK(auth.find("token") != std::string::npos);
  CHECK(auth.find("certificate") != std::string::npos);
  const Case cases[] = {
      {"the apiserver's 401 body", 401, StatusBody("Unauthorized", "Unauthorized", 401),
       auth + "Unauthorized"},
      {"a bare 401", 401, "", auth + "HTTP 401"},
      {"a proxy's 401 page", 401, "<h1>401</h1>", auth + "HTTP 401: <h1>401</h1>"},
      {"a 403 stays the server's words", 403,
       StatusBody("Forbidden", "leases is forbidden: user u cannot get", 403),
       "leases is forbidden: user u cannot get"},
  };
  for (const Case& c : cases) {
    INFO(std::string(c.name));
    const Status s = StatusFromResponse(c.http, c.body);
    CHECK(s.message() == c.want);
    if (c.http == 401) {
      CHECK(s.code() == Code::kUnauthorized);
      CHECK(s.ToString().find("RBAC") == std::string::npos);
      CHECK(s.ToString().find("permission") == std::string::npos);
    }
  }
}

// Each metav1.StatusReason an apiserver answers our requests with, paired with the HTTP code it
// sends it with (k8s.io/apimachinery/pkg/api/errors): the wire as it is, not our table.
struct ApiServerFailure {
  const char* reason;
  long http;
};
constexpr ApiServerFailure kApiServerFailures[] = {
    {"NotFound", 404},      {"AlreadyExists", 409},   {"Conflict", 409},
    {"Invalid", 422},       {"BadRequest", 400},      {"MethodNotAllowed", 405},
    {"Unauthorized", 401},  {"Forbidden", 403},       {"Gone", 410},
    {"Expired", 410},       {"TooManyRequests", 429}, {"ServiceUnavailable", 503},
    {"InternalError", 500}, {"ServerTimeout", 500},   {"Timeout", 504},
};
// Reasons that add nothing to their HTTP code for us: left to it.
constexpr ApiServerFailure kLeftToTheHttpCode[] = {
    {"NotAcceptable", 406}, {"UnsupportedMediaType", 415}, {"RequestEntityTooLarge", 413}};

TEST_CASE("a Status reason decides the code, whatever HTTP code a proxy puts in front of it") {
  for (const ApiServerFailure& f : kApiServerFailures) {
    CAPTURE(f.reason);
    const Status real = StatusFromResponse(f.http, StatusBody(f.reason, "server says why", 0));
    CHECK(real.message() == Prefix(real.code()) + "server says why");
    CHECK(CodeFromReason(f.reason) == real.code());
    // 418 falls back to kBadRequest and 500 to kUnavailable: only the reason can make them agree.
    for (const long other : {200L, 302L, 418L, 500L}) {
      CAPTURE(other);
      CHECK(StatusFromResponse(other, StatusBody(f.reason, "m", 0)).code() == real.code());
    }
  }
  for (const ApiServerFailure& f : kLeftToTheHttpCode) {
    CAPTURE(f.reason);
    CHECK_FALSE(CodeFromReason(f.reason).has_value());
    CHECK(StatusFromResponse(f.http, StatusBody(f.reason, "m", 0)).code() ==
          CodeFromHttpStatus(f.http));
  }
}

TEST_CASE("with the HTTP code the apiserver pairs it with, a reason agrees with that code") {
  for (const ApiServerFailure& f : kApiServerFailures) {
    CAPTURE(f.reason);
    const Code code = StatusFromResponse(f.http, StatusBody(f.reason, "m", 0)).code();
    // AlreadyExists is the one reason finer than its HTTP code: a Create that lost the race
    // (409) must not read as an Update's Conflict.
    if (std::string(f.reason) == "AlreadyExists") {
      CHECK(code == Code::kAlreadyExists);
      CHECK(CodeFromHttpStatus(f.http) == Code::kConflict);
    } else {
      CHECK(code == CodeFromHttpStatus(f.http));
    }
  }
}

TEST_CASE("a reason is matched exactly; others are left to the HTTP code") {
  for (const char* unknown : {"", "SomethingNew", "notfound", "NotFound "}) {
    CAPTURE(std::string(unknown));
    CHECK_FALSE(CodeFromReason(unknown).has_value());
  }
}

TEST_CASE("the HTTP code decides when the reason is unknown, empty or the body is missing") {
  struct Case {
    const char* name;
    long http;
    Code want;
  };
  const Case cases[] = {
      {"400", 400, Code::kBadRequest},
      {"401", 401, Code::kUnauthorized},
      {"403", 403, Code::kForbidden},
      {"404", 404, Code::kNotFound},
      {"405", 405, Code::kBadRequest},
      {"409", 409, Code::kConflict},
      {"410", 410, Code::kGone},
      {"422", 422, Code::kInvalid},
      {"429", 429, Code::kTooManyRequests},
      {"504", 504, Code::kDeadlineExceeded},
      {"500", 500, Code::kUnavailable},
      {"502", 502, Code::kUnavailable},
      {"503", 503, Code::kUnavailable},
      {"other 4xx", 418, Code::kBadRequest},
      {"other 5xx", 599, Code::kUnavailable},
      {"3xx", 302, Code::kUnavailable},
  };
  for (const Case& c : cases) {
    INFO(std::string(c.name));
    CHECK(CodeFromHttpStatus(c.http) == c.want);
    SUBCASE("unknown reason") {
      const Status s = StatusFromResponse(c.http, StatusBody("SomethingNew", "msg", 0));
      CHECK(s.code() == c.want);
      CHECK(s.message() == Prefix(c.want) + "msg");
    }
    SUBCASE("empty reason") {
      CHECK(StatusFromResponse(c.http, StatusBody("", "msg", 0)).code() == c.want);
    }
    SUBCASE("missing body") {
      const Status s = StatusFromResponse(c.http, "");
      CHECK(s.code() == c.want);
      // A bodiless 404 is no Status either: the API itself is not served (the case below).
      CHECK(s.message() == Prefix(c.want) + "HTTP " + std::to_string(c.http) +
                               (c.http == 404 ? kNotServedSuffix : ""));
    }
  }
}

TEST_CASE("bodies that are not a Status fall back to the HTTP code and quote the body") {
  struct Case {
    const char* name;
    std::string body;
    std::string want_message;
  };
  const Case cases[] = {
      {"text", "upstream connect error", "HTTP 503: upstream connect error"},
      {"html with newlines", "<html>\r\n<b>Bad Gateway</b>\n</html>\n",
       "HTTP 503: <html>  <b>Bad Gateway</b> </html>"},
      {"other JSON", R"({"error":"nope","reason":"NotFound"})",
       R"(HTTP 503: {"error":"nope","reason":"NotFound"})"},
      {"kind not Status", R"({"kind":"Lease","reason":"NotFound"})",
       R"(HTTP 503: {"kind":"Lease","reason":"NotFound"})"},
      {"truncated JSON", R"({"kind":"Status","reason":"NotFo)",
       R"(HTTP 503: {"kind":"Status","reason":"NotFo)"},
      {"JSON array", "[1,2]", "HTTP 503: [1,2]"},
      {"whitespace only", " \n", "HTTP 503"},
      {"binary", std::string("\x00\x01\xff", 3), "HTTP 503"},
  };
  for (const Case& c : cases) {
    INFO(std::string(c.name));
    const Status s = StatusFromResponse(503, c.body);
    CHECK(s.code() == Code::kUnavailable);
    CHECK(s.message() == c.want_message);
  }
}

TEST_CASE("a plain-text 404 says the API is not served, a NotFound Status does not") {
  // Kubernetes 1.11's answer to GET .../apis/coordination.k8s.io/v1/.../leases/x, verbatim.
  const Status plain = StatusFromResponse(404, "404 page not found\n");
  CHECK(plain.code() == Code::kNotFound);
  CHECK(plain.message() == std::string("HTTP 404: 404 page not found") + kNotServedSuffix);
  const Status empty = StatusFromResponse(404, "");
  CHECK(empty.code() == Code::kNotFound);
  CHECK(empty.message() == std::string("HTTP 404") + kNotServedSuffix);
  const Status missing =
      StatusFromResponse(404, StatusBody("NotFound", "configmaps \\\"lock\\\" not found", 404));
  CHECK(missing.code() == Code::kNotFound);
  CHECK(missing.message() == "configmaps \"lock\" not found");
  // A Status without a message is still the server's own answer about an object.
  const Status bare = StatusFromResponse(404, R"({"kind":"Status","reason":"NotFound"})");
  CHECK(bare.message() == "HTTP 404 NotFound");
}

TEST_CASE("a long non-Status body is cut") {
  const Status s = StatusFromResponse(502, std::string(5000, 'x'));
  CHECK(s.message().size() < 250);
  CHECK(s.message().substr(s.message().size() - 3) == "...");
}

TEST_CASE("Status fields of the wrong type are ignored") {
  const Status s = StatusFromResponse(
      404, R"({"kind":"Status","reason":42,"message":["x"],"details":{"retryAfterSeconds":"3"}})");
  CHECK(s.code() == Code::kNotFound);
  CHECK(s.message() == "HTTP 404");
  CHECK_FALSE(s.retry_after().has_value());
}

TEST_CASE("a Status with a reason but no message names both") {
  const Status s = StatusFromResponse(409, R"({"kind":"Status","reason":"Conflict"})");
  CHECK(s.code() == Code::kConflict);
  CHECK(s.message() == "HTTP 409 Conflict");
}

TEST_CASE("Retry-After is kept only on TooManyRequests and Unavailable answers") {
  struct Case {
    const char* name;
    long http;
    std::string body;
    std::string header;
    std::optional<int> want_seconds;
  };
  const Case cases[] = {
      {"429 with header", 429, StatusBody("TooManyRequests", "slow down", 429), "5", 5},
      {"503 with header", 503, "", "7", 7},
      {"500 InternalError with header", 500, StatusBody("InternalError", "x", 500), "1", 1},
      {"header with spaces", 429, "", " 12 ", 12},
      {"zero", 429, "", "0", 0},
      {"no header", 429, "", "", std::nullopt},
      {"HTTP date is not used", 503, "", "Wed, 21 Oct 2015 07:28:00 GMT", std::nullopt},
      {"negative", 503, "", "-3", std::nullopt},
      {"absurd", 503, "", "99999999999", std::nullopt},
      {"fraction", 503, "", "1.5", std::nullopt},
      {"409 ignores it", 409, "", "5", std::nullopt},
      {"504 ignores it", 504, "", "5", std::nullopt},
      {"details.retryAfterSeconds without header", 429,
       R"({"kind":"Status","reason":"TooManyRequests","details":{"retryAfterSeconds":4},"code":429})",
       "", 4},
      {"header wins over details", 429,
       R"({"kind":"Status","reason":"TooManyRequests","details":{"retryAfterSeconds":4},"code":429})",
       "9", 9},
  };
  for (const Case& c : cases) {
    INFO(std::string(c.name));
    const Status s = StatusFromResponse(c.http, c.body, c.header);
    if (c.want_seconds) {
      REQUIRE(s.retry_after().has_value());
      CHECK(s.retry_after()->count() == *c.want_seconds);
    } else {
      CHECK_FALSE(s.retry_after().has_value());
    }
  }
}

TEST_CASE("the real apiserver's bodies map as expected") {
  const std::string conflict =
      R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Operation cannot be fulfilled on leases.coordination.k8s.io \"lock\": the object has been modified; please apply your changes to the latest version and try again","reason":"Conflict","details":{"name":"lock","group":"coordination.k8s.io","kind":"leases"},"code":409})";
  const Status s = StatusFromResponse(409, conflict);
  CHECK(s.code() == Code::kConflict);
  CHECK(s.message() ==
        "Operation cannot be fulfilled on leases.coordination.k8s.io \"lock\": the object has "
        "been modified; please apply your changes to the latest version and try again");
}

// A cheap, deterministic fuzz: arbitrary bytes (and mutated Status bodies) never crash and
// always give an error code.
TEST_CASE("arbitrary bodies never crash") {
  std::mt19937 rng(12345);
  const std::string seed = StatusBody("Conflict", "m", 409);
  for (int i = 0; i < 2000; ++i) {
    std::string body = seed;
    if (i % 2 == 0) {
      body.resize(rng() % 64);
      for (char& c : body) c = static_cast<char>(rng());
    } else {
      for (int k = 0; k < 4; ++k) body[rng() % body.size()] = static_cast<char>(rng());
    }
    const long http = 400 + static_cast<long>(rng() % 200);
    const Status s = StatusFromResponse(http, body, std::string(1, static_cast<char>(rng())));
    CHECK_FALSE(s.ok());
  }
}

// Found with fuzz/status_watch_fuzzer: the body was parsed recursively, so a body of nested
// brackets (an error body may be up to 16 MiB) overflowed the stack.
TEST_CASE("deeply nested bodies do not exhaust the stack") {
  const std::string arrays(1 << 20, '[');
  const Status a = StatusFromResponse(502, arrays);
  CHECK(a.code() == Code::kUnavailable);
  CHECK(a.message().rfind("HTTP 502: [[[[", 0) == 0);

  std::string nested = R"({"kind":"Status","message":"deep","reason":"Conflict","details":)";
  for (int i = 0; i < 1000000; ++i) nested += R"({"a":)";
  nested += "1";
  for (int i = 0; i < 1000000; ++i) nested += "}";
  nested += "}";
  const Status b = StatusFromResponse(409, nested);
  CHECK(b.code() == Code::kConflict);
  CHECK(b.message() == "deep");
}

TEST_CASE("RbacNeed names the verb and resource a refused request needed") {
  const ObjectRef lease{"coordination.k8s.io", "v1", "leases", "ns", "lock"};
  const ObjectRef configmap{"", "v1", "configmaps", "ns", "lock"};
  const ObjectRef pod{"", "v1", "pods", "web", "pod-a"};
  const ObjectRef events{"", "v1", "events", "team", ""};
  const ObjectRef configmaps{"", "v1", "configmaps", "ns", ""};
  struct Case {
    const char* name;
    Request request;
    bool watch;
    const char* want;
  };
  const Case cases[] = {
      {"get a lease", ObjectRequest("GET", lease), false, R"(verb "get" on leases "lock")"},
      {"update a configmap", ObjectRequest("PUT", configmap, "{}"), false,
       R"(verb "update" on configmaps "lock")"},
      {"create names no object", ObjectRequest("POST", lease, "{}"), false,
       R"(verb "create" on leases)"},
      {"patch a pod", ObjectRequest("PATCH", pod, "{}"), false, R"(verb "patch" on pods "pod-a")"},
      {"post an event", ObjectRequest("POST", events, "{}"), false, R"(verb "create" on events)"},
      {"delete a lease", ObjectRequest("DELETE", lease), false,
       R"(verb "delete" on leases "lock")"},
      {"a watch selects by field", WatchRequest(lease, "", std::chrono::seconds(5)), true,
       R"(verb "watch" on leases)"},
      {"a GET of a collection is a list", ObjectRequest("GET", configmaps), false,
       R"(verb "list" on configmaps)"},
      {"a request about no object (discovery)",
       Request{"GET", "/apis/coordination.k8s.io/v1", "", "application/json", std::nullopt}, false,
       ""},
      {"an unknown method", ObjectRequest("OPTIONS", configmap), false, ""},
  };
  for (const Case& c : cases) {
    SUBCASE(c.name) { CHECK(RbacNeed(c.request, c.watch) == c.want); }
  }
}

}  // namespace
}  // namespace leasehold::kube
