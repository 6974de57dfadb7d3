// Durations in Go's time.ParseDuration syntax, as client-go users write them.
#pragma once

#include <string>
#include <string_view>

#include "base/clock.h"
#include "base/status.h"

namespace leasehold {

// A sequence of decimal numbers, each with an optional fraction and a unit: "15s", "1m30s",
// "500ms", "1h", "2.5s", ".5s", "100us", "100µs", "10ns"; units ns, us (µs, μs), ms, s, m, h.
// A leading "+" is allowed and so is a bare "0". Errors are BadConfig, with a message that
// quotes the input and says what is wrong:
//   "15x" is not a duration     (garbage, unknown unit, empty)
//   "15" has no unit            (a number without a unit, other than "0")
//   "-5s" is negative
//   "3000000h" is too large     (more than int64 nanoseconds, about 292 years)
Result<Duration> ParseGoDuration(std::string_view text);

// Go's Duration.String(): "0s", "10ns", "1.5µs", "500ms", "2.5s", "1m30s", "1h0m0s".
std::string FormatGoDuration(Duration d);

}  // namespace leasehold
