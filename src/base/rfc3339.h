// The one calendar of the code base: RFC 3339 timestamps as the Kubernetes API (metav1.Time,
// metav1.MicroTime) and the local API write them, and the parser for what the API sends back.
// Our own arithmetic (H. Hinnant's civil-date algorithms) instead of timegm/strftime: no locale,
// no TZ environment, no 32-bit time_t.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/clock.h"
#include "base/status.h"

namespace leasehold {

// Microseconds since 1970-01-01T00:00:00Z. Spans every RFC 3339 year (0000-9999), which SysTime
// (nanoseconds in 64 bits: years 1678-2261) cannot.
using UnixMicros = int64_t;

// 0001-01-01T00:00:00Z, Go's zero time.Time. Go writes it as null and treats it as "no time".
inline constexpr UnixMicros kGoZeroTimeMicros = -62135596800LL * 1000000;

// The instant as SysTime; nullopt outside SysTime's years (1678-2261).
std::optional<SysTime> ToSysTime(UnixMicros t);

// `t` floored to the microsecond.
UnixMicros ToUnixMicros(SysTime t);

// "YYYY-MM-DDTHH:MM:SS.ffffffZ" (with_fraction) or "YYYY-MM-DDTHH:MM:SSZ", in UTC. Sub-unit digits
// are dropped, never rounded, so a written time is never ahead of the clock it was read from.
// Years outside 0000-9999 cannot be written in RFC 3339; they are clamped to that range.
std::string FormatUnixMicros(UnixMicros t, bool with_fraction);

// metav1.MicroTime, as the Lease API stores acquireTime/renewTime: exactly six fraction digits.
std::string FormatMicroTime(SysTime t);

// metav1.Time, as annotation records and Events store times: whole seconds.
std::string FormatRfc3339Seconds(SysTime t);

// Exactly three fraction digits, e.g. "2026-01-02T03:04:05.123Z": the local API's validUntil and
// renewTime. Truncated, never rounded up, so a promise is never later than the instant it names.
std::string FormatRfc3339Millis(SysTime t);

// Parses "YYYY-MM-DDTHH:MM:SS[.f…](Z|±hh:mm)": two-digit fields, an optional fraction of any
// length (digits past the sixth are dropped), uppercase T and Z. Anything else, and any
// out-of-range field (month 13, Feb 30, second 60, offset hour 24), is kMalformed.
Result<UnixMicros> ParseRfc3339Micros(std::string_view text);

// As above, then kMalformed when the instant does not fit SysTime (years 1678 to 2261 only).
Result<SysTime> ParseRfc3339(std::string_view text);

// For timestamps that are informational only (never an expiry decision): RFC 3339 as above, or
// with a space or a lowercase 't' between date and time, a lowercase 'z', or no zone at all, which
// reads as UTC (Python's str(datetime) of a naive local time, as the Python kubernetes client's
// ConfigMapLock writes it, carries none; the true zone is unknowable). nullopt for anything else.
std::optional<SysTime> ParseTimeLenient(std::string_view text);

}  // namespace leasehold
