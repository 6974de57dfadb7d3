#include "kube/watch.h"

#include <doctest/doctest.h>

namespace leasehold::kube {
namespace {

TEST_CASE("WatchRequest") {
  const ObjectRef lease{"coordination.k8s.io", "v1", "leases", "ns", "my-lock"};
  const Request r = WatchRequest(lease, "123", std::chrono::seconds(290));
  CHECK(r.method == "GET");
  CHECK(r.path ==
        "/apis/coordination.k8s.io/v1/namespaces/ns/leases?watch=1&fieldSelector=metadata.name%"
        "3Dmy-lock&resourceVersion=123&timeoutSeconds=290&allowWatchBookmarks=true");
  REQUIRE(r.object.has_value());
  CHECK(*r.object == lease);
  const ObjectRef cm{"", "v1", "configmaps", "ns", "a.b"};
  CHECK(WatchRequest(cm, "", std::chrono::seconds(5)).path ==
        "/api/v1/namespaces/ns/configmaps?watch=1&fieldSelector=metadata.name%3Da.b&"
        "timeoutSeconds=5&allowWatchBookmarks=true");
}

TEST_CASE("PercentEncode") {
  CHECK(PercentEncode("aZ09-._~") == "aZ09-._~");
  CHECK(PercentEncode("a=b&c d/\xc3\xa9") == "a%3Db%26c%20d%2F%C3%A9");
}

TEST_CASE("ObjectRef paths") {
  struct Case {
    const char* name;
    ObjectRef ref;
    const char* collection;
    const char* path;
  };
  const Case cases[] = {
      {"a Lease",
       {"coordination.k8s.io", "v1", "leases", "ns", "l"},
       "/apis/coordination.k8s.io/v1/namespaces/ns/leases",
       "/apis/coordination.k8s.io/v1/namespaces/ns/leases/l"},
      {"a core object",
       {"", "v1", "pods", "web", "pod-a"},
       "/api/v1/namespaces/web/pods",
       "/api/v1/namespaces/web/pods/pod-a"},
      {"no name: the collection",
       {"", "v1", "events", "team", ""},
       "/api/v1/namespaces/team/events",
       "/api/v1/namespaces/team/events"},
      {"every segment encoded",
       {"", "v1", "configmaps", "a/b", "../x"},
       "/api/v1/namespaces/a%2Fb/configmaps",
       "/api/v1/namespaces/a%2Fb/configmaps/..%2Fx"},
  };
  for (const Case& c : cases) {
    SUBCASE(c.name) {
      CHECK(c.ref.CollectionPath() == c.collection);
      CHECK(c.ref.Path() == c.path);
      CHECK(ObjectRequest("POST", c.ref, "{}").path == c.collection);
      CHECK(ObjectRequest("PUT", c.ref, "{}").path == c.path);
    }
  }
}

TEST_CASE("ParseWatchEvent") {
  struct Case {
    const char* name;
    std::string line;
    Code code;
    std::string type, object, rv;
  };
  const Case cases[] = {
      {"added", R"({"type":"ADDED","object":{"kind":"Lease","metadata":{"resourceVersion":"7"}}})",
       Code::kOk, "ADDED", R"({"kind":"Lease","metadata":{"resourceVersion":"7"}})", "7"},
      {"modified, spaces", R"( { "type" : "MODIFIED" , "object" : { "a" : 1 } } )", Code::kOk,
       "MODIFIED", R"({"a":1})", ""},
      {"bookmark",
       R"({"type":"BOOKMARK","object":{"kind":"Lease","metadata":{"resourceVersion":"99"}}})",
       Code::kOk, "BOOKMARK", R"({"kind":"Lease","metadata":{"resourceVersion":"99"}})", "99"},
      {"error 410",
       R"j({"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"too old resource version: 1 (5)","reason":"Expired","code":410}})j",
       Code::kGone, "", "", ""},
      {"error without reason", R"({"type":"ERROR","object":{"kind":"Status","code":500}})",
       Code::kUnavailable, "", "", ""},
      {"not JSON", "hello", Code::kMalformed, "", "", ""},
      {"no object", R"({"type":"ADDED"})", Code::kMalformed, "", "", ""},
      {"object not an object", R"({"type":"ADDED","object":"x"})", Code::kMalformed, "", "", ""},
      {"type not a string", R"({"type":1,"object":{}})", Code::kMalformed, "", "", ""},
  };
  for (const Case& c : cases) {
    INFO(std::string(c.name));
    const Result<WatchEvent> got = ParseWatchEvent(c.line);
    CHECK(got.code() == c.code);
    if (got.ok()) {
      CHECK(got->type == c.type);
      CHECK(got->object == c.object);
      CHECK(got->resource_version == c.rv);
    }
  }
  const Result<WatchEvent> gone = ParseWatchEvent(cases[3].line);
  CHECK(gone.status().message() == "too old resource version: 1 (5)");
}

}  // namespace
}  // namespace leasehold::kube

namespace leasehold::kube {
namespace {

TEST_CASE("ParseWatchEvent rejects what it cannot safely re-serialise") {
  struct Case {
    const char* name;
    std::string line;
  };
  const std::string deep = R"({"type":"ADDED","object":{"a":)" + std::string(100000, '[') +
                           std::string(100000, ']') + "}}";
  const Case cases[] = {
      {"nested a hundred thousand deep", deep},
      {"a number too large for a double", R"({"type":"ADDED","object":{"a":1,"b":185e308}})"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    CHECK(ParseWatchEvent(c.line).code() == Code::kMalformed);
  }
  // A string full of brackets is not nesting.
  auto ok = ParseWatchEvent(R"({"type":"ADDED","object":{"a":"[[[[{{{{"}})");
  REQUIRE(ok.ok());
  CHECK(ok->object == R"({"a":"[[[[{{{{"})");
}

}  // namespace
}  // namespace leasehold::kube
