#include "gate/sidecar_json.h"

#include <rapidjson/document.h>
#include <time.h>

#include <cctype>

namespace leasehold::gate {
namespace {

bool Digits(std::string_view s, size_t pos, size_t n, int* out) {
  if (pos + n > s.size()) return false;
  int v = 0;
  for (size_t i = pos; i < pos + n; ++i) {
    if (!std::isdigit(static_cast<unsigned char>(s[i]))) return false;
    v = v * 10 + (s[i] - '0');
  }
  *out = v;
  return true;
}

std::optional<Duration> Millis(const rapidjson::Value& obj, const char* key) {
  auto it = obj.FindMember(key);
  if (it == obj.MemberEnd() || !it->value.IsInt64() || it->value.GetInt64() < 0) {
    return std::nullopt;
  }
  return std::chrono::milliseconds(it->value.GetInt64());
}

}  // namespace

Result<SysTime> ParseRfc3339Utc(std::string_view s) {
  int y, mo, d, h, mi, sec;
  const auto bad = [&] { return Status(Code::kInvalid, "not an RFC 3339 UTC time"); };
  if (!Digits(s, 0, 4, &y) || s.size() < 20 || s[4] != '-' || !Digits(s, 5, 2, &mo) ||
      s[7] != '-' || !Digits(s, 8, 2, &d) || (s[10] != 'T' && s[10] != 't') ||
      !Digits(s, 11, 2, &h) || s[13] != ':' || !Digits(s, 14, 2, &mi) || s[16] != ':' ||
      !Digits(s, 17, 2, &sec)) {
    return bad();
  }
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60) return bad();
  size_t i = 19;
  int64_t nanos = 0;
  if (i < s.size() && s[i] == '.') {
    ++i;
    int64_t scale = 100000000;
    const size_t start = i;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) {
      nanos += (s[i] - '0') * scale;  // digits beyond nanoseconds are dropped (scale 0)
      scale /= 10;
      ++i;
    }
    if (i == start) return bad();
  }
  if (i + 1 != s.size() || (s[i] != 'Z' && s[i] != 'z')) return bad();
  tm t{};
  t.tm_year = y - 1900;
  t.tm_mon = mo - 1;
  t.tm_mday = d;
  t.tm_hour = h;
  t.tm_min = mi;
  t.tm_sec = sec;
  const time_t secs = timegm(&t);
  return SysTime(std::chrono::duration_cast<SysTime::duration>(std::chrono::seconds(secs) +
                                                               std::chrono::nanoseconds(nanos)));
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
