// The curl ApiClient against the fake apiserver: real HTTPS on 127.0.0.1.
#include <doctest/doctest.h>

#include <chrono>
#include <mutex>
#include <vector>

#include "base/file.h"
#include "base/version.h"
#include "fakes/fake_clock.h"
#include "fakes/temp_dir.h"
#include "kube/component_util.h"
#include "kube/status_error.h"
#include "kube/token_source.h"

namespace leasehold::kube {
namespace {

using leasehold::testing::DownMode;
using leasehold::testing::FakeApiServer;
using leasehold::testing::Fault;
using leasehold::testing::Hang;
using leasehold::testing::kFakeToken;
using leasehold::testing::TempDir;
using leasehold::testing::TestCert;
using std::chrono::milliseconds;
using std::chrono::seconds;

MonoTime In(const Clock& clock, Duration d) { return clock.MonotonicNow() + d; }

Request Get(const std::string& path) { return Request{"GET", path, "", "application/json"}; }
Request Post(const std::string& path, const std::string& body) {
  return Request{"POST", path, body, "application/json"};
}
Request Put(const std::string& path, const std::string& body) {
  return Request{"PUT", path, body, "application/json"};
}

TEST_CASE("create, read and update a Lease, with the apiserver's concurrency answers") {
  FakeApiServer server;
  RealClock clock;
  auto client = MustClient(server.ClientConfig(), clock);

  const Result<Response> created =
      client->Do(Post(kLeases, LeaseJson("lock", "a")), In(clock, seconds(5)));
  REQUIRE_MESSAGE(created.ok(), created.status().ToString());
  CHECK(created->http_status == 201);
  const std::string rv1 = MetaField(created->body, "resourceVersion");
  CHECK_FALSE(rv1.empty());
  CHECK_FALSE(MetaField(created->body, "uid").empty());
  CHECK_FALSE(MetaField(created->body, "creationTimestamp").empty());

  const Result<Response> got = client->Do(Get(LeasePath("lock")), In(clock, seconds(5)));
  REQUIRE(got.ok());
  CHECK(got->http_status == 200);
  CHECK(got->body == created->body);

  const Result<Response> updated =
      client->Do(Put(LeasePath("lock"), LeaseJson("lock", "b", rv1)), In(clock, seconds(5)));
  REQUIRE_MESSAGE(updated.ok(), updated.status().ToString());
  CHECK(updated->http_status == 200);
  const std::string rv2 = MetaField(updated->body, "resourceVersion");
  CHECK(rv2 != rv1);
  CHECK(MetaField(updated->body, "uid") == MetaField(created->body, "uid"));
  CHECK(server.ResourceVersion("leases", "ns", "lock") == rv2);

  struct Case {
    const char* name;
    Request request;
    Code code;
    std::string message;
  };
  const Case cases[] = {
      {"stale resourceVersion", Put(LeasePath("lock"), LeaseJson("lock", "c", rv1)),
       Code::kConflict,
       "Operation cannot be fulfilled on leases.coordination.k8s.io \"lock\": the object has "
       "been modified; please apply your changes to the latest version and try again"},
      {"no resourceVersion", Put(LeasePath("lock"), LeaseJson("lock", "c")), Code::kInvalid,
       "Lease.coordination.k8s.io \"lock\" is invalid: metadata.resourceVersion: Invalid value: "
       "0x0: must be specified for an update"},
      {"create again", Post(kLeases, LeaseJson("lock", "c")), Code::kAlreadyExists,
       "leases.coordination.k8s.io \"lock\" already exists"},
      {"get missing", Get(LeasePath("nope")), Code::kNotFound,
       "leases.coordination.k8s.io \"nope\" not found"},
      {"name mismatch", Put(LeasePath("lock"), LeaseJson("other", "c", rv2)), Code::kBadRequest,
       "the name of the object (other) does not match the name on the URL (lock)"},
  };
  for (const Case& c : cases) {
    INFO(std::string(c.name));
    const Result<Response> r = client->Do(c.request, In(clock, seconds(5)));
    CHECK(r.code() == c.code);
    CHECK(r.status().message() == c.message);
  }
  CHECK(server.ResourceVersion("leases", "ns", "lock") == rv2);  // none of them wrote

  const std::vector<testing::RecordedRequest> log = server.Requests();
  REQUIRE(log.size() == 8);
  for (const auto& r : log) {
    CHECK(r.token == kFakeToken);
    CHECK(r.user_agent == std::string("leasehold/") + kVersion);
  }
  CHECK(log[0].method == "POST");
  CHECK(log[0].content_type == "application/json");
  CHECK(log[0].status == 201);
  CHECK(log[1].content_type.empty());  // GET sends no body
}

TEST_CASE("the fake validates Lease fields as the apiserver does") {
  FakeApiServer server;
  RealClock clock;
  auto client = MustClient(server.ClientConfig(), clock);
  const auto lease = [](const std::string& spec) {
    return R"({"metadata":{"name":"x"},"spec":{)" + spec + "}}";
  };
  struct Case {
    const char* name;
    std::string spec;
    Code code;
    std::string message;  // checked when non-empty
  };
  const Case cases[] = {
      {"microseconds and Z", R"("renewTime":"2026-01-02T03:04:05.123456Z")", Code::kOk, ""},
      {"microseconds and offset", R"("acquireTime":"2026-01-02T03:04:05.123456+02:00")", Code::kOk,
       ""},
      {"null times", R"("acquireTime":null,"renewTime":null)", Code::kOk, ""},
      {"whole seconds", R"("renewTime":"2026-01-02T03:04:05Z")", Code::kBadRequest, ""},
      {"milliseconds", R"("renewTime":"2026-01-02T03:04:05.123Z")", Code::kBadRequest, ""},
      {"nanoseconds", R"("acquireTime":"2026-01-02T03:04:05.123456789Z")", Code::kBadRequest, ""},
      {"time not a string", R"("renewTime":5)", Code::kBadRequest, ""},
      {"zero duration", R"("leaseDurationSeconds":0)", Code::kInvalid,
       "Lease.coordination.k8s.io \"x\" is invalid: spec.leaseDurationSeconds: Invalid value: 0: "
       "must be greater than 0"},
      {"negative transitions", R"("leaseTransitions":-1)", Code::kInvalid, ""},
      {"duration not an integer", R"("leaseDurationSeconds":1.5)", Code::kBadRequest, ""},
      {"preferredHolder needs strategy", R"("preferredHolder":"b")", Code::kInvalid, ""},
  };
  for (const Case& c : cases) {
    INFO(std::string(c.name));
    server.Delete("leases", "ns", "x");
    const Result<Response> r = client->Do(Post(kLeases, lease(c.spec)), In(clock, seconds(5)));
    CHECK(r.code() == c.code);
    if (!c.message.empty()) CHECK(r.status().message() == c.message);
  }
}

TEST_CASE("PATCH with a merge patch changes pod labels") {
  FakeApiServer server;
  RealClock clock;
  auto client = MustClient(server.ClientConfig(), clock);
  server.Put("pods", "ns", "p", R"({"metadata":{"labels":{"a":"1","b":"2"}},"spec":{}})");
  const std::string rv = server.ResourceVersion("pods", "ns", "p");

  Request patch{"PATCH", "/api/v1/namespaces/ns/pods/p",
                R"({"metadata":{"labels":{"b":null,"c":"3"}}})", "application/merge-patch+json"};
  const Result<Response> r = client->Do(patch, In(clock, seconds(5)));
  REQUIRE_MESSAGE(r.ok(), r.status().ToString());
  rapidjson::Document doc;
  doc.Parse(r->body.c_str());
  const auto& labels = doc["metadata"]["labels"];
  CHECK(labels.MemberCount() == 2);
  CHECK(std::string(labels["a"].GetString()) == "1");
  CHECK(std::string(labels["c"].GetString()) == "3");
  CHECK(server.ResourceVersion("pods", "ns", "p") != rv);
  CHECK(server.Requests().back().content_type == "application/merge-patch+json");

  SUBCASE("a missing pod is NotFound") {
    patch.path = "/api/v1/namespaces/ns/pods/q";
    const Result<Response> missing = client->Do(patch, In(clock, seconds(5)));
    CHECK(missing.code() == Code::kNotFound);
    CHECK(missing.status().message() == "pods \"q\" not found");
  }
}

TEST_CASE("server failures map to codes") {
  struct Case {
    const char* name;
    Fault fault;
    Code code;
    std::optional<int> retry_after;
    std::string message;  // checked when non-empty
  };
  const auto fault = [](int code, std::optional<int> retry_after = std::nullopt,
                        std::optional<std::string> raw = std::nullopt) {
    Fault f;
    f.http_status = code;
    f.retry_after_seconds = retry_after;
    f.raw_body = std::move(raw);
    return f;
  };
  const Case cases[] = {
      {"500 InternalError", fault(500), Code::kUnavailable, std::nullopt,
       "Internal error occurred: injected fault"},
      {"503 with Retry-After", fault(503, 7), Code::kUnavailable, 7,
       "the server is currently unable to handle the request"},
      {"429 with Retry-After", fault(429, 2), Code::kTooManyRequests, 2,
       "Too many requests, please try again later."},
      {"504 Timeout", fault(504), Code::kDeadlineExceeded, std::nullopt, ""},
      {"502 from a proxy", fault(502, std::nullopt, "bad gateway\n"), Code::kUnavailable,
       std::nullopt, "HTTP 502: bad gateway"},
      {"409 retry-after ignored", fault(409, 3), Code::kConflict, std::nullopt, ""},
  };
  for (const Case& c : cases) {
    INFO(std::string(c.name));
    FakeApiServer server;
    RealClock clock;
    auto client = MustClient(server.ClientConfig(), clock);
    server.InjectFault(c.fault);
    const Result<Response> r = client->Do(Get(kLeases), In(clock, seconds(5)));
    CHECK(r.code() == c.code);
    CHECK(r.status().retry_after() ==
          (c.retry_after ? std::optional<seconds>(seconds(*c.retry_after)) : std::nullopt));
    if (!c.message.empty()) CHECK(r.status().message() == c.message);
    // The fault was used up.
    CHECK(client->Do(Get(kLeases), In(clock, seconds(5))).ok());
  }
}

TEST_CASE("a server that is down") {
  struct Case {
    const char* name;
    DownMode mode;
  };
  const Case cases[] = {{"answers 503", DownMode::kServiceUnavailable},
                        {"drops connections", DownMode::kDropConnections}};
  for (const Case& c : cases) {
    INFO(std::string(c.name));
    FakeApiServer server;
    RealClock clock;
    auto client = MustClient(server.ClientConfig(), clock);
    server.SetDown(c.mode);
    CHECK(client->Do(Get(kLeases), In(clock, seconds(5))).code() == Code::kUnavailable);
    server.SetDown(DownMode::kUp);
    const Result<Response> after = client->Do(Get(kLeases), In(clock, seconds(5)));
    CHECK_MESSAGE(after.ok(), after.status().ToString());
  }
}

TEST_CASE("a refused connection is Unavailable") {
  std::string url;
  {
    FakeApiServer gone;
    url = gone.url();
  }
  RealClock clock;
  ClusterConfig config;
  config.server = url;
  config.ca_file = TestCert("ca.crt");
  auto client = MustClient(config, clock);
  const Result<Response> r = client->Do(Get(kLeases), In(clock, seconds(5)));
  CHECK(r.code() == Code::kUnavailable);
  CHECK(r.status().message().find("GET " + std::string(kLeases) + ": ") == 0);
}

// The one place a real clock is unavoidable: curl's own timeout ends the hung call.
TEST_CASE("a hung request returns DeadlineExceeded by the deadline") {
  struct Case {
    const char* name;
    Duration request_timeout;
    Duration deadline;
  };
  const Case cases[] = {
      {"the request timeout comes first", milliseconds(300), seconds(30)},
      {"the caller's deadline comes first", seconds(30), milliseconds(300)},
  };
  for (const Case& c : cases) {
    INFO(std::string(c.name));
    FakeApiServer server;
    RealClock clock;
    ClientOptions options;
    options.request_timeout = c.request_timeout;
    auto client = MustClient(server.ClientConfig(), clock, options);
    Hang hang;
    hang.method = "GET";
    server.InjectHang(hang);

    const auto start = std::chrono::steady_clock::now();
    const Result<Response> r = client->Do(Get(LeasePath("x")), In(clock, c.deadline));
    const auto elapsed = std::chrono::steady_clock::now() - start;
    CHECK(r.code() == Code::kDeadlineExceeded);
    CHECK(elapsed >= milliseconds(290));
    CHECK(elapsed < seconds(3));
    CHECK(server.held() == 1);  // it really was the server that hung
    server.ReleaseHangs();
    // The next request goes through (on a new connection: the timed-out one is gone).
    const Result<Response> after = client->Do(Get(LeasePath("x")), In(clock, seconds(5)));
    CHECK_MESSAGE(after.code() == Code::kNotFound, after.status().ToString());
  }
}

TEST_CASE("a deadline that has passed sends nothing") {
  FakeApiServer server;
  FakeClock clock;
  auto client = MustClient(server.ClientConfig(), clock);
  for (Duration before : {Duration::zero(), Duration(milliseconds(1)), Duration(seconds(10))}) {
    const Result<Response> r = client->Do(Get(kLeases), clock.MonotonicNow() - before);
    CHECK(r.code() == Code::kDeadlineExceeded);
  }
  CHECK(server.Requests().empty());
}

TEST_CASE("the token file is re-read after a 401 and after 50 s") {
  FakeApiServer server;
  TempDir dir;
  FakeClock clock;  // nothing but the 401 can make the client re-read early
  ClusterConfig config = server.ClientConfig("");
  config.token_file = dir.Write("token", "old\n");
  auto client = MustClient(config, clock);
  const Request discovery = Get("/apis/coordination.k8s.io/v1");

  SUBCASE("401, then the file changes") {
    server.SetTokens({{"new", "system:serviceaccount:ns:sa"}});
    const Result<Response> first = client->Do(discovery, In(clock, seconds(5)));
    CHECK(first.code() == Code::kUnauthorized);
    CHECK(first.status().message() == std::string(kUnauthorizedPrefix) + "Unauthorized");
    dir.Write("token", "new\n");
    const Result<Response> second = client->Do(discovery, In(clock, seconds(5)));
    CHECK_MESSAGE(second.ok(), second.status().ToString());
    const auto log = server.Requests();
    REQUIRE(log.size() == 2);
    CHECK(log[0].token == "old");
    CHECK(log[1].token == "new");
  }
  SUBCASE("rotation without a 401 is picked up after 50 s") {
    server.SetTokens({{"old", "u"}, {"new", "u"}});
    dir.Write("token", "new");
    CHECK(client->Do(discovery, In(clock, seconds(5))).ok());
    clock.Advance(seconds(49));
    CHECK(client->Do(discovery, In(clock, seconds(5))).ok());
    clock.Advance(seconds(1));
    CHECK(client->Do(discovery, In(clock, seconds(5))).ok());
    const auto log = server.Requests();
    REQUIRE(log.size() == 3);
    CHECK(log[0].token == "old");
    CHECK(log[1].token == "old");
    CHECK(log[2].token == "new");
  }
}

TEST_CASE("403 keeps the server's RBAC message, after the permission the request's object needed") {
  FakeApiServer server;
  RealClock clock;
  auto client = MustClient(server.ClientConfig(), clock);
  server.Put("leases", "ns", "lock", LeaseJson("lock", "a"));
  server.Deny("update", "leases");
  server.Deny("create", "leases");
  const std::string rv = server.ResourceVersion("leases", "ns", "lock");

  const Result<Response> put = client->Do(
      ObjectRequest("PUT", LeaseRef("lock"), LeaseJson("lock", "b", rv)), In(clock, seconds(5)));
  CHECK(put.code() == Code::kForbidden);
  CHECK(put.status().message() ==
        "needs verb \"update\" on leases \"lock\": "
        "leases.coordination.k8s.io \"lock\" is forbidden: User "
        "\"system:serviceaccount:ns:sa\" cannot update resource \"leases\" in API group "
        "\"coordination.k8s.io\" in the namespace \"ns\"");
  const Result<Response> post =
      client->Do(ObjectRequest("POST", LeaseRef("y"), LeaseJson("y", "b")), In(clock, seconds(5)));
  CHECK(post.code() == Code::kForbidden);
  CHECK(post.status().message() ==
        "needs verb \"create\" on leases: "
        "leases.coordination.k8s.io is forbidden: User \"system:serviceaccount:ns:sa\" cannot "
        "create resource \"leases\" in API group \"coordination.k8s.io\" in the namespace \"ns\"");
  // A request about no object names no permission: the server's words only.
  const Result<Response> raw =
      client->Do(Put(LeasePath("lock"), LeaseJson("lock", "b", rv)), In(clock, seconds(5)));
  CHECK(raw.code() == Code::kForbidden);
  CHECK(raw.status().message().rfind("leases.coordination.k8s.io \"lock\" is forbidden", 0) == 0);
  CHECK(client->Do(Get(LeasePath("lock")), In(clock, seconds(5))).ok());  // get is allowed
}

// The issue's attack: a token file rotated to "TOKEN\r\nX-Injected: yes". The bad contents are
// never sent (no header, no token); the old token is used while the server takes it, and once it
// is refused the 401 says what is wrong with the file: that is the "not ready" reason.
TEST_CASE("a token file rotated to an invalid token: never sent, and the 401 says why") {
  FakeApiServer server;
  TempDir dir;
  FakeClock clock;
  ClusterConfig config = server.ClientConfig("");
  config.token_file = dir.Write("token", "old\n");
  server.SetTokens({{"old", "u"}});
  auto client = MustClient(config, clock);
  const Request discovery = Get("/apis/coordination.k8s.io/v1");
  CHECK(client->Do(discovery, In(clock, seconds(5))).ok());

  dir.Write("token", "TOKEN\r\nX-Injected: yes\n");
  clock.Advance(seconds(50));  // due for a re-read
  const Result<Response> still_old = client->Do(discovery, In(clock, seconds(5)));
  CHECK_MESSAGE(still_old.ok(), still_old.status().ToString());

  server.SetTokens({});  // the old token expires
  const Result<Response> refused = client->Do(discovery, In(clock, seconds(5)));
  CHECK(refused.code() == Code::kUnauthorized);
  CHECK(refused.status().message() ==
        std::string(kUnauthorizedPrefix) + "Unauthorized; and no fresh token to try: token file " +
            config.token_file +
            ": contains a control character, whitespace or non-ASCII byte at byte 5 (a bearer "
            "token is visible ASCII only)");
  // The next attempt re-reads (after the 401), finds the file still bad, and again sends only
  // the old token.
  CHECK(client->Do(discovery, In(clock, seconds(5))).code() == Code::kUnauthorized);

  const auto log = server.Requests();
  REQUIRE(log.size() == 4);
  for (const auto& r : log) CHECK(r.token == "old");  // never "TOKEN" plus a header of its own
}

TEST_CASE("a static token that is not a valid header value is refused before any request") {
  FakeApiServer server;
  RealClock clock;
  for (const std::string& token :
       {std::string("TOKEN\r\nX-Injected: yes"), std::string("a b"), std::string("a\0b", 3)}) {
    INFO(token);
    ClusterConfig config = server.ClientConfig(token);
    auto client = NewCurlApiClient(config, {}, clock);
    CHECK(client.code() == Code::kBadConfig);
    CHECK(client.status().message().rfind("token: contains a control character", 0) == 0);
  }
  CHECK(server.Requests().empty());
}

std::string ReadFile(const std::string& path) {
  auto r = ReadRegularFile(path, kMaxCaFileBytes);
  REQUIRE(r.ok());
  return r.value();
}

TEST_CASE("TLS is verified against the configured CA; client certificates authenticate") {
  FakeApiServer server;
  RealClock clock;
  struct Case {
    const char* name;
    std::function<void(ClusterConfig&)> edit;
    Code code;
    std::string user;  // the client certificate CN the server saw, when expected
  };
  const Case cases[] = {
      {"CA file", [](ClusterConfig&) {}, Code::kOk, ""},
      {"CA data",
       [](ClusterConfig& c) {
         c.ca_data = ReadFile(c.ca_file);
         c.ca_file.clear();
       },
       Code::kOk, ""},
      {"a CA that did not sign the server",
       [](ClusterConfig& c) { c.ca_file = TestCert("other-ca.crt"); }, Code::kUnavailable, ""},
      {"insecure-skip-tls-verify",
       [](ClusterConfig& c) {
         c.ca_file.clear();
         c.insecure_skip_tls_verify = true;
       },
       Code::kOk, ""},
      {"client certificate files, no token",
       [](ClusterConfig& c) {
         c.token.clear();
         c.client_cert_file = TestCert("client.crt");
         c.client_key_file = TestCert("client.key");
       },
       Code::kOk, "leasehold-test-client"},
      {"client certificate data, no token",
       [](ClusterConfig& c) {
         c.token.clear();
         c.client_cert_data = ReadFile(TestCert("client.crt"));
         c.client_key_data = ReadFile(TestCert("client.key"));
       },
       Code::kOk, "leasehold-test-client"},
      {"client certificate from an unknown CA",
       [](ClusterConfig& c) {
         c.token.clear();
         c.client_cert_file = TestCert("other-client.crt");
         c.client_key_file = TestCert("other-client.key");
       },
       Code::kUnavailable, ""},
      {"no credentials", [](ClusterConfig& c) { c.token.clear(); }, Code::kUnauthorized, ""},
      {"wrong token", [](ClusterConfig& c) { c.token = "nope"; }, Code::kUnauthorized, ""},
      {"localhost matches the certificate",
       [](ClusterConfig& c) { c.server.replace(c.server.find("127.0.0.1"), 9, "localhost"); },
       Code::kOk, ""},
  };
  for (const Case& c : cases) {
    INFO(std::string(c.name));
    ClusterConfig config = server.ClientConfig();
    c.edit(config);
    server.ClearRequests();
    auto client = MustClient(config, clock);
    const Result<Response> r =
        client->Do(Get("/apis/coordination.k8s.io/v1"), In(clock, seconds(5)));
    CHECK_MESSAGE(r.code() == c.code, r.status().ToString());
    if (!c.user.empty()) {
      REQUIRE(server.Requests().size() == 1);
      CHECK(server.Requests()[0].client_cert_cn == c.user);
    }
  }
}

TEST_CASE("requests reuse one kept-alive connection") {
  FakeApiServer server;
  RealClock clock;
  auto client = MustClient(server.ClientConfig(), clock);
  server.Put("leases", "ns", "lock", LeaseJson("lock", "a"));
  for (int i = 0; i < 6; ++i) {
    CHECK(client->Do(Get(LeasePath("lock")), In(clock, seconds(5))).ok());
    // Error answers keep the connection too.
    CHECK(client->Do(Get(LeasePath("missing")), In(clock, seconds(5))).code() == Code::kNotFound);
  }
  CHECK(server.connections() == 1);
  const auto log = server.Requests();
  REQUIRE(log.size() == 12);
  for (const auto& r : log) CHECK(r.remote_port == log[0].remote_port);
}

TEST_CASE("the observer sees every request that was sent") {
  FakeApiServer server;
  RealClock clock;
  struct Seen {
    std::string verb;
    long status;
  };
  std::mutex mu;
  std::vector<Seen> seen;
  ClientOptions options;
  options.observer = [&](const std::string& verb, long status, Duration latency) {
    CHECK(latency >= Duration::zero());
    std::lock_guard<std::mutex> l(mu);
    seen.push_back({verb, status});
  };
  auto client = MustClient(server.ClientConfig(), clock, options);
  CHECK(client->Do(Post(kLeases, LeaseJson("lock", "a")), In(clock, seconds(5))).ok());
  CHECK(client->Do(Get(LeasePath("missing")), In(clock, seconds(5))).code() == Code::kNotFound);
  server.SetDown(DownMode::kDropConnections);
  CHECK(client->Do(Get(LeasePath("lock")), In(clock, seconds(5))).code() == Code::kUnavailable);
  server.SetDown(DownMode::kUp);
  // never sent, not observed
  CHECK(client->Do(Get(LeasePath("lock")), clock.MonotonicNow()).code() == Code::kDeadlineExceeded);

  std::lock_guard<std::mutex> l(mu);
  REQUIRE(seen.size() == 3);
  CHECK(seen[0].verb == "POST");
  CHECK(seen[0].status == 201);
  CHECK(seen[1].verb == "GET");
  CHECK(seen[1].status == 404);
  CHECK(seen[2].status == 0);  // transport error
}

TEST_CASE("discovery, the Lease API switch, unknown paths and events") {
  FakeApiServer server;
  RealClock clock;
  auto client = MustClient(server.ClientConfig(), clock);
  const Result<Response> discovery =
      client->Do(Get("/apis/coordination.k8s.io/v1"), In(clock, seconds(5)));
  REQUIRE(discovery.ok());
  CHECK(discovery->body.find(R"("groupVersion":"coordination.k8s.io/v1")") != std::string::npos);
  CHECK(discovery->body.find(R"("name":"leases")") != std::string::npos);

  server.SetLeaseApi(false);
  for (const std::string& path : {std::string("/apis/coordination.k8s.io/v1"), LeasePath("x")}) {
    CAPTURE(path);
    const Result<Response> r = client->Do(Get(path), In(clock, seconds(5)));
    CHECK(r.code() == Code::kNotFound);
    CHECK(r.status().message() == "the server could not find the requested resource");
  }
  CHECK(client->Do(Get("/apis/nothing.example/v1"), In(clock, seconds(5))).code() ==
        Code::kNotFound);

  const Result<Response> event = client->Do(
      Post(
          "/api/v1/namespaces/ns/events",
          R"({"metadata":{"generateName":"lock."},"reason":"LeaderElection","message":"a became leader"})"),
      In(clock, seconds(5)));
  REQUIRE_MESSAGE(event.ok(), event.status().ToString());
  CHECK(event->http_status == 201);
  const auto events = server.Events();
  REQUIRE(events.size() == 1);
  CHECK(MetaField(events[0], "name").rfind("lock.", 0) == 0);
}

TEST_CASE("configmap and endpoints locks: create, conflict, unconditional update") {
  FakeApiServer server;
  RealClock clock;
  auto client = MustClient(server.ClientConfig(), clock);
  for (const std::string resource : {"configmaps", "endpoints"}) {
    CAPTURE(resource);
    const std::string collection = "/api/v1/namespaces/ns/" + resource;
    const std::string body =
        R"({"metadata":{"name":"lock","annotations":{"control-plane.alpha.kubernetes.io/leader":"{}"}}})";
    const Result<Response> created = client->Do(Post(collection, body), In(clock, seconds(5)));
    REQUIRE(created.ok());
    const std::string rv = MetaField(created->body, "resourceVersion");
    server.Bump(resource, "ns", "lock");  // another writer
    const std::string stale = R"({"metadata":{"name":"lock","resourceVersion":")" + rv + R"("}})";
    const Result<Response> conflict =
        client->Do(Put(collection + "/lock", stale), In(clock, seconds(5)));
    CHECK(conflict.code() == Code::kConflict);
    CHECK(conflict.status().message() ==
          "Operation cannot be fulfilled on " + resource +
              " \"lock\": the object has been modified; please apply your changes to the latest "
              "version and try again");
    // Unlike leases, these allow an update without resourceVersion.
    CHECK(client
              ->Do(Put(collection + "/lock", R"({"metadata":{"name":"lock"}})"),
                   In(clock, seconds(5)))
              .ok());
  }
}

TEST_CASE("NewCurlApiClient rejects configs it cannot use") {
  RealClock clock;
  struct Case {
    const char* name;
    std::function<void(ClusterConfig&, ClientOptions&)> edit;
    Code code;
  };
  const Case cases[] = {
      {"no scheme", [](ClusterConfig& c, ClientOptions&) { c.server = "127.0.0.1:1"; },
       Code::kBadConfig},
      {"certificate without key",
       [](ClusterConfig& c, ClientOptions&) { c.client_cert_file = TestCert("client.crt"); },
       Code::kBadConfig},
      {"zero timeout",
       [](ClusterConfig&, ClientOptions& o) { o.request_timeout = Duration::zero(); },
       Code::kBadConfig},
      {"missing token file",
       [](ClusterConfig& c, ClientOptions&) {
         c.token.clear();
         c.token_file = "/nonexistent/token";
       },
       Code::kNotFound},
  };
  for (const Case& c : cases) {
    INFO(std::string(c.name));
    ClusterConfig config;
    config.server = "https://127.0.0.1:1";
    config.ca_file = TestCert("ca.crt");
    ClientOptions options;
    c.edit(config, options);
    CHECK(NewCurlApiClient(config, options, clock).code() == c.code);
  }
}

}  // namespace
}  // namespace leasehold::kube
