#include "gate/sidecar_json.h"

#include <rapidjson/document.h>

#include "base/rfc3339.h"

namespace leasehold::gate {
namespace {

std::optional<Duration> Millis(const rapidjson::Value& obj, const char* key) {
  auto it = obj.FindMember(key);
  if (it == obj.MemberEnd() || !it->value.IsInt64() || it->value.GetInt64() < 0) {
    return std::nullopt;
  }
  return std::chrono::milliseconds(it->value.GetInt64());
}

}  // namespace

Result<SysTime> ParseRfc3339Utc(std::string_view s) {
  // The sidecar always writes UTC; an offset means the answer is not the sidecar's.
  if (s.empty() || s.back() != 'Z') return Status(Code::kInvalid, "not an RFC 3339 UTC time");
  return ParseRfc3339(s);
}

Result<ParsedLeader> ParseLeaderJson(std::string_view json) {
  rapidjson::Document doc;
  doc.Parse(json.data(), json.size());
  if (doc.HasParseError() || !doc.IsObject()) {
    return Status(Code::kInvalid, "the sidecar's answer is not a JSON object");
  }
  auto leader = doc.FindMember("isLeader");
  if (leader == doc.MemberEnd() || !leader->value.IsBool()) {
    return Status(Code::kInvalid, "the sidecar's answer has no isLeader");
  }
  ParsedLeader p;
  p.view.is_leader = leader->value.GetBool();
  if (auto term = doc.FindMember("term"); term != doc.MemberEnd() && term->value.IsInt64()) {
    p.view.term = term->value.GetInt64();
  }
  if (auto tr = doc.FindMember("termReliable"); tr != doc.MemberEnd() && tr->value.IsBool()) {
    p.view.term_reliable = tr->value.GetBool();
  }
  if (auto vu = doc.FindMember("validUntil"); vu != doc.MemberEnd() && vu->value.IsString()) {
    auto t = ParseRfc3339Utc(std::string_view(vu->value.GetString(), vu->value.GetStringLength()));
    if (t.ok()) p.view.valid_until = *t;
  }
  if (auto tm = doc.FindMember("timings"); tm != doc.MemberEnd() && tm->value.IsObject()) {
    auto lease = Millis(tm->value, "leaseDurationMs");
    auto renew = Millis(tm->value, "renewDeadlineMs");
    auto retry = Millis(tm->value, "retryPeriodMs");
    if (lease && renew && retry) p.timings = SidecarTimings{*lease, *renew, *retry};
  }
  return p;
}

Result<std::vector<SseParser::Event>> SseParser::Feed(std::string_view bytes) {
  std::vector<Event> out;
  for (char c : bytes) {
    if (c != '\n') {
      if (line_.size() >= kMaxLine) {
        return Status(Code::kInvalid, "a watch stream line is longer than 64 KiB");
      }
      line_ += c;
      continue;
    }
    if (!line_.empty() && line_.back() == '\r') line_.pop_back();
    if (line_.empty()) {
      if (has_data_) out.push_back(Event{type_.empty() ? "message" : type_, data_});
      type_.clear();
      data_.clear();
      has_data_ = false;
    } else if (line_[0] != ':') {
      const size_t colon = line_.find(':');
      std::string field = line_.substr(0, colon);
      std::string value = colon == std::string::npos ? "" : line_.substr(colon + 1);
      if (!value.empty() && value[0] == ' ') value.erase(0, 1);
      if (field == "event") {
        type_ = value;
      } else if (field == "data") {
        if (has_data_) data_ += '\n';
        data_ += value;
        has_data_ = true;
      }
    }
    line_.clear();
  }
  return out;
}

}  // namespace leasehold::gate
