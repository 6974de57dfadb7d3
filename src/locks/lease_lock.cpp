#include "locks/lease_lock.h"

#include <utility>

#include "locks/codec.h"
#include "locks/codec_internal.h"
#include "locks/go_json.h"
#include "locks/json_object.h"
#include "locks/lock_type.h"

namespace leasehold::locks {

using election::LeaderElectionRecord;
using election::LockObservation;
using internal::CachedObject;

LeaseLock::LeaseLock(kube::ApiClient& client, std::string name_space, std::string name)
    : client_(client),
      ns_(std::move(name_space)),
      name_(std::move(name)),
      ref_(kLeaseObject.Ref(ns_, name_)) {}

LeaseLock::~LeaseLock() = default;

Result<LockObservation> LeaseLock::Get(MonoTime deadline) {
  auto response = client_.Do(kube::ObjectRequest("GET", ref_), deadline);
  if (!response.ok()) {
    if (response.code() == Code::kNotFound) cached_.reset();
    return response.status();
  }
  auto object = std::make_unique<CachedObject>();
  Status parsed = internal::ParseObject(response->body, "Lease", object->doc);
  if (!parsed.ok()) return parsed;
  // Keep in step with LeaseObservation(), which watchers use. An unreadable spec is an opaque
  // holder, and its object is cached all the same: a takeover must PUT on its resourceVersion.
  LockObservation observation = internal::ObserveLease(object->doc);
  cached_ = std::move(object);
  return observation;
}

Status LeaseLock::Create(const LeaderElectionRecord& record, MonoTime deadline) {
  const std::string body =
      "{\"apiVersion\":\"coordination.k8s.io/v1\",\"kind\":\"Lease\","
      "\"metadata\":{\"name\":" +
      GoJsonQuote(name_) + ",\"namespace\":" + GoJsonQuote(ns_) +
      "},\"spec\":" + EncodeLeaseSpec(record) + "}";
  auto response = client_.Do(kube::ObjectRequest("POST", ref_, body), deadline);
  if (!response.ok()) return response.status();
  internal::CacheWriteAnswer(response->body, "Lease", "lease " + ns_ + "/" + name_, "created",
                             cached_);
  return Status::Ok();
}

Status LeaseLock::Update(const LeaderElectionRecord& record, MonoTime deadline) {
  if (!cached_) {
    return Status(Code::kFailedPrecondition,
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
      client_.Do(kube::ObjectRequest("PUT", ref_, internal::Serialize(object)), deadline);
  if (!response.ok()) return response.status();
  internal::CacheWriteAnswer(response->body, "Lease", "lease " + ns_ + "/" + name_, "updated",
                             cached_);
  return Status::Ok();
}

election::LockDescription LeaseLock::Describe() const {
  return {election::LockType::kLeases, ns_, name_};
}

}  // namespace leasehold::locks
