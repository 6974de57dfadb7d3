#include "locks/codec.h"

#include <rapidjson/document.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <limits>
#include <optional>

#include "base/text.h"
#include "locks/codec_internal.h"
#include "locks/go_json.h"
#include "locks/json_object.h"

namespace leasehold::locks {
namespace {

using election::LeaderElectionRecord;

// JSON readers for the record's field types. `field` names the field in error messages.

Status WrongType(const std::string& field, const char* want) {
  return Status(Code::kInvalid, "field " + field + " is not " + want);
}

Status DecodeString(const rapidjson::Value& v, const std::string& field, std::string* out) {
  if (v.IsNull()) return Status::Ok();
  if (!v.IsString()) return WrongType(field, "a string");
  out->assign(v.GetString(), v.GetStringLength());
  return Status::Ok();
}

template <typename Int>
Status DecodeInt(const rapidjson::Value& v, const std::string& field, Int* out) {
  if (v.IsNull()) return Status::Ok();
  if (!v.IsInt64()) return WrongType(field, "an integer");
  const int64_t i = v.GetInt64();
  if (i < std::numeric_limits<Int>::min() || i > std::numeric_limits<Int>::max()) {
    return Status(Code::kInvalid, "field " + field + " is out of range");
  }
  *out = static_cast<Int>(i);
  return Status::Ok();
}

Status DecodeTime(const rapidjson::Value& v, const std::string& field,
                  std::optional<SysTime>* out) {
  if (v.IsNull()) {
    out->reset();
    return Status::Ok();
  }
  if (!v.IsString()) return WrongType(field, "a time string");
  auto micros = ParseRfc3339Micros(std::string_view(v.GetString(), v.GetStringLength()));
  if (!micros.ok())
    return Status(Code::kInvalid, "field " + field + ": " + micros.status().message());
  if (*micros == kGoZeroTimeMicros) {
    out->reset();
    return Status::Ok();
  }
  auto t = ToSysTime(*micros);
  if (!t) return Status(Code::kInvalid, "field " + field + ": time out of range");
  *out = *t;
  return Status::Ok();
}

bool EqualFoldAscii(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; };
    if (lower(a[i]) != lower(b[i])) return false;
  }
  return true;
}

std::string QuotedTimeOrNull(const std::optional<SysTime>& t, bool micro) {
  if (!t) return "null";
  return "\"" + (micro ? FormatMicroTime(*t) : FormatRfc3339Seconds(*t)) + "\"";
}

}  // namespace

namespace internal {

Result<LeaseSpec> DecodeLeaseSpecIn(const rapidjson::Value& lease) {
  if (!lease.IsObject()) return Status(Code::kInvalid, "Lease is not a JSON object");
  LeaseSpec out;
  const rapidjson::Value* spec = FindMember(lease, "spec");
  if (spec == nullptr || spec->IsNull()) return out;
  if (!spec->IsObject()) return WrongType("spec", "an object");
  struct Field {
    const char* name;
    std::function<Status(const rapidjson::Value&, const std::string&)> decode;
  };
  LeaderElectionRecord& r = out.record;
  const Field fields[] = {
      {"holderIdentity",
       [&](const auto& v, const auto& f) { return DecodeString(v, f, &r.holder_identity); }},
      {"leaseDurationSeconds",
       [&](const auto& v, const auto& f) { return DecodeInt(v, f, &r.lease_duration_seconds); }},
      {"acquireTime",
       [&](const auto& v, const auto& f) { return DecodeTime(v, f, &r.acquire_time); }},
      {"renewTime", [&](const auto& v, const auto& f) { return DecodeTime(v, f, &r.renew_time); }},
      {"leaseTransitions",
       [&](const auto& v, const auto& f) {
         int32_t t = 0;
         Status s = DecodeInt(v, f, &t);
         r.leader_transitions = t;
         return s;
       }},
      {"strategy", [&](const auto& v, const auto& f) { return DecodeString(v, f, &out.strategy); }},
      {"preferredHolder",
       [&](const auto& v, const auto& f) { return DecodeString(v, f, &out.preferred_holder); }},
  };
  for (const Field& field : fields) {
    const rapidjson::Value* v = FindMember(*spec, field.name);
    if (v == nullptr) continue;
    Status s = field.decode(*v, std::string("spec.") + field.name);
    if (!s.ok()) return s;
  }
  return out;
}

}  // namespace internal

Result<LeaseSpec> DecodeLeaseObject(std::string_view object_json) {
  rapidjson::Document doc;
  Status s = internal::ParseObject(object_json, "Lease", doc);
  if (!s.ok()) return s;
  return internal::DecodeLeaseSpecIn(doc);
}

Result<election::LockObservation> LeaseObservation(std::string_view object_json) {
  auto spec = DecodeLeaseObject(object_json);
  if (!spec.ok()) return spec.status();
  return election::LockObservation{spec->record, LeaseRawRecord(*spec)};
}

std::string EncodeLeaseSpec(const LeaderElectionRecord& record) {
  return "{\"holderIdentity\":" + GoJsonQuote(record.holder_identity) +
         ",\"leaseDurationSeconds\":" + std::to_string(record.lease_duration_seconds) +
         ",\"acquireTime\":" + QuotedTimeOrNull(record.acquire_time, true) +
         ",\"renewTime\":" + QuotedTimeOrNull(record.renew_time, true) +
         ",\"leaseTransitions\":" + std::to_string(record.leader_transitions) + "}";
}

std::string LeaseRawRecord(const LeaseSpec& spec) {
  const LeaderElectionRecord& r = spec.record;
  return "{\"holderIdentity\":" + GoJsonQuote(r.holder_identity) +
         ",\"leaseDurationSeconds\":" + std::to_string(r.lease_duration_seconds) +
         ",\"acquireTime\":" + QuotedTimeOrNull(r.acquire_time, true) +
         ",\"renewTime\":" + QuotedTimeOrNull(r.renew_time, true) +
         ",\"leaderTransitions\":" + std::to_string(r.leader_transitions) +
         ",\"strategy\":" + GoJsonQuote(spec.strategy) +
         ",\"preferredHolder\":" + GoJsonQuote(spec.preferred_holder) + "}";
}

std::string EncodeAnnotationRecord(const LeaderElectionRecord& record) {
  return "{\"holderIdentity\":" + GoJsonQuote(record.holder_identity) +
         ",\"leaseDurationSeconds\":" + std::to_string(record.lease_duration_seconds) +
         ",\"acquireTime\":" + QuotedTimeOrNull(record.acquire_time, false) +
         ",\"renewTime\":" + QuotedTimeOrNull(record.renew_time, false) +
         ",\"leaderTransitions\":" + std::to_string(record.leader_transitions) + "}";
}

Result<LeaderElectionRecord> DecodeAnnotationRecord(std::string_view json) {
  rapidjson::Document doc;
  doc.Parse<rapidjson::kParseIterativeFlag>(json.data(), json.size());
  if (doc.HasParseError()) {
    return Status(Code::kInvalid, "leader annotation is not JSON: \"" + Excerpt(json) + "\"");
  }
  LeaderElectionRecord r;
  if (doc.IsNull()) return r;
  if (!doc.IsObject()) return Status(Code::kInvalid, "leader annotation is not a JSON object");
  for (const auto& m : doc.GetObject()) {
    const std::string_view name(m.name.GetString(), m.name.GetStringLength());
    const std::string field(name);
    Status s;
    if (EqualFoldAscii(name, "holderIdentity")) {
      s = DecodeString(m.value, field, &r.holder_identity);
    } else if (EqualFoldAscii(name, "leaseDurationSeconds")) {
      s = DecodeInt(m.value, field, &r.lease_duration_seconds);
    } else if (EqualFoldAscii(name, "acquireTime")) {
      s = DecodeTime(m.value, field, &r.acquire_time);
    } else if (EqualFoldAscii(name, "renewTime")) {
      s = DecodeTime(m.value, field, &r.renew_time);
    } else if (EqualFoldAscii(name, "leaderTransitions")) {
      s = DecodeInt(m.value, field, &r.leader_transitions);
    }
    if (!s.ok()) return s;
  }
  return r;
}

}  // namespace leasehold::locks
