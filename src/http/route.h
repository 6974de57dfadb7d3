// The two small interfaces the listener serves through, so that it knows no election, no route
// and no JSON: a Router says what one request gets (an answer, or a stream), and a Stream hands
// out the frames of a long-lived answer (the local API's watch stream) without ever blocking.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "base/clock.h"
#include "http/request.h"

namespace leasehold::http {

// One answer: status, Content-Type, body, and headers besides Content-Type (e.g. Allow).
struct Answer {
  int status = 200;
  std::string content_type;
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;
};

// Who asked, for the decisions and the logs.
struct Peer {
  const std::string& listener;  // the listening endpoint's label, e.g. "127.0.0.1:4040"
  const std::string& address;   // the peer's address and port
  // The peer address (from accept(), never from a header) is 127.0.0.0/8, ::1 or
  // ::ffff:127.0.0.0/104: a peer inside this pod's network namespace.
  bool loopback = false;
};

// A long-lived answer whose frames arrive from another thread. Called from the listener's
// thread only; nothing here may block.
class Stream {
 public:
  virtual ~Stream() = default;
  struct Frames {
    std::vector<std::string> frames;
    bool ended = false;  // close once these are written
  };
  // At most `max` frames, oldest first.
  virtual Frames Take(size_t max) = 0;
  // Readable when Take() has something (or the stream ended); Take() clears it.
  virtual int SignalFd() const = 0;
  // After this much silence the listener writes KeepAlive() (e.g. ": ping\n\n").
  virtual Duration Heartbeat() const = 0;
  virtual std::string KeepAlive() const = 0;
};

// What the listener does with one request.
struct Routed {
  // Set: the listener streams it (text/event-stream), and `answer` is unused.
  std::shared_ptr<Stream> stream;
  bool chunked = false;  // the stream's framing: chunked for HTTP/1.1, close-delimited for 1.0
  // Otherwise the answer, and whether the connection may stay open after it.
  Answer answer;
  bool keep_alive = true;
};

class Router {
 public:
  virtual ~Router() = default;
  // `head` is complete and its body read and discarded. Called from every listener thread at
  // once.
  virtual Routed Serve(const RequestHead& head, const Peer& from) const = 0;
};

}  // namespace leasehold::http
