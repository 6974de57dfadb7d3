#include "base/duration.h"

#include <cstdint>
#include <limits>

#include "base/text.h"

namespace leasehold {
namespace {

constexpr uint64_t kMax = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// Nanoseconds per unit; 0 when unknown.
uint64_t UnitNanos(std::string_view u) {
  if (u == "ns") return 1;
  if (u == "us" || u == "\xc2\xb5s" /* µs, U+00B5 */ || u == "\xce\xbcs" /* μs, U+03BC */) {
    return 1000;
  }
  if (u == "ms") return 1000ULL * 1000;
  if (u == "s") return 1000ULL * 1000 * 1000;
  if (u == "m") return 60ULL * 1000 * 1000 * 1000;
  if (u == "h") return 3600ULL * 1000 * 1000 * 1000;
  return 0;
}

Status Error(std::string_view text, const char* what) {
  return Status(Code::kBadConfig, Quote(text) + " " + what);
}

}  // namespace

Result<Duration> ParseGoDuration(std::string_view text) {
  std::string_view s = text;
  bool negative = false;
  if (!s.empty() && (s.front() == '-' || s.front() == '+')) {
    negative = s.front() == '-';
    s.remove_prefix(1);
  }
  if (s == "0") return Duration::zero();
  if (s.empty()) return Error(text, "is not a duration");

  uint64_t total = 0;
  while (!s.empty()) {
    if (!(s.front() == '.' || IsDigit(s.front()))) return Error(text, "is not a duration");
    // Whole part; overflow is checked digit by digit.
    uint64_t whole = 0;
    size_t i = 0;
    for (; i < s.size() && IsDigit(s[i]); ++i) {
      const uint64_t digit = static_cast<uint64_t>(s[i] - '0');
      if (whole > (kMax - digit) / 10) return Error(text, "is too large");
      whole = whole * 10 + digit;
    }
    const bool pre = i > 0;
    s.remove_prefix(i);
    // Fraction: as Go, digits beyond what fits are ignored (they are below a nanosecond).
    uint64_t frac = 0;
    uint64_t scale = 1;
    bool post = false;
    if (!s.empty() && s.front() == '.') {
      s.remove_prefix(1);
      size_t j = 0;
      bool overflow = false;
      for (; j < s.size() && IsDigit(s[j]); ++j) {
        if (overflow) continue;
        if (frac > (kMax - 9) / 10 || scale > kMax / 10) {
          overflow = true;
          continue;
        }
        frac = frac * 10 + static_cast<uint64_t>(s[j] - '0');
        scale *= 10;
      }
      post = j > 0;
      s.remove_prefix(j);
    }
    if (!pre && !post) return Error(text, "is not a duration");
    size_t k = 0;
    while (k < s.size() && s[k] != '.' && !IsDigit(s[k])) ++k;
    if (k == 0) return Error(text, "has no unit");
    const uint64_t unit = UnitNanos(s.substr(0, k));
    if (unit == 0) return Error(text, "is not a duration");
    s.remove_prefix(k);

    if (whole > kMax / unit) return Error(text, "is too large");
    uint64_t v = whole * unit;
    if (frac > 0) {
      v += static_cast<uint64_t>(static_cast<double>(frac) *
                                 (static_cast<double>(unit) / static_cast<double>(scale)));
      if (v > kMax) return Error(text, "is too large");
    }
    if (v > kMax - total) return Error(text, "is too large");
    total += v;
  }
  if (negative && total > 0) return Error(text, "is negative");
  return Duration(static_cast<int64_t>(total));
}

namespace {

// `v` in units of 10^-digits, printed with the fraction's trailing zeros removed.
std::string WithFraction(uint64_t v, int digits) {
  uint64_t pow = 1;
  for (int i = 0; i < digits; ++i) pow *= 10;
  std::string out = std::to_string(v / pow);
  uint64_t frac = v % pow;
  if (frac == 0) return out;
  std::string f = std::to_string(frac);
  f.insert(0, static_cast<size_t>(digits) - f.size(), '0');
  while (!f.empty() && f.back() == '0') f.pop_back();
  return out + "." + f;
}

}  // namespace

std::string FormatGoDuration(Duration d) {
  const int64_t ns = d.count();
  if (ns == 0) return "0s";
  const bool negative = ns < 0;
  // Two's complement: the magnitude of INT64_MIN still fits in uint64_t.
  const uint64_t u = negative ? ~static_cast<uint64_t>(ns) + 1 : static_cast<uint64_t>(ns);
  std::string out;
  if (u < 1000) {
    out = std::to_string(u) + "ns";
  } else if (u < 1000ULL * 1000) {
    out = WithFraction(u, 3) + "\xc2\xb5s";
  } else if (u < 1000ULL * 1000 * 1000) {
    out = WithFraction(u, 6) + "ms";
  } else {
    const uint64_t secs = u / 1000000000;
    const uint64_t h = secs / 3600;
    const uint64_t m = secs / 60 % 60;
    if (h > 0) out += std::to_string(h) + "h";
    if (h > 0 || m > 0) out += std::to_string(m) + "m";
    out += WithFraction(secs % 60 * 1000000000 + u % 1000000000, 9) + "s";
  }
  return negative ? "-" + out : out;
}

}  // namespace leasehold
