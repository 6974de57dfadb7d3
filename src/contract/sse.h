// The framing of GET /leader/watch: Server-Sent Events whose data is the /leader JSON
// (contract/leader.h). The sidecar frames with EventFrame and kPing; the gate reads with
// SseParser. test/golden/sse/ pins the bytes.
//
//   event: leader
//   data: {"name":"pod-a_1a2b3c4d",...,"isLeader":true,...}
//
//   : ping
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace leasehold::contract {

// "event: leader\ndata: <json>\n\n"; `json` is on one line (EncodeLeader without pretty).
std::string EventFrame(std::string_view json);
// The comment the sidecar sends after every heartbeat of silence.
inline constexpr const char* kPing = ": ping\n\n";
// The event type of every frame.
inline constexpr const char* kLeaderEvent = "leader";

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
  static constexpr size_t kMaxLine = size_t{64} * 1024;

 private:
  std::string line_;
  std::string type_;
  std::string data_;
  bool has_data_ = false;
};

}  // namespace leasehold::contract
