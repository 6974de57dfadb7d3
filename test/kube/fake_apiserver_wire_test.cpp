// The fake's answers byte for byte, read with plain libcurl (the ApiClient keeps only the
// message), against what a real kube-apiserver sends.
#include <curl/curl.h>
#include <doctest/doctest.h>

#include <string>

#include "kube/component_util.h"

namespace leasehold::kube {
namespace {

using leasehold::testing::FakeApiServer;
using leasehold::testing::kFakeToken;
using leasehold::testing::TestCert;

struct Raw {
  long status = 0;
  std::string body;
  std::string content_type;
};

Raw Send(const FakeApiServer& server, const std::string& method, const std::string& path,
         const std::string& body = "", const std::string& token = kFakeToken) {
  Raw raw;
  CURL* h = curl_easy_init();
  REQUIRE(h != nullptr);
  const std::string url = server.url() + path;
  curl_easy_setopt(h, CURLOPT_URL, url.c_str());
  curl_easy_setopt(h, CURLOPT_CAINFO, TestCert("ca.crt").c_str());
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, 5000L);
  curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method.c_str());
  if (!body.empty()) curl_easy_setopt(h, CURLOPT_POSTFIELDS, body.c_str());
  curl_slist* headers = nullptr;
  headers = curl_slist_append(headers, "Content-Type: application/json");
  if (!token.empty())
    headers = curl_slist_append(headers, ("Authorization: Bearer " + token).c_str());
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, &raw.body);
  curl_easy_setopt(
      h, CURLOPT_WRITEFUNCTION, +[](char* data, size_t size, size_t n, void* out) -> size_t {
        static_cast<std::string*>(out)->append(data, size * n);
        return size * n;
      });
  const CURLcode rc = curl_easy_perform(h);
  CHECK_MESSAGE(rc == CURLE_OK, curl_easy_strerror(rc));
  curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &raw.status);
  char* type = nullptr;
  curl_easy_getinfo(h, CURLINFO_CONTENT_TYPE, &type);
  if (type != nullptr) raw.content_type = type;
  curl_slist_free_all(headers);
  curl_easy_cleanup(h);
  return raw;
}

TEST_CASE("the fake sends the apiserver's Status bodies") {
  FakeApiServer server;
  server.Put("leases", "ns", "lock", LeaseJson("lock", "a"));
  const std::string rv = server.ResourceVersion("leases", "ns", "lock");
  server.Bump("leases", "ns", "lock");
  server.Deny("delete", "leases");

  struct Case {
    const char* name;
    std::string method, path, body, token;
    long status;
    std::string want;
  };
  const Case cases[] = {
      {"409 Conflict", "PUT", LeasePath("lock"), LeaseJson("lock", "b", rv), kFakeToken, 409,
       R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Operation cannot be fulfilled on leases.coordination.k8s.io \"lock\": the object has been modified; please apply your changes to the latest version and try again","reason":"Conflict","details":{"name":"lock","group":"coordination.k8s.io","kind":"leases"},"code":409})"},
      {"404 NotFound", "GET", LeasePath("x"), "", kFakeToken, 404,
       R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"leases.coordination.k8s.io \"x\" not found","reason":"NotFound","details":{"name":"x","group":"coordination.k8s.io","kind":"leases"},"code":404})"},
      {"409 AlreadyExists", "POST", kLeases, LeaseJson("lock", "b"), kFakeToken, 409,
       R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"leases.coordination.k8s.io \"lock\" already exists","reason":"AlreadyExists","details":{"name":"lock","group":"coordination.k8s.io","kind":"leases"},"code":409})"},
      {"401 Unauthorized", "GET", LeasePath("lock"), "", "", 401,
       R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Unauthorized","reason":"Unauthorized","code":401})"},
      {"403 Forbidden", "DELETE", LeasePath("lock"), "", kFakeToken, 403,
       R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"leases.coordination.k8s.io \"lock\" is forbidden: User \"system:serviceaccount:ns:sa\" cannot delete resource \"leases\" in API group \"coordination.k8s.io\" in the namespace \"ns\"","reason":"Forbidden","details":{"name":"lock","group":"coordination.k8s.io","kind":"leases"},"code":403})"},
      {"core group: no group in details", "GET", "/api/v1/namespaces/ns/configmaps/x", "",
       kFakeToken, 404,
       R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"configmaps \"x\" not found","reason":"NotFound","details":{"name":"x","kind":"configmaps"},"code":404})"},
      {"unknown path", "GET", "/apis/example.com/v1", "", kFakeToken, 404,
       R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"the server could not find the requested resource","reason":"NotFound","details":{},"code":404})"},
  };
  for (const Case& c : cases) {
    INFO(std::string(c.name));
    const Raw raw = Send(server, c.method, c.path, c.body, c.token);
    CHECK(raw.status == c.status);
    CHECK(raw.body == c.want);
    CHECK(raw.content_type == "application/json");
  }
}

TEST_CASE("the fake's discovery document lists leases") {
  FakeApiServer server;
  const Raw raw = Send(server, "GET", "/apis/coordination.k8s.io/v1");
  CHECK(raw.status == 200);
  CHECK(
      raw.body.rfind(
          R"({"kind":"APIResourceList","apiVersion":"v1","groupVersion":"coordination.k8s.io/v1","resources":[{"name":"leases","singularName":"lease","namespaced":true,"kind":"Lease","verbs":["create","delete","deletecollection","get","list","patch","update","watch"])",
          0) == 0);
}

TEST_CASE("a PUT of a missing Lease creates it; with a uid it conflicts") {
  FakeApiServer server;
  Raw raw = Send(server, "PUT", LeasePath("new"), LeaseJson("new", "a"));
  CHECK(raw.status == 201);
  CHECK(server.Get("leases", "ns", "new").has_value());
  raw = Send(server, "PUT", LeasePath("other"),
             R"({"metadata":{"name":"other","uid":"1234"},"spec":{}})");
  CHECK(raw.status == 409);
  CHECK_FALSE(server.Get("leases", "ns", "other").has_value());
}

TEST_CASE("an update that changes nothing keeps the resourceVersion") {
  FakeApiServer server;
  const std::string stored = server.Put("leases", "ns", "lock", LeaseJson("lock", "a"));
  const std::string rv = server.ResourceVersion("leases", "ns", "lock");
  const Raw raw = Send(server, "PUT", LeasePath("lock"), stored);
  CHECK(raw.status == 200);
  CHECK(server.ResourceVersion("leases", "ns", "lock") == rv);
  CHECK(MetaField(raw.body, "resourceVersion") == rv);
}

}  // namespace
}  // namespace leasehold::kube
