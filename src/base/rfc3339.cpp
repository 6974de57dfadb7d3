#include "base/rfc3339.h"

#include <algorithm>
#include <chrono>

#include "base/text.h"

namespace leasehold {
namespace {

constexpr int64_t kMicrosPerSecond = 1000000;
constexpr int64_t kMicrosPerDay = 86400 * kMicrosPerSecond;

int64_t FloorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  if (a % b != 0 && ((a < 0) != (b < 0))) --q;
  return q;
}

// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil). Our own
// arithmetic instead of timegm: no locale, no TZ environment, no 32-bit time_t.
constexpr int64_t DaysFromCivil(int64_t y, int64_t m, int64_t d) {
  y -= m <= 2 ? 1 : 0;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;                                    // [0, 399]
  const int64_t doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;  // [0, 365]
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;            // [0, 146096]
  return era * 146097 + doe - 719468;
}

struct Civil {
  int64_t year;
  int64_t month;
  int64_t day;
};

constexpr Civil CivilFromDays(int64_t z) {
  z += 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const int64_t doe = z - era * 146097;
  const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const int64_t mp = (5 * doy + 2) / 153;
  const int64_t d = doy - (153 * mp + 2) / 5 + 1;
  const int64_t m = mp < 10 ? mp + 3 : mp - 9;
  return {yoe + era * 400 + (m <= 2 ? 1 : 0), m, d};
}

static_assert(DaysFromCivil(1970, 1, 1) == 0);
static_assert(DaysFromCivil(2000, 3, 1) == 11017);
static_assert(CivilFromDays(11017).year == 2000 && CivilFromDays(11017).month == 3);

constexpr UnixMicros kMinRfc3339Micros = DaysFromCivil(0, 1, 1) * kMicrosPerDay;
constexpr UnixMicros kMaxRfc3339Micros = DaysFromCivil(10000, 1, 1) * kMicrosPerDay - 1;
static_assert(DaysFromCivil(1, 1, 1) * kMicrosPerDay == kGoZeroTimeMicros);

bool IsLeapYear(int64_t y) { return y % 4 == 0 && (y % 100 != 0 || y % 400 == 0); }

int64_t DaysInMonth(int64_t y, int64_t m) {
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return m == 2 && IsLeapYear(y) ? 29 : kDays[m - 1];
}

Status BadTime(std::string_view text, const char* why) {
  return Status(Code::kMalformed, "bad RFC 3339 time \"" + Excerpt(text) + "\": " + why);
}

// Appends `v` (0 <= v < 10^width) as exactly `width` decimal digits.
void AppendDigits(int64_t v, int width, std::string& out) {
  char digits[8];
  for (int i = width - 1; i >= 0; --i) {
    digits[i] = static_cast<char>('0' + v % 10);
    v /= 10;
  }
  out.append(digits, static_cast<size_t>(width));
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// Reads exactly `n` digits at text[*pos].
bool ReadDigits(std::string_view text, size_t* pos, size_t n, int64_t* out) {
  if (text.size() < *pos + n) return false;
  int64_t v = 0;
  for (size_t i = 0; i < n; ++i) {
    const char c = text[*pos + i];
    if (!IsDigit(c)) return false;
    v = v * 10 + (c - '0');
  }
  *pos += n;
  *out = v;
  return true;
}

bool Expect(std::string_view text, size_t* pos, char c) {
  if (*pos >= text.size() || text[*pos] != c) return false;
  ++*pos;
  return true;
}

}  // namespace

std::optional<SysTime> ToSysTime(UnixMicros t) {
  using std::chrono::microseconds;
  constexpr int64_t kMin =
      std::chrono::duration_cast<microseconds>(SysTime::min().time_since_epoch()).count();
  constexpr int64_t kMax =
      std::chrono::duration_cast<microseconds>(SysTime::max().time_since_epoch()).count();
  if (t < kMin || t > kMax) return std::nullopt;
  return SysTime(std::chrono::duration_cast<SysTime::duration>(microseconds(t)));
}

UnixMicros ToUnixMicros(SysTime t) {
  return std::chrono::floor<std::chrono::microseconds>(t.time_since_epoch()).count();
}

namespace {

// "YYYY-MM-DDTHH:MM:SS[.f]Z" with `digits` (0, 3 or 6) fraction digits, truncated.
std::string Format(UnixMicros t, int digits) {
  t = std::clamp(t, kMinRfc3339Micros, kMaxRfc3339Micros);
  const int64_t days = FloorDiv(t, kMicrosPerDay);
  const int64_t in_day = t - days * kMicrosPerDay;
  const int64_t secs = in_day / kMicrosPerSecond;
  const Civil c = CivilFromDays(days);
  std::string out;
  out.reserve(27);
  AppendDigits(c.year, 4, out);
  out.push_back('-');
  AppendDigits(c.month, 2, out);
  out.push_back('-');
  AppendDigits(c.day, 2, out);
  out.push_back('T');
  AppendDigits(secs / 3600, 2, out);
  out.push_back(':');
  AppendDigits(secs / 60 % 60, 2, out);
  out.push_back(':');
  AppendDigits(secs % 60, 2, out);
  if (digits > 0) {
    out.push_back('.');
    int64_t fraction = in_day % kMicrosPerSecond;
    for (int d = 6; d > digits; --d) fraction /= 10;
    AppendDigits(fraction, digits, out);
  }
  out.push_back('Z');
  return out;
}

}  // namespace

std::string FormatUnixMicros(UnixMicros t, bool with_fraction) {
  return Format(t, with_fraction ? 6 : 0);
}

std::string FormatMicroTime(SysTime t) { return FormatUnixMicros(ToUnixMicros(t), true); }

std::string FormatRfc3339Seconds(SysTime t) { return FormatUnixMicros(ToUnixMicros(t), false); }

std::string FormatRfc3339Millis(SysTime t) { return Format(ToUnixMicros(t), 3); }

Result<UnixMicros> ParseRfc3339Micros(std::string_view text) {
  size_t pos = 0;
  int64_t year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
  if (!ReadDigits(text, &pos, 4, &year) || !Expect(text, &pos, '-') ||
      !ReadDigits(text, &pos, 2, &month) || !Expect(text, &pos, '-') ||
      !ReadDigits(text, &pos, 2, &day) || !Expect(text, &pos, 'T') ||
      !ReadDigits(text, &pos, 2, &hour) || !Expect(text, &pos, ':') ||
      !ReadDigits(text, &pos, 2, &minute) || !Expect(text, &pos, ':') ||
      !ReadDigits(text, &pos, 2, &second)) {
    return BadTime(text, "want YYYY-MM-DDTHH:MM:SS");
  }
  if (month < 1 || month > 12) return BadTime(text, "month out of range");
  if (day < 1 || day > DaysInMonth(year, month)) return BadTime(text, "day out of range");
  if (hour > 23) return BadTime(text, "hour out of range");
  if (minute > 59) return BadTime(text, "minute out of range");
  if (second > 59) return BadTime(text, "second out of range");

  int64_t micros = 0;
  if (pos < text.size() && text[pos] == '.') {
    ++pos;
    const size_t first = pos;
    int64_t scale = 100000;
    while (pos < text.size() && IsDigit(text[pos])) {
      micros += (text[pos] - '0') * scale;
      scale /= 10;
      ++pos;
    }
    if (pos == first) return BadTime(text, "empty fraction");
  }

  int64_t offset_seconds = 0;
  if (pos < text.size() && text[pos] == 'Z') {
    ++pos;
  } else if (pos < text.size() && (text[pos] == '+' || text[pos] == '-')) {
    const int64_t sign = text[pos] == '-' ? -1 : 1;
    ++pos;
    int64_t oh, om;
    if (!ReadDigits(text, &pos, 2, &oh) || !Expect(text, &pos, ':') ||
        !ReadDigits(text, &pos, 2, &om)) {
      return BadTime(text, "want Z or ±hh:mm");
    }
    if (oh > 23 || om > 59) return BadTime(text, "offset out of range");
    offset_seconds = sign * (oh * 3600 + om * 60);
  } else {
    return BadTime(text, "want Z or ±hh:mm");
  }
  if (pos != text.size()) return BadTime(text, "trailing characters");

  const int64_t seconds =
      DaysFromCivil(year, month, day) * 86400 + hour * 3600 + minute * 60 + second - offset_seconds;
  return seconds * kMicrosPerSecond + micros;
}

Result<SysTime> ParseRfc3339(std::string_view text) {
  auto micros = ParseRfc3339Micros(text);
  if (!micros.ok()) return micros.status();
  auto t = ToSysTime(*micros);
  if (!t) return BadTime(text, "out of the representable range (years 1678-2261)");
  return *t;
}

std::optional<SysTime> ParseTimeLenient(std::string_view text) {
  constexpr size_t kDateTime = 19;  // "YYYY-MM-DDTHH:MM:SS"
  constexpr size_t kMaxText = 64;
  if (text.size() < kDateTime || text.size() > kMaxText) return std::nullopt;
  std::string t(text);
  if (t[10] == ' ' || t[10] == 't') t[10] = 'T';
  if (t.back() == 'z') t.back() = 'Z';
  // No zone: after the seconds, at most a fraction.
  size_t i = kDateTime;
  if (i < t.size() && t[i] == '.') {
    ++i;
    while (i < t.size() && IsDigit(t[i])) ++i;
  }
  if (i == t.size()) t += 'Z';
  Result<SysTime> parsed = ParseRfc3339(t);
  if (!parsed.ok()) return std::nullopt;
  return *parsed;
}

}  // namespace leasehold
