// What the gate reads from the sidecar: the /leader JSON (also the data of every watch event)
// and the Server-Sent Events framing of GET /leader/watch. Pure: bytes in, values out.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/clock.h"
#include "base/status.h"
#include "gate/core.h"

namespace leasehold::gate {

// "2026-01-02T03:04:05.123Z" (any number of fractional digits, or none; UTC "Z" only, as the
// sidecar writes it). Invalid otherwise.
Result<SysTime> ParseRfc3339Utc(std::string_view text);

// The sidecar's timings, from GET /leader's "timings" object (absent from older sidecars and
// from watch events).
struct SidecarTimings {
  Duration lease_duration{};
  Duration renew_deadline{};
  Duration retry_period{};
  bool operator==(const SidecarTimings& o) const {
    return lease_duration == o.lease_duration && renew_deadline == o.renew_deadline &&
           retry_period == o.retry_period;
  }
  bool operator!=(const SidecarTimings& o) const { return !(*this == o); }
};

struct ParsedLeader {
  LeaderView view;
  std::optional<SidecarTimings> timings;
};

// One /leader JSON object. Invalid when it is not JSON or isLeader is missing; a validUntil
// that does not parse counts as absent (so a "yes" without it is no yes); a termReliable that is
// absent or not a bool counts as false.
Result<ParsedLeader> ParseLeaderJson(std::string_view json);

// Incremental text/event-stream parser (the subset the sidecar writes: "event:", "data:",
// comments, blank-line dispatch; CR LF or LF). Bytes go in as they arrive; complete events
// come out.
class SseParser {
 public:
  struct Event {
    std::string type;  // "message" when no "event:" line came
    std::string data;
  };
  // Appends bytes; returns the events they completed. A line longer than kMaxLine is an error
  // (the stream is then treated as lost).
  Result<std::vector<Event>> Feed(std::string_view bytes);
  static constexpr size_t kMaxLine = 64 * 1024;

 private:
  std::string line_;
  std::string type_;
  std::string data_;
  bool has_data_ = false;
};

}  // namespace leasehold::gate
