// Which route a request takes, between the listener (event_loop.cpp), which knows sockets,
// bounds and shedding only, and the pure Handle(), which answers from one snapshot:
//
//   GET /leader/watch    a watch stream from the hub (ServerOptions::watch), on the main listener
//                        only; 503 JSON with "Retry-After: 1" when the hub refuses (--max-watchers
//                        streams open, or closed)
//   HEAD /leader/watch   200 text/event-stream with no body (same condition)
//   everything else      Handle(), given a snapshot taken as a promise when AnswersLeadership()
//                        on the main listener, else peeked (see SnapshotSource); 500 JSON and the
//                        connection's last answer when that throws (out of memory, most likely)
// Without a hub, or on the probe listener, /leader/watch is Handle()'s too (503, 405 or 404).
#pragma once

#include <memory>
#include <string>

#include "base/clock.h"
#include "server/handler.h"
#include "server/http_request.h"
#include "server/watch_hub.h"

namespace leasehold::server {

// Who asked, for the decisions and the logs.
struct RequestSource {
  const std::string& listener;  // the listening endpoint's label, e.g. "127.0.0.1:4040"
  const std::string& peer;      // the peer's address and port
  // The peer address (from accept(), never from a header) is a loopback address: POST /release
  // needs it (see HttpQuery::loopback_peer).
  bool loopback = false;
};

// What the listener does with one request.
struct Routed {
  // Set when GET /leader/watch was accepted: the listener streams it, and `answer` is unused.
  std::shared_ptr<WatchHub::Client> stream;
  // The stream's framing: chunked for HTTP/1.1, close-delimited for HTTP/1.0.
  bool chunked = false;
  // Otherwise the answer, and whether the connection may stay open after it (the request's own
  // keep-alive, unless the answer failed); the listener's per-connection limit comes on top.
  HttpAnswer answer;
  bool keep_alive = true;
};

class Router {
 public:
  // `source` is asked once per request answered; `clock` and `watch` (nullptr: no streams) must
  // outlive the router. Route() is called from every listener thread at once.
  Router(SnapshotSource source, const Clock& clock, HandlerOptions options, WatchHub* watch);

  // `head` is complete and its body read and discarded.
  Routed Route(const RequestHead& head, const RequestSource& from) const;

  bool probe_only() const { return options_.probe_only; }

 private:
  bool Streams(const std::string& path) const;

  const SnapshotSource source_;
  const Clock& clock_;
  const HandlerOptions options_;
  WatchHub* const watch_;
};

}  // namespace leasehold::server
