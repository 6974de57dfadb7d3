// Text helpers shared by the HTTP answers, the log lines and the flag error messages.
#pragma once

#include <string>
#include <string_view>

#include "base/clock.h"

namespace leasehold::server {

// RFC 3339 in UTC with exactly three fractional digits, e.g. "2026-01-02T03:04:05.123Z".
// Sub-millisecond parts are dropped (rounded toward the past), never rounded up.
std::string FormatRfc3339Millis(SysTime t);

// Double-quotes `s` for a one-line message: `"` and `\` are escaped and control bytes become
// \xNN, so a value holding a newline cannot split the message.
std::string Quote(std::string_view s);

}  // namespace leasehold::server
