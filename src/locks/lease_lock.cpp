#include "locks/lease_lock.h"

#include <spdlog/spdlog.h>

#include <utility>

#include "locks/codec.h"
#include "locks/json_object.h"
#include "locks/paths.h"

namespace leasehold::locks {

using election::LeaderElectionRecord;
using election::LockObservation;
using internal::CachedObject;

LeaseLock::LeaseLock(kube::ApiClient& client, std::string name_space, std::string name)
    : client_(client), ns_(std::move(name_space)), name_(std::move(name)) {}

LeaseLock::~LeaseLock() = default;

Result<LockObservation> LeaseLock::Get(MonoTime deadline) {
  auto response = client_.Do({"GET", internal::LeasePath(ns_, name_), ""}, deadline);
  if (!response.ok()) {
    if (response.code() == Code::kNotFound) cached_.reset();
    return response.status();
  }
  auto object = std::make_unique<CachedObject>();
  Status parsed = internal::ParseObject(response->body, "Lease", object->doc);
  if (!parsed.ok()) return parsed;
  auto spec = internal::DecodeLeaseSpecIn(object->doc);
  if (!spec.ok()) return spec.status();
  cached_ = std::move(object);
  // Keep in step with LeaseObservation(), which watchers use.
  return LockObservation{spec->record, LeaseRawRecord(*spec)};
}

Status LeaseLock::Create(const LeaderElectionRecord& record, MonoTime deadline) {
  const std::string body =
      "{\"apiVersion\":\"coordination.k8s.io/v1\",\"kind\":\"Lease\","
      "\"metadata\":{\"name\":" +
      GoJsonQuote(name_) + ",\"namespace\":" + GoJsonQuote(ns_) +
      "},\"spec\":" + EncodeLeaseSpec(record) + "}";
  auto response = client_.Do({"POST", internal::LeaseCollectionPath(ns_), body}, deadline);
  if (!response.ok()) return response.status();
  auto object = std::make_unique<CachedObject>();
  Status parsed = internal::ParseObject(response->body, "Lease", object->doc);
  if (!parsed.ok()) {
    // The write happened, so report success; without a cache the next Update fails and the
    // elector falls back to Get.
    spdlog::warn("lease {}/{}: created, but cannot cache the answer: {}", ns_, name_,
                 parsed.ToString());
    cached_.reset();
    return Status::Ok();
  }
  cached_ = std::move(object);
  return Status::Ok();
}

Status LeaseLock::Update(const LeaderElectionRecord& record, MonoTime deadline) {
  if (!cached_) {
    return Status(Code::kInvalid,
                  "lease " + ns_ + "/" + name_ + ": nothing cached to update; Get or Create first");
  }
  rapidjson::Document object;
  object.CopyFrom(cached_->doc, object.GetAllocator());
  rapidjson::Document spec_doc;
  Status s = internal::ParseObject(EncodeLeaseSpec(record), "spec", spec_doc);
  if (!s.ok()) return s;
  rapidjson::Value spec(spec_doc, object.GetAllocator());
  internal::SetMember(object, "spec", spec, object.GetAllocator());

  auto response =
      client_.Do({"PUT", internal::LeasePath(ns_, name_), internal::Serialize(object)}, deadline);
  if (!response.ok()) return response.status();
  auto fresh = std::make_unique<CachedObject>();
  Status parsed = internal::ParseObject(response->body, "Lease", fresh->doc);
  if (!parsed.ok()) {
    // The old cache's resourceVersion is stale now; dropping it sends the elector back to Get.
    spdlog::warn("lease {}/{}: updated, but cannot cache the answer: {}", ns_, name_,
                 parsed.ToString());
    cached_.reset();
    return Status::Ok();
  }
  cached_ = std::move(fresh);
  return Status::Ok();
}

election::LockDescription LeaseLock::Describe() const { return {"leases", ns_, name_}; }

}  // namespace leasehold::locks
