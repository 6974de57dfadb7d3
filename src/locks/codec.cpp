#include "locks/codec.h"

#include <rapidjson/document.h>

#include <algorithm>
#include <chrono>
#include <cmath>
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
  return Status(Code::kMalformed, "field " + field + " is not " + want);
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
    return Status(Code::kMalformed, "field " + field + " is out of range");
  }
  *out = static_cast<Int>(i);
  return Status::Ok();
}

// Times are informational: no expiry decision reads them (the elector times expiry by its own
// clock from when it saw the record change). So any form ParseTimeLenient knows is read, and
// anything else (a number, garbage, Go's zero time) reads as "no time" rather than making the
// whole record unreadable.
void DecodeTime(const rapidjson::Value& v, std::optional<SysTime>* out) {
  out->reset();
  if (!v.IsString()) return;
  *out = ParseTimeLenient(std::string_view(v.GetString(), v.GetStringLength()));
}

// leaseDurationSeconds as a JSON number or a numeric string ("5", "7.5": the Python client
// writes a string); a fraction rounds up, so a reader never waits less than the writer meant.
// Anything below 1 reads as 0, "no duration", for which the reader's own duration counts.
Status DecodeDurationSeconds(const rapidjson::Value& v, const std::string& field, int* out) {
  *out = 0;
  if (v.IsNull()) return Status::Ok();
  double seconds = 0;
  if (v.IsInt64()) {
    seconds = static_cast<double>(v.GetInt64());
  } else if (v.IsNumber()) {
    seconds = v.GetDouble();
  } else if (v.IsString()) {
    const std::string_view t(v.GetString(), v.GetStringLength());
    // Digits, then at most one '.' and digits: no sign, exponent, spaces or hex.
    size_t i = 0, digits = 0;
    double whole = 0, scale = 1, fraction = 0;
    while (i < t.size() && t[i] >= '0' && t[i] <= '9' && digits < 12) {
      whole = whole * 10 + (t[i++] - '0');
      ++digits;
    }
    if (i < t.size() && t[i] == '.') {
      ++i;
      while (i < t.size() && t[i] >= '0' && t[i] <= '9' && scale > 1e-9) {
        scale /= 10;
        fraction += (t[i++] - '0') * scale;
      }
    }
    if (digits == 0 || i != t.size()) return WrongType(field, "a number of seconds");
    seconds = whole + fraction;
  } else {
    return WrongType(field, "a number of seconds");
  }
  if (!(seconds <= std::numeric_limits<int32_t>::max())) {
    return Status(Code::kMalformed, "field " + field + " is out of range");
  }
  if (seconds < 1) return Status::Ok();
  *out = static_cast<int>(std::ceil(seconds));
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

Status DecodeLeaseSpecInto(const rapidjson::Value& lease, LeaderElectionRecord* out) {
  if (!lease.IsObject()) return Status(Code::kMalformed, "Lease is not a JSON object");
  const rapidjson::Value* spec = FindMember(lease, "spec");
  LeaderElectionRecord& r = *out;
  r.transitions_recorded = false;
  if (spec == nullptr || spec->IsNull()) return Status::Ok();
  if (!spec->IsObject()) return WrongType("spec", "an object");
  // Every field is read even after one fails, so that an unreadable record still yields its
  // lease duration (see LockObservation::opaque); the first failure is returned.
  Status first;
  const auto keep = [&first](Status s) {
    if (first.ok() && !s.ok()) first = std::move(s);
  };
  for (const auto& m : spec->GetObject()) {
    const std::string_view name(m.name.GetString(), m.name.GetStringLength());
    const std::string field = "spec." + std::string(name);
    if (name == "holderIdentity") {
      keep(DecodeString(m.value, field, &r.holder_identity));
    } else if (name == "leaseDurationSeconds") {
      keep(DecodeDurationSeconds(m.value, field, &r.lease_duration_seconds));
    } else if (name == "acquireTime") {
      DecodeTime(m.value, &r.acquire_time);
    } else if (name == "renewTime") {
      DecodeTime(m.value, &r.renew_time);
    } else if (name == "leaseTransitions") {
      int32_t t = 0;
      keep(DecodeInt(m.value, field, &t));
      r.leader_transitions = t;
      r.transitions_recorded = !m.value.IsNull();
    } else if (name == "strategy") {
      keep(DecodeString(m.value, field, &r.strategy));
    } else if (name == "preferredHolder") {
      keep(DecodeString(m.value, field, &r.preferred_holder));
    }
  }
  return first;
}

election::LockObservation OpaqueObservation(const rapidjson::Value& object,
                                            const LeaderElectionRecord& readable,
                                            const Status& why) {
  election::LockObservation o;
  o.opaque = true;
  o.unreadable = why.message();
  // Only what the elector may use: the duration (it waits the longer of this and its own) and
  // the count (the next term must exceed it). Never the holder, which it cannot trust.
  o.record.lease_duration_seconds = readable.lease_duration_seconds;
  o.record.leader_transitions = readable.leader_transitions;
  o.record.transitions_recorded = false;
  std::string rv;
  if (const rapidjson::Value* md = FindMember(object, "metadata"); md != nullptr) {
    if (const rapidjson::Value* v = FindMember(*md, "resourceVersion"); v && v->IsString()) {
      rv.assign(v->GetString(), v->GetStringLength());
    }
  }
  o.raw = "opaque:" + rv;
  return o;
}

election::LockObservation ObserveLease(const rapidjson::Value& lease) {
  LeaderElectionRecord record;
  Status s = DecodeLeaseSpecInto(lease, &record);
  if (!s.ok()) return OpaqueObservation(lease, record, s);
  election::LockObservation o{record, LeaseRawRecord(record)};
  return o;
}

Result<LeaderElectionRecord> DecodeLeaseSpecIn(const rapidjson::Value& lease) {
  LeaderElectionRecord out;
  Status s = DecodeLeaseSpecInto(lease, &out);
  if (!s.ok()) return s;
  return out;
}

}  // namespace internal

Result<LeaderElectionRecord> DecodeLeaseObject(std::string_view object_json) {
  rapidjson::Document doc;
  Status s = internal::ParseObject(object_json, "Lease", doc);
  if (!s.ok()) return s;
  return internal::DecodeLeaseSpecIn(doc);
}

Result<election::LockObservation> LeaseObservation(std::string_view object_json) {
  rapidjson::Document doc;
  Status s = internal::ParseObject(object_json, "Lease", doc);
  if (!s.ok()) return s;
  return internal::ObserveLease(doc);
}

std::string EncodeLeaseSpec(const LeaderElectionRecord& record) {
  return "{\"holderIdentity\":" + GoJsonQuote(record.holder_identity) +
         ",\"leaseDurationSeconds\":" + std::to_string(record.lease_duration_seconds) +
         ",\"acquireTime\":" + QuotedTimeOrNull(record.acquire_time, true) +
         ",\"renewTime\":" + QuotedTimeOrNull(record.renew_time, true) +
         ",\"leaseTransitions\":" + std::to_string(record.leader_transitions) +
         (record.strategy.empty() ? "" : ",\"strategy\":" + GoJsonQuote(record.strategy)) +
         (record.preferred_holder.empty()
              ? ""
              : ",\"preferredHolder\":" + GoJsonQuote(record.preferred_holder)) +
         "}";
}

std::string LeaseRawRecord(const LeaderElectionRecord& r) {
  return "{\"holderIdentity\":" + GoJsonQuote(r.holder_identity) +
         ",\"leaseDurationSeconds\":" + std::to_string(r.lease_duration_seconds) +
         ",\"acquireTime\":" + QuotedTimeOrNull(r.acquire_time, true) +
         ",\"renewTime\":" + QuotedTimeOrNull(r.renew_time, true) +
         ",\"leaderTransitions\":" + std::to_string(r.leader_transitions) +
         ",\"strategy\":" + GoJsonQuote(r.strategy) +
         ",\"preferredHolder\":" + GoJsonQuote(r.preferred_holder) + "}";
}

std::string EncodeAnnotationRecord(const LeaderElectionRecord& record) {
  return "{\"holderIdentity\":" + GoJsonQuote(record.holder_identity) +
         ",\"leaseDurationSeconds\":" + std::to_string(record.lease_duration_seconds) +
         ",\"acquireTime\":" + QuotedTimeOrNull(record.acquire_time, false) +
         ",\"renewTime\":" + QuotedTimeOrNull(record.renew_time, false) +
         ",\"leaderTransitions\":" + std::to_string(record.leader_transitions) + "}";
}

Status internal::DecodeAnnotationRecordInto(std::string_view json, LeaderElectionRecord* r) {
  *r = LeaderElectionRecord{};
  r->transitions_recorded = false;
  rapidjson::Document doc;
  doc.Parse<rapidjson::kParseIterativeFlag>(json.data(), json.size());
  if (doc.HasParseError()) {
    return Status(Code::kMalformed, "leader annotation is not JSON: \"" + Excerpt(json) + "\"");
  }
  if (doc.IsNull()) return Status::Ok();
  if (!doc.IsObject()) return Status(Code::kMalformed, "leader annotation is not a JSON object");
  // As for the Lease: every field is read, and the first failure returned.
  Status first;
  const auto keep = [&first](Status s) {
    if (first.ok() && !s.ok()) first = std::move(s);
  };
  for (const auto& m : doc.GetObject()) {
    const std::string_view name(m.name.GetString(), m.name.GetStringLength());
    const std::string field(name);
    if (EqualFoldAscii(name, "holderIdentity")) {
      keep(DecodeString(m.value, field, &r->holder_identity));
    } else if (EqualFoldAscii(name, "leaseDurationSeconds")) {
      keep(DecodeDurationSeconds(m.value, field, &r->lease_duration_seconds));
    } else if (EqualFoldAscii(name, "acquireTime")) {
      DecodeTime(m.value, &r->acquire_time);
    } else if (EqualFoldAscii(name, "renewTime")) {
      DecodeTime(m.value, &r->renew_time);
    } else if (EqualFoldAscii(name, "leaderTransitions")) {
      keep(DecodeInt(m.value, field, &r->leader_transitions));
      r->transitions_recorded = !m.value.IsNull();
    }
  }
  return first;
}

Result<LeaderElectionRecord> DecodeAnnotationRecord(std::string_view json) {
  LeaderElectionRecord r;
  Status s = internal::DecodeAnnotationRecordInto(json, &r);
  if (!s.ok()) return s;
  return r;
}

}  // namespace leasehold::locks
