// Shared helpers for the kube component tests against the fake apiserver.
#pragma once

#include <rapidjson/document.h>

#include <memory>
#include <string>

#include "fakes/fake_apiserver.h"
#include "kube/api_client.h"
#include "kube/cluster_config.h"
#include "kube/curl_api_client.h"
#include "kube/object_ref.h"

namespace leasehold::kube {

inline constexpr const char* kLeases = "/apis/coordination.k8s.io/v1/namespaces/ns/leases";
// The Lease `name` in namespace ns, as requests name it.
inline ObjectRef LeaseRef(const std::string& name) {
  return ObjectRef{"coordination.k8s.io", "v1", "leases", "ns", name};
}

inline std::string LeasePath(const std::string& name) { return std::string(kLeases) + "/" + name; }

// A Lease body; `rv` "" leaves metadata.resourceVersion out.
inline std::string LeaseJson(const std::string& name, const std::string& holder,
                             const std::string& rv = "") {
  std::string meta = R"("name":")" + name + R"(","namespace":"ns")";
  if (!rv.empty()) meta += R"(,"resourceVersion":")" + rv + R"(")";
  return R"({"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{)" + meta +
         R"(},"spec":{"holderIdentity":")" + holder +
         R"(","leaseDurationSeconds":15,"acquireTime":"2026-01-02T03:04:05.123456Z",)"
         R"("renewTime":"2026-01-02T03:04:05.123456Z","leaseTransitions":0}})";
}

// metadata.<field> of a JSON object, "" when absent.
inline std::string MetaField(const std::string& json, const char* field) {
  rapidjson::Document doc;
  doc.Parse(json.c_str());
  if (!doc.IsObject() || !doc.HasMember("metadata") || !doc["metadata"].IsObject()) return "";
  const auto& meta = doc["metadata"];
  if (!meta.HasMember(field) || !meta[field].IsString()) return "";
  return meta[field].GetString();
}

inline std::unique_ptr<ApiClient> MustClient(const ClusterConfig& config, const Clock& clock,
                                             ClientOptions options = {}) {
  auto client = NewCurlApiClient(config, options, clock);
  if (!client.ok()) throw std::runtime_error(client.status().ToString());
  return std::move(client).value();
}

}  // namespace leasehold::kube
