// Log lines on stderr through spdlog's default logger, which every library logs to.
#pragma once

#include <string>
#include <string_view>

#include "app/flags.h"
#include "base/clock.h"

namespace leasehold::app {

// Replaces spdlog's default logger with one writing to stderr:
//   text: "2026-01-02T03:04:05.123Z info message"  (UTC)
//   json: {"ts":"2026-01-02T03:04:05.123Z","level":"info","msg":"message"}  (one per line)
// In both, the message is passed through EscapeForLog (base/text.h) by the formatter itself, so
// every line is one line of valid UTF-8 whatever a caller logs: control characters, backslashes
// and invalid UTF-8 appear as \xNN.
void SetupLogging(LogFormat format, LogLevel level);

// One JSON log line, newline included, with `msg` escaped by EscapeForLog. `level` is one of
// trace, debug, info, warn, error, critical.
std::string JsonLogLine(SysTime ts, std::string_view level, std::string_view msg);

}  // namespace leasehold::app
