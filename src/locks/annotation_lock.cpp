#include "locks/annotation_lock.h"

#include <utility>

#include "locks/codec.h"
#include "locks/codec_internal.h"
#include "locks/go_json.h"
#include "locks/json_object.h"

namespace leasehold::locks {

using election::LeaderElectionRecord;
using election::LockObservation;
using internal::CachedObject;

namespace {

// The record in the leader annotation of a ConfigMap or Endpoints object; see AnnotationLock::Get.
Result<LockObservation> ObservationIn(const rapidjson::Value& object) {
  LockObservation observation;
  const rapidjson::Value* metadata = internal::FindMember(object, "metadata");
  const rapidjson::Value* annotations = nullptr;
  if (metadata != nullptr && !metadata->IsNull()) {
    if (!metadata->IsObject()) return Status(Code::kMalformed, "metadata is not an object");
    annotations = internal::FindMember(*metadata, "annotations");
  }
  const rapidjson::Value* value = nullptr;
  if (annotations != nullptr && !annotations->IsNull()) {
    if (!annotations->IsObject()) {
      return Status(Code::kMalformed, "metadata.annotations is not an object");
    }
    value = internal::FindMember(*annotations, kLeaderAnnotationKey);
  }
  if (value != nullptr) {
    if (!value->IsString()) {
      return internal::OpaqueObservation(
          object, {},
          Status(Code::kMalformed,
                 std::string("annotation ") + kLeaderAnnotationKey + " is not a string"));
    }
    observation.raw.assign(value->GetString(), value->GetStringLength());
    // Garbage in the annotation is an opaque holder (someone wrote it), not an error of ours.
    Status decoded = internal::DecodeAnnotationRecordInto(observation.raw, &observation.record);
    if (!decoded.ok()) return internal::OpaqueObservation(object, observation.record, decoded);
  }
  return observation;
}

}  // namespace

Result<LockObservation> AnnotationObservation(std::string_view object_json) {
  rapidjson::Document doc;
  Status parsed = internal::ParseObject(object_json, "object", doc);
  if (!parsed.ok()) return parsed;
  return ObservationIn(doc);
}

AnnotationLock::AnnotationLock(const LockObjectKind& kind, kube::ApiClient& client,
                               std::string name_space, std::string name)
    : kind_(kind),
      client_(client),
      ns_(std::move(name_space)),
      name_(std::move(name)),
      ref_(kind.Ref(ns_, name_)),
      kind_name_(kind.kind) {}

AnnotationLock::~AnnotationLock() = default;

std::string AnnotationLock::Where() const {
  return std::string(kind_.resource) + " " + ns_ + "/" + name_;
}

Result<LockObservation> AnnotationLock::Get(MonoTime deadline) {
  auto response = client_.Do(kube::ObjectRequest("GET", ref_), deadline);
  if (!response.ok()) {
    if (response.code() == Code::kNotFound) cached_.reset();
    return response.status();
  }
  auto object = std::make_unique<CachedObject>();
  Status parsed = internal::ParseObject(response->body, kind_name_.c_str(), object->doc);
  if (!parsed.ok()) return parsed;

  auto observation = ObservationIn(object->doc);
  if (!observation.ok()) return observation.status();
  cached_ = std::move(object);
  return observation;
}

Status AnnotationLock::Create(const LeaderElectionRecord& record, MonoTime deadline) {
  const std::string body =
      "{\"apiVersion\":" + GoJsonQuote(kind_.ApiVersion()) +
      ",\"kind\":" + GoJsonQuote(kind_.kind) + ",\"metadata\":{\"name\":" + GoJsonQuote(name_) +
      ",\"namespace\":" + GoJsonQuote(ns_) + ",\"annotations\":{" +
      GoJsonQuote(kLeaderAnnotationKey) + ":" + GoJsonQuote(EncodeAnnotationRecord(record)) + "}}}";
  auto response = client_.Do(kube::ObjectRequest("POST", ref_, body), deadline);
  if (!response.ok()) return response.status();
  internal::CacheWriteAnswer(response->body, kind_name_.c_str(), Where(), "created", cached_);
  return Status::Ok();
}

Status AnnotationLock::Update(const LeaderElectionRecord& record, MonoTime deadline) {
  if (!cached_) {
    return Status(Code::kFailedPrecondition,
                  Where() + ": nothing cached to update; Get or Create first");
  }
  rapidjson::Document object;
  auto& allocator = object.GetAllocator();
  object.CopyFrom(cached_->doc, allocator);
  rapidjson::Value* metadata = internal::FindMember(object, "metadata");
  if (metadata == nullptr || metadata->IsNull()) {
    rapidjson::Value empty(rapidjson::kObjectType);
    internal::SetMember(object, "metadata", empty, allocator);
    metadata = internal::FindMember(object, "metadata");
  }
  if (!metadata->IsObject()) return Status(Code::kMalformed, "metadata is not an object");
  rapidjson::Value* annotations = internal::FindMember(*metadata, "annotations");
  if (annotations == nullptr || annotations->IsNull()) {
    rapidjson::Value empty(rapidjson::kObjectType);
    internal::SetMember(*metadata, "annotations", empty, allocator);
    annotations = internal::FindMember(*metadata, "annotations");
  }
  if (!annotations->IsObject()) {
    return Status(Code::kMalformed, "metadata.annotations is not an object");
  }
  const std::string encoded = EncodeAnnotationRecord(record);
  rapidjson::Value value(encoded.data(), static_cast<rapidjson::SizeType>(encoded.size()),
                         allocator);
  internal::SetMember(*annotations, kLeaderAnnotationKey, value, allocator);

  auto response =
      client_.Do(kube::ObjectRequest("PUT", ref_, internal::Serialize(object)), deadline);
  if (!response.ok()) return response.status();
  internal::CacheWriteAnswer(response->body, kind_name_.c_str(), Where(), "updated", cached_);
  return Status::Ok();
}

election::LockDescription AnnotationLock::Describe() const { return {kind_.single, ns_, name_}; }

}  // namespace leasehold::locks
