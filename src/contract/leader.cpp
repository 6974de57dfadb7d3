#include "contract/leader.h"

#include <rapidjson/document.h>
#include <rapidjson/prettywriter.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "base/rfc3339.h"

namespace leasehold::contract {
namespace {

template <typename W>
void Str(W& w, const std::string& s) {
  w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
}

template <typename W>
void OptTime(W& w, const std::optional<SysTime>& t) {
  if (t) {
    Str(w, FormatRfc3339Millis(*t));
  } else {
    w.Null();
  }
}

int64_t Ms(Duration d) { return std::chrono::duration_cast<std::chrono::milliseconds>(d).count(); }

template <typename W>
void Write(W& w, const LeaderDoc& d) {
  w.StartObject();
  w.Key("name");
  Str(w, d.name);
  w.Key("leader");
  if (d.leader) {
    Str(w, *d.leader);
  } else {
    w.Null();
  }
  w.Key("identity");
  Str(w, d.identity);
  w.Key("isLeader");
  w.Bool(d.is_leader);
  w.Key("term");
  w.Int64(d.term);
  w.Key("termReliable");
  w.Bool(d.term_reliable);
  if (!d.term_reliable) {
    w.Key("termReason");
    Str(w, d.term_reason);
  }
  w.Key("lock");
  w.StartObject();
  w.Key("type");
  Str(w, d.lock.type);
  w.Key("namespace");
  Str(w, d.lock.name_space);
  w.Key("name");
  Str(w, d.lock.name);
  w.EndObject();
  w.Key("acquireTime");
  OptTime(w, d.acquire_time);
  w.Key("renewTime");
  OptTime(w, d.renew_time);
  w.Key("leaseDurationSeconds");
  w.Int(d.lease_duration_seconds);
  if (d.valid_until) {
    w.Key("validForMs");
    w.Int64(d.valid_for_ms);
    w.Key("validUntil");
    Str(w, FormatRfc3339Millis(*d.valid_until));
  }
  if (d.timings) {
    w.Key("timings");
    w.StartObject();
    w.Key("leaseDurationMs");
    w.Int64(Ms(d.timings->lease_duration));
    w.Key("renewDeadlineMs");
    w.Int64(Ms(d.timings->renew_deadline));
    w.Key("retryPeriodMs");
    w.Int64(Ms(d.timings->retry_period));
    // The pause after a successful renew, as the sidecar resolved it (never "auto"); written
    // only when known, so a document of an older sidecar reads back the same.
    if (d.timings->renew_interval > Duration::zero()) {
      w.Key("renewIntervalMs");
      w.Int64(Ms(d.timings->renew_interval));
    }
    w.EndObject();
  }
  if (d.reason) {
    w.Key("reason");
    Str(w, *d.reason);
  }
  w.EndObject();
}

using Value = rapidjson::Value;

const Value* Member(const Value& obj, const char* key) {
  auto it = obj.FindMember(key);
  return it == obj.MemberEnd() ? nullptr : &it->value;
}

std::optional<std::string> String(const Value& obj, const char* key) {
  const Value* v = Member(obj, key);
  if (v == nullptr || !v->IsString()) return std::nullopt;
  return std::string(v->GetString(), v->GetStringLength());
}

std::optional<SysTime> Time(const Value& obj, const char* key) {
  auto s = String(obj, key);
  if (!s) return std::nullopt;
  auto t = ParseRfc3339Utc(*s);
  if (!t.ok()) return std::nullopt;
  return *t;
}

std::optional<Duration> Millis(const Value& obj, const char* key) {
  const Value* v = Member(obj, key);
  if (v == nullptr || !v->IsInt64() || v->GetInt64() < 0) return std::nullopt;
  return std::chrono::milliseconds(v->GetInt64());
}

}  // namespace

std::string EncodeLeader(const LeaderDoc& d, bool pretty) {
  rapidjson::StringBuffer buf;
  if (pretty) {
    rapidjson::PrettyWriter<rapidjson::StringBuffer> w(buf);
    w.SetIndent(' ', 2);
    Write(w, d);
  } else {
    rapidjson::Writer<rapidjson::StringBuffer> w(buf);
    Write(w, d);
  }
  return std::string(buf.GetString(), buf.GetSize());
}

Result<SysTime> ParseRfc3339Utc(std::string_view s) {
  // The sidecar always writes UTC; an offset means the answer is not the sidecar's.
  if (s.empty() || s.back() != 'Z') return Status(Code::kMalformed, "not an RFC 3339 UTC time");
  return ParseRfc3339(s);
}

Result<LeaderDoc> ParseLeader(std::string_view json) {
  rapidjson::Document doc;
  doc.Parse(json.data(), json.size());
  if (doc.HasParseError() || !doc.IsObject()) {
    return Status(Code::kMalformed, "the sidecar's answer is not a JSON object");
  }
  const Value* leader = Member(doc, "isLeader");
  if (leader == nullptr || !leader->IsBool()) {
    return Status(Code::kMalformed, "the sidecar's answer has no isLeader");
  }
  LeaderDoc d;
  d.is_leader = leader->GetBool();
  d.name = String(doc, "name").value_or("");
  d.leader = String(doc, "leader");
  d.identity = String(doc, "identity").value_or("");
  if (const Value* v = Member(doc, "term"); v != nullptr && v->IsInt64()) d.term = v->GetInt64();
  if (const Value* v = Member(doc, "termReliable"); v != nullptr && v->IsBool()) {
    d.term_reliable = v->GetBool();
  }
  d.term_reason = String(doc, "termReason").value_or("");
  if (const Value* lock = Member(doc, "lock"); lock != nullptr && lock->IsObject()) {
    d.lock.type = String(*lock, "type").value_or("");
    d.lock.name_space = String(*lock, "namespace").value_or("");
    d.lock.name = String(*lock, "name").value_or("");
  }
  d.acquire_time = Time(doc, "acquireTime");
  d.renew_time = Time(doc, "renewTime");
  if (const Value* v = Member(doc, "leaseDurationSeconds"); v != nullptr && v->IsInt()) {
    d.lease_duration_seconds = v->GetInt();
  }
  if (const Value* v = Member(doc, "validForMs"); v != nullptr && v->IsInt64()) {
    d.valid_for_ms = v->GetInt64();
  }
  d.valid_until = Time(doc, "validUntil");
  if (const Value* tm = Member(doc, "timings"); tm != nullptr && tm->IsObject()) {
    auto lease = Millis(*tm, "leaseDurationMs");
    auto renew = Millis(*tm, "renewDeadlineMs");
    auto retry = Millis(*tm, "retryPeriodMs");
    if (lease && renew && retry) {
      d.timings = Timings{*lease, *renew, *retry};
      // Optional: an older sidecar does not send it; zero then means "renews every retry-period".
      if (auto every = Millis(*tm, "renewIntervalMs")) d.timings->renew_interval = *every;
    }
  }
  d.reason = String(doc, "reason");
  return d;
}

}  // namespace leasehold::contract
