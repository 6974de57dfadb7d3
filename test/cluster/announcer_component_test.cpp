// The announcer over TLS against the fake API server: Events stored as the apiserver stores them,
// the pod label merged into the pod, and RBAC denials.
#include <doctest/doctest.h>
#include <rapidjson/document.h>

#include <memory>
#include <string>

#include "cluster/announcer.h"
#include "fakes/fake_apiserver.h"
#include "kube/cluster_config.h"

namespace leasehold::cluster {
namespace {

using namespace std::chrono_literals;

constexpr const char* kId = "pod-a_0badcafe";

election::Publication Pub(bool leader) {
  election::Publication p;
  p.snapshot.identity = kId;
  p.snapshot.lock = {election::LockType::kLeases, "team", "my-lock"};
  p.snapshot.observed = true;
  p.snapshot.is_leader = leader;
  return p;
}

rapidjson::Document ParseJson(const std::string& json) {
  rapidjson::Document d;
  d.Parse(json.c_str());
  REQUIRE_FALSE(d.HasParseError());
  return d;
}

std::string LabelOf(const std::string& pod_json, const char* key) {
  rapidjson::Document d = ParseJson(pod_json);
  const auto& meta = d["metadata"];
  if (!meta.HasMember("labels") || !meta["labels"].HasMember(key)) return "<none>";
  return meta["labels"][key].GetString();
}

struct Fixture {
  explicit Fixture(KubeAnnouncerOptions o) {
    auto c = kube::NewCurlApiClient(server.ClientConfig(), {}, clock);
    REQUIRE(c.ok());
    client = std::move(c).value();
    announcer = std::make_unique<KubeAnnouncer>(*client, clock, o);
    server.Put("pods", "web", "pod-a",
               R"({"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"c",)"
               R"("image":"x"}]}})");
  }
  testing::FakeApiServer server;
  RealClock clock;
  std::unique_ptr<kube::ApiClient> client;
  std::unique_ptr<KubeAnnouncer> announcer;
};

KubeAnnouncerOptions Both() {
  KubeAnnouncerOptions o;
  o.identity = kId;
  o.label_key = "leasehold.io/role";
  o.pod_name = "pod-a";
  o.pod_namespace = "web";
  return o;
}

TEST_CASE("announcer component: events are stored, the label is merged into the pod") {
  Fixture f(Both());
  f.announcer->Publish(Pub(false));
  f.announcer->Step();
  CHECK(LabelOf(*f.server.Get("pods", "web", "pod-a"), "leasehold.io/role") == "follower");
  CHECK(LabelOf(*f.server.Get("pods", "web", "pod-a"), "app") == "web");  // untouched

  f.announcer->Publish(Pub(true));
  f.announcer->Step();
  CHECK(LabelOf(*f.server.Get("pods", "web", "pod-a"), "leasehold.io/role") == "leader");
  f.announcer->Publish(Pub(false));
  f.announcer->Step();
  CHECK(LabelOf(*f.server.Get("pods", "web", "pod-a"), "leasehold.io/role") == "follower");

  const auto events = f.server.Events();
  REQUIRE(events.size() == 2);
  const char* messages[] = {"pod-a_0badcafe became leader", "pod-a_0badcafe stopped leading"};
  for (size_t i = 0; i < events.size(); ++i) {
    rapidjson::Document e = ParseJson(events[i]);
    CHECK(std::string(e["message"].GetString()) == messages[i]);
    CHECK(std::string(e["reason"].GetString()) == "LeaderElection");
    CHECK(std::string(e["type"].GetString()) == "Normal");
    CHECK(std::string(e["involvedObject"]["kind"].GetString()) == "Lease");
    CHECK(std::string(e["involvedObject"]["apiVersion"].GetString()) == "coordination.k8s.io/v1");
    CHECK(std::string(e["involvedObject"]["name"].GetString()) == "my-lock");
    CHECK(std::string(e["metadata"]["namespace"].GetString()) == "team");
    CHECK(std::string(e["metadata"]["name"].GetString()).rfind("my-lock.", 0) == 0);
    CHECK(std::string(e["source"]["component"].GetString()) == "leasehold");
  }
  for (const auto& r : f.server.Requests()) {
    if (r.method == "PATCH") CHECK(r.content_type == "application/merge-patch+json");
  }
}

TEST_CASE("announcer component: a 403 on events stops them; a 403 on the label is retried") {
  Fixture f(Both());
  f.server.Deny("create", "events");
  f.server.Deny("patch", "pods");
  for (bool leader : {true, false, true}) {
    f.announcer->Publish(Pub(leader));
    f.announcer->Step();
  }
  CHECK(f.server.CountRequests("POST", "/api/v1/namespaces/team/events") == 1);
  CHECK(f.server.CountRequests("PATCH", "/api/v1/namespaces/web/pods/pod-a") == 3);
  CHECK(LabelOf(*f.server.Get("pods", "web", "pod-a"), "leasehold.io/role") == "<none>");

  // RBAC fixed: the next write (a change, or the retry when due) lands.
  f.server.ClearDenies();
  f.announcer->Publish(Pub(false));
  f.announcer->Step();
  CHECK(LabelOf(*f.server.Get("pods", "web", "pod-a"), "leasehold.io/role") == "follower");
  CHECK(f.server.Events().empty());
}

TEST_CASE("announcer component: a missing pod is a warning, not a failure") {
  KubeAnnouncerOptions o = Both();
  o.pod_name = "no-such-pod";
  Fixture f(o);
  f.announcer->Publish(Pub(true));
  const MonoTime next = f.announcer->Step();
  CHECK(next > f.clock.MonotonicNow());  // retried later, with backoff
  CHECK(f.server.Events().size() == 1);
}

}  // namespace
}  // namespace leasehold::cluster
