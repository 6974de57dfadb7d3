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
#include "http/request.h"
#include "http/route.h"
#include "localapi/handler.h"
#include "localapi/watch_hub.h"

namespace leasehold::localapi {

using RequestSource = http::Peer;
using Routed = http::Routed;

class Router final : public http::Router {
 public:
  // `source` is asked once per request answered; `clock` and `watch` (nullptr: no streams) must
  // outlive the router. Route() is called from every listener thread at once.
  Router(SnapshotSource source, const Clock& clock, HandlerOptions options, WatchHub* watch);

  // `head` is complete and its body read and discarded.
  Routed Route(const http::RequestHead& head, const http::Peer& from) const override;

  bool probe_only() const { return options_.probe_only; }

 private:
  bool Streams(const std::string& path) const;

  const SnapshotSource source_;
  const Clock& clock_;
  const HandlerOptions options_;
  WatchHub* const watch_;
};

}  // namespace leasehold::localapi
