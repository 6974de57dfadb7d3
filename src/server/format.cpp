#include "server/format.h"

#include <time.h>

#include <chrono>
#include <cstdint>
#include <cstdio>

namespace leasehold::server {

std::string FormatRfc3339Millis(SysTime t) {
  const int64_t ms = std::chrono::floor<std::chrono::milliseconds>(t.time_since_epoch()).count();
  // Floor division, so instants before 1970 still print a non-negative millisecond part.
  int64_t secs = ms / 1000;
  int64_t frac = ms % 1000;
  if (frac < 0) {
    frac += 1000;
    secs -= 1;
  }
  const time_t tt = static_cast<time_t>(secs);
  tm utc{};
  gmtime_r(&tt, &utc);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", utc.tm_year + 1900,
                utc.tm_mon + 1, utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec,
                static_cast<int>(frac));
  return buf;
}

std::string Quote(std::string_view s) {
  std::string out = "\"";
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += ch;
    } else if (c < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else {
      out += ch;
    }
  }
  out += '"';
  return out;
}

}  // namespace leasehold::server
