#include "locks/annotation_lock.h"

#include <spdlog/spdlog.h>

#include <utility>

#include "locks/codec.h"
#include "locks/json_object.h"
#include "locks/paths.h"

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
    if (!metadata->IsObject()) return Status(Code::kInvalid, "metadata is not an object");
    annotations = internal::FindMember(*metadata, "annotations");
  }
  const rapidjson::Value* value = nullptr;
  if (annotations != nullptr && !annotations->IsNull()) {
    if (!annotations->IsObject()) {
      return Status(Code::kInvalid, "metadata.annotations is not an object");
    }
    value = internal::FindMember(*annotations, kLeaderAnnotationKey);
  }
  if (value != nullptr) {
    if (!value->IsString()) {
      return Status(Code::kInvalid,
                    std::string("annotation ") + kLeaderAnnotationKey + " is not a string");
    }
    observation.raw.assign(value->GetString(), value->GetStringLength());
    auto record = DecodeAnnotationRecord(observation.raw);
    if (!record.ok()) return record.status();
    observation.record = *record;
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

AnnotationLock::AnnotationLock(AnnotatedKind kind, kube::ApiClient& client, std::string name_space,
                               std::string name)
    : kind_(kind), client_(client), ns_(std::move(name_space)), name_(std::move(name)) {}

AnnotationLock::~AnnotationLock() = default;

const char* AnnotationLock::resource() const {
  return kind_ == AnnotatedKind::kConfigMap ? "configmaps" : "endpoints";
}

const char* AnnotationLock::kind_name() const {
  return kind_ == AnnotatedKind::kConfigMap ? "ConfigMap" : "Endpoints";
}

Result<LockObservation> AnnotationLock::Get(MonoTime deadline) {
  auto response =
      client_.Do({"GET", internal::CoreObjectPath(resource(), ns_, name_), ""}, deadline);
  if (!response.ok()) {
    if (response.code() == Code::kNotFound) cached_.reset();
    return response.status();
  }
  auto object = std::make_unique<CachedObject>();
  Status parsed = internal::ParseObject(response->body, kind_name(), object->doc);
  if (!parsed.ok()) return parsed;

  auto observation = ObservationIn(object->doc);
  if (!observation.ok()) return observation.status();
  cached_ = std::move(object);
  return observation;
}

Status AnnotationLock::Create(const LeaderElectionRecord& record, MonoTime deadline) {
  const std::string body = std::string("{\"apiVersion\":\"v1\",\"kind\":\"") + kind_name() +
                           "\",\"metadata\":{\"name\":" + GoJsonQuote(name_) +
                           ",\"namespace\":" + GoJsonQuote(ns_) + ",\"annotations\":{" +
                           GoJsonQuote(kLeaderAnnotationKey) + ":" +
                           GoJsonQuote(EncodeAnnotationRecord(record)) + "}}}";
  auto response =
      client_.Do({"POST", internal::CoreCollectionPath(resource(), ns_), body}, deadline);
  if (!response.ok()) return response.status();
  auto object = std::make_unique<CachedObject>();
  Status parsed = internal::ParseObject(response->body, kind_name(), object->doc);
  if (!parsed.ok()) {
    spdlog::warn("{} {}/{}: created, but cannot cache the answer: {}", resource(), ns_, name_,
                 parsed.ToString());
    cached_.reset();
    return Status::Ok();
  }
  cached_ = std::move(object);
  return Status::Ok();
}

Status AnnotationLock::Update(const LeaderElectionRecord& record, MonoTime deadline) {
  if (!cached_) {
    return Status(Code::kInvalid, std::string(resource()) + " " + ns_ + "/" + name_ +
                                      ": nothing cached to update; Get or Create first");
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
  if (!metadata->IsObject()) return Status(Code::kInvalid, "metadata is not an object");
  rapidjson::Value* annotations = internal::FindMember(*metadata, "annotations");
  if (annotations == nullptr || annotations->IsNull()) {
    rapidjson::Value empty(rapidjson::kObjectType);
    internal::SetMember(*metadata, "annotations", empty, allocator);
    annotations = internal::FindMember(*metadata, "annotations");
  }
  if (!annotations->IsObject()) {
    return Status(Code::kInvalid, "metadata.annotations is not an object");
  }
  const std::string encoded = EncodeAnnotationRecord(record);
  rapidjson::Value value(encoded.data(), static_cast<rapidjson::SizeType>(encoded.size()),
                         allocator);
  internal::SetMember(*annotations, kLeaderAnnotationKey, value, allocator);

  auto response = client_.Do(
      {"PUT", internal::CoreObjectPath(resource(), ns_, name_), internal::Serialize(object)},
      deadline);
  if (!response.ok()) return response.status();
  auto fresh = std::make_unique<CachedObject>();
  Status parsed = internal::ParseObject(response->body, kind_name(), fresh->doc);
  if (!parsed.ok()) {
    spdlog::warn("{} {}/{}: updated, but cannot cache the answer: {}", resource(), ns_, name_,
                 parsed.ToString());
    cached_.reset();
    return Status::Ok();
  }
  cached_ = std::move(fresh);
  return Status::Ok();
}

election::LockDescription AnnotationLock::Describe() const { return {resource(), ns_, name_}; }

}  // namespace leasehold::locks
